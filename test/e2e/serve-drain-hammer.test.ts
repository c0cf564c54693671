// test: alone (judged by the clock around a SIGTERM; see scripts/test.mjs)
// CONTRACT A.1 at the end of the SIGTERM drain, under load: keep-alive connections busy the whole time, keep-alive
// connections left idle that send one request around the drain's end, and clients opening a new connection
// for every request. When the server stops accepting, no request whose bytes were sent before that moment is
// reset or dropped: each is answered. Requests sent later are refused (connection refused, or a closed
// connection), never reset. Raw sockets, so that the test knows when each request's bytes were written.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { cli, startServer, type RunningServer } from '../helpers/server.js';
import { sampleSetup, scratch, sleep } from './cli.helpers.js';

const servers: RunningServer[] = [];
after(async () => {
  for (const s of servers) await s.kill();
});

const DRAIN_MS = 600;
const ROUNDS = 3;
const KEYS_PER_ROUND = 4;

interface Shot {
  lane: 'busy' | 'idle' | 'fresh';
  /** When the connection it went on was asked for (the listener was open then if it connected). */
  connectStartedAt: number;
  connected: boolean;
  writtenAt?: number;
  outcome: 'answered' | 'refused' | 'reset' | 'closed' | 'timeout';
  /** The connection had answered an earlier request: the server had accepted it, beyond doubt. */
  reused?: boolean;
  status?: number;
  connectionClose?: boolean;
  error?: string;
}

/** One HTTP/1.1 connection, one request at a time, responses parsed by Content-Length. */
class Conn {
  private buf = Buffer.alloc(0);
  private waiting: ((r: { status?: number; close?: boolean; end?: 'reset' | 'closed'; error?: string }) => void) | null = null;
  private ended: { end: 'reset' | 'closed'; error?: string } | null = null;
  private answered = 0;
  usable = true;

  private constructor(
    readonly socket: net.Socket,
    readonly connectStartedAt: number,
  ) {
    socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse();
    });
    socket.on('error', (err: NodeJS.ErrnoException) =>
      this.finish({ end: err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'reset' : 'closed', error: err.code ?? err.message }),
    );
    socket.on('end', () => this.finish({ end: 'closed', error: 'EOF' }));
    socket.on('close', () => this.finish({ end: 'closed', error: 'closed' }));
  }

  static open(port: number): Promise<Conn | { refused: true; connectStartedAt: number; error: string }> {
    const connectStartedAt = Date.now();
    return new Promise((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      socket.setNoDelay(true);
      const fail = (err: NodeJS.ErrnoException) => resolve({ refused: true, connectStartedAt, error: err.code ?? err.message });
      socket.once('error', fail);
      socket.once('connect', () => {
        socket.off('error', fail);
        resolve(new Conn(socket, connectStartedAt));
      });
    });
  }

  private finish(e: { end: 'reset' | 'closed'; error?: string }) {
    this.usable = false;
    this.ended ??= e;
    const w = this.waiting;
    this.waiting = null;
    w?.(e);
  }

  private parse() {
    const head = this.buf.indexOf('\r\n\r\n');
    if (head < 0 || !this.waiting) return;
    const lines = this.buf.subarray(0, head).toString('latin1').split('\r\n');
    const headers = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers.get('content-length') ?? 0);
    if (this.buf.length < head + 4 + length) return;
    this.buf = this.buf.subarray(head + 4 + length);
    const close = headers.get('connection')?.toLowerCase() === 'close';
    if (close) this.usable = false;
    const w = this.waiting;
    this.waiting = null;
    w({ status: Number(lines[0].split(' ')[1]), close });
  }

  request(lane: Shot['lane'], raw: string): Promise<Shot> {
    const shot: Shot = { lane, connectStartedAt: this.connectStartedAt, connected: true, outcome: 'timeout', reused: this.answered > 0 };
    if (this.ended) return Promise.resolve({ ...shot, outcome: this.ended.end, error: `before write: ${this.ended.error}` });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        resolve(shot);
      }, 12_000);
      this.waiting = (r) => {
        clearTimeout(timer);
        if (r.end) resolve({ ...shot, outcome: r.end, error: r.error });
        else {
          this.answered++;
          resolve({ ...shot, outcome: 'answered', status: r.status, connectionClose: r.close });
        }
      };
      shot.writtenAt = Date.now();
      this.socket.write(raw);
    });
  }

  close() {
    this.socket.destroy();
  }
}

