// Pages read as one BLOB are answered from reusable buffers (http/replies.ts replyBytes): a buffer goes back to the
// pool when its response closes, and not before. Checked here: the pool's rules, and, over real sockets, that answers
// waiting behind a client that does not read keep their bytes while other requests are answered from the pool.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import { replyBytes, reuseWhenClosed } from '../../src/http/replies.js';
import { DIALECT, newTenant, testApp } from '../helpers/app.js';

/** A response on no connection: reuseWhenClosed only listens for its 'close', which the test emits. */
const response = () => new ServerResponse(new IncomingMessage(new net.Socket()));

test('an answer buffer is lent again once its response has closed, never before, and once', () => {
  const a = replyBytes(1000);
  const resA = response();
  reuseWhenClosed(resA, a);
  const b = replyBytes(1000);
  assert.notEqual(b.buffer, a.buffer, 'its response is open: not lent again');
  resA.emit('close');
  const c = replyBytes(2000);
  assert.equal(c.buffer, a.buffer, 'its response closed: lent again');
  assert.equal(c.length, 2000);

  // Two listeners for one buffer (or a second close): it goes back once, so two answers never share it.
  const resC = response();
  reuseWhenClosed(resC, c);
  reuseWhenClosed(resC, c);
  resC.emit('close');
  resC.emit('close');
  const d = replyBytes(10);
  const e = replyBytes(10);
  assert.equal(d.buffer, c.buffer);
  assert.notEqual(e.buffer, d.buffer, 'given back once');

  // An answer too big for a reusable buffer is its own, and a buffer replyBytes did not lend is never taken.
  const big = replyBytes(200_000);
  const own = Buffer.alloc(64 * 1024);
  for (const x of [big, own]) {
    const res = response();
    reuseWhenClosed(res, x);
    res.emit('close');
  }
  const lentNow = [replyBytes(10), replyBytes(10), replyBytes(10)].map((x) => x.buffer);
  assert.ok(!lentNow.includes(big.buffer as ArrayBuffer) && !lentNow.includes(own.buffer as ArrayBuffer));
});

test(`answers waiting behind a client that does not read keep their bytes while others are answered (${DIALECT})`, async () => {
  const t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as net.AddressInfo).port;
  after(() => t.app.server.closeAllConnections());
  const { api } = await newTenant(t);
  for (let i = 0; i < 60; i++) {
    const r = await api.post('/contacts', { firstName: `Zoë ${i} ${'ë'.repeat(150)}`, lastName: `${String.fromCharCode(65 + (i % 26)).repeat(190)} ${i}` });
    assert.equal(r.status, 201);
  }
  const PAGES = 6;
  const path = (p: number) => `/api/v1/contacts?pageSize=10&page=${p}`;
  const expected = new Map<number, string>();
  for (let p = 1; p <= PAGES; p++) expected.set(p, (await api.get(path(p))).raw.body);

  // One connection asks for 120 pages at once and reads nothing: the kernel's buffers fill, the server's writes
  // wait, and its later answers wait behind them, each with its buffer.
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.pause();
  const N = 120;
  let requests = '';
  for (let i = 0; i < N; i++) requests += `GET ${path(1 + (i % PAGES))} HTTP/1.1\r\nhost: x\r\nx-api-key: ${api.key}\r\n\r\n`;
  socket.write(requests);
  await new Promise((r) => setTimeout(r, 300));

  // Meanwhile other requests are answered, with other pages, from the same pool.
  for (let i = 0; i < 200; i++) {
    const p = 1 + ((i * 5) % PAGES);
    assert.equal((await api.get(path(p))).raw.body, expected.get(p));
  }

  // Now the waiting answers are read: each must be its page, byte for byte.
  const chunks: Buffer[] = [];
  let got = Buffer.alloc(0);
  const bodies: string[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      got = Buffer.concat([got, d]);
      for (;;) {
        const end = got.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = got.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
        assert.ok(head.startsWith('HTTP/1.1 200'), head);
        if (got.length < end + 4 + length) break;
        bodies.push(got.subarray(end + 4, end + 4 + length).toString('utf8'));
        got = got.subarray(end + 4 + length);
      }
      if (bodies.length === N) resolve();
    });
    socket.resume();
  });
  socket.destroy();
  for (let i = 0; i < N; i++) assert.equal(bodies[i], expected.get(1 + (i % PAGES)), `answer ${i + 1} of the connection that did not read`);
});