function rawGet(path: string, key: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${key}\r\n\r\n`;
}
function rawPost(path: string, key: string, body: unknown): string {
  const b = Buffer.from(JSON.stringify(body));
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n${b}`;
}

async function round(
  server: RunningServer,
  keys: string[],
  contactId: string,
  n: number,
): Promise<{ shots: Shot[]; signalledAt: number; exitedAt: number; code: number | null }> {
  const shots: Shot[] = [];
  const exited = new Promise<number | null>((resolve) => server.proc.once('exit', (code) => resolve(code)));
  let exitedAt = 0;
  void exited.then(() => (exitedAt = Date.now()));
  let seq = 0;
  const pick = () => {
    const i = seq++;
    const key = keys[i % keys.length];
    return i % 4 === 0
      ? rawPost('/api/v1/contacts', key, { firstName: 'Hammer', lastName: `${n}-${i}`, email: `h${n}-${i}@hammer.test` })
      : i % 4 === 1
        ? rawGet('/api/v1/contacts?pageSize=20', key)
        : rawGet(`/api/v1/contacts/${contactId}`, key);
  };
  let signalledAt = Infinity;
  const stopAt = () => signalledAt + DRAIN_MS + 1_500;

  // Keep-alive connections in constant use: a new connection when the server closes the last one.
  const busy = async () => {
    let conn: Conn | null = null;
    while (Date.now() < stopAt()) {
      if (!conn || !conn.usable) {
        conn?.close();
        const c = await Conn.open(server.port);
        if (!(c instanceof Conn)) {
          shots.push({ lane: 'busy', connectStartedAt: c.connectStartedAt, connected: false, outcome: 'refused', error: c.error });
          return;
        }
        conn = c;
      }
      shots.push(await conn.request('busy', pick()));
    }
    conn?.close();
  };
  // A new connection for every request.
  const fresh = async () => {
    while (Date.now() < stopAt()) {
      const c = await Conn.open(server.port);
      if (!(c instanceof Conn)) {
        shots.push({ lane: 'fresh', connectStartedAt: c.connectStartedAt, connected: false, outcome: 'refused', error: c.error });
        return;
      }
      shots.push(await c.request('fresh', pick()));
      c.close();
    }
  };
  // Keep-alive connections used once before the signal, then idle, each sending one request near the drain's end.
  const idle = await Promise.all(Array.from({ length: 40 }, () => Conn.open(server.port)));
  const warm = await Promise.all(idle.map((c) => (c as Conn).request('idle', rawGet('/healthz', keys[0]))));
  assert.ok(
    warm.every((s) => s.outcome === 'answered' && s.status === 200),
    JSON.stringify(warm.filter((s) => s.outcome !== 'answered')),
  );

  const loops = [...Array.from({ length: 12 }, busy), ...Array.from({ length: 6 }, fresh)];
  await sleep(200);
  signalledAt = Date.now();
  server.proc.kill('SIGTERM');
  // Spread over the last 60 ms of the drain and the 240 ms after it: some reach the server before it stops
  // accepting (answered), some after (their connection is closed, unread, or already closed when they are sent).
  const late = idle.map(async (c, i) => {
    await sleep(Math.max(0, signalledAt + DRAIN_MS - 60 + (i * 300) / idle.length - Date.now()));
    shots.push(await (c as Conn).request('idle', pick()));
    (c as Conn).close();
  });
  await Promise.all([...loops, ...late]);
  const code = await exited;
  return { shots, signalledAt, exitedAt, code };
}

test("the drain's end under load: every request sent before the server stopped accepting is answered, none is reset", { timeout: 240_000 }, async () => {
  const s = await scratch();
  // Keys of their own for each round: a round sends up to a thousand requests or so, and a key's limit is 1,000
  // a minute.
  const setup = sampleSetup();
  const refs = (n: number) => Array.from({ length: KEYS_PER_ROUND }, (_, k) => `round${n}-${k}`);
  for (let n = 0; n < ROUNDS; n++) {
    for (const ref of refs(n)) setup.apiKeys.push({ ref, name: `Hammer ${ref}`, user: 'ana', scopes: ['*'], rateLimit: 1000 });
  }
  const r = cli(['setup', 'apply', s.file('setup.json', setup)], s.env);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  let contactId = '';
  let posts = 0;
  const summary: string[] = [];

  for (let n = 0; n < ROUNDS; n++) {
    const keys = refs(n).map((ref) => r.json.apiKeys[ref] as string);
    const key = keys[0];
    const server = await startServer({ ...s.env, WORKERS: 'false', SHUTDOWN_DRAIN_MS: String(DRAIN_MS) });
    servers.push(server);
    if (!contactId) {
      const c = await fetch(`${server.url}/api/v1/contacts`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ firstName: 'Seed', lastName: 'Hammer', email: 'seed@hammer.test' }),
      });
      assert.equal(c.status, 201);
      contactId = ((await c.json()) as { id: string }).id;
    }
    const { shots, signalledAt, exitedAt, code } = await round(server, keys, contactId, n);
    assert.equal(code, 0, server.stderr());
    assert.ok(exitedAt - signalledAt < 10_000, `exited ${exitedAt - signalledAt} ms after SIGTERM`);

    // The listener was still open when the last connection that went through was asked for: every request
    // written before that moment was sent before the server stopped accepting.
    const openUntil = Math.max(...shots.filter((x) => x.connected).map((x) => x.connectStartedAt));
    const refusedFrom = Math.min(...shots.filter((x) => !x.connected).map((x) => x.connectStartedAt));
    const before = shots.filter((x) => x.writtenAt !== undefined && x.writtenAt < openUntil);
    const lost = before.filter((x) => x.outcome !== 'answered');
    const at = (x: Shot) => ({ ...x, writtenAt: (x.writtenAt ?? 0) - signalledAt, connectStartedAt: x.connectStartedAt - signalledAt });
    assert.deepEqual(lost.map(at), [], `round ${n}: ${lost.length} of ${before.length} requests sent before the server stopped accepting were not answered`);
    for (const x of before) assert.ok(x.status === 200 || x.status === 201, `round ${n}: ${JSON.stringify(at(x))}`);
    // Later requests find the connection refused, or closed: no connection the server accepted is reset. (A new
    // connection the kernel completes in the microseconds between the server's last poll and the close of its
    // listener is reset by the kernel, before a byte of it was read: its request was written after openUntil.)
    const reset = shots.filter((x) => (x.reused && x.outcome === 'reset') || x.outcome === 'timeout');
    assert.deepEqual(reset.map(at), [], `round ${n}: reset or unanswered`);
    posts += shots.filter((x) => x.outcome === 'answered' && x.status === 201).length;
    summary.push(
      `round ${n}: ${shots.length} requests, ${before.length} sent before the listener closed (${openUntil - signalledAt}–${refusedFrom - signalledAt} ms after SIGTERM), ` +
        `${shots.filter((x) => x.outcome === 'answered').length} answered, ${shots.filter((x) => x.outcome === 'refused').length} refused, ` +
        `${shots.filter((x) => x.outcome === 'closed').length} closed unanswered after it, ` +
        `${shots.filter((x) => x.outcome === 'reset').length} new connections reset at the close, exit ${exitedAt - signalledAt} ms`,
    );
  }
  // Every acknowledged POST was committed once.
  const rows = await s.db().db.selectFrom('contacts').select('email').where('email', 'like', 'h%@hammer.test').execute();
  assert.equal(rows.length, posts);
  console.log(summary.join('\n'));
});
