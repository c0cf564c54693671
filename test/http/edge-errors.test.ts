// Errors Fastify or Node raise before any route runs still answer the contract's `{ error, message }`
// with an X-Request-Id (CONTRACT B.2): undecodable URLs, over-long ids, and malformed or oversized
// request heads that Node rejects before Fastify sees a request (raw sockets against a listening app).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { newTenant, testApp } from '../helpers/app.js';

const t = await testApp();
await t.app.listen({ port: 0, host: '127.0.0.1' });
const port = (t.app.server.address() as net.AddressInfo).port;
after(() => t.app.server.closeAllConnections());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Sends raw bytes and reads everything until the server closes: status, headers, JSON body. */
function raw(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: any; text: string }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    sock.on('data', (d) => (buf = Buffer.concat([buf, d])));
    sock.on('error', (err) => (buf.length ? finish() : reject(err)));
    sock.on('end', finish);
    sock.on('close', finish);
    let done = false;
    function finish() {
      if (done) return;
      done = true;
      const text = buf.toString();
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no response head: ${JSON.stringify(text.slice(0, 200))}`));
      const lines = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      const bodyText = text.slice(end + 4);
      let body: any;
      try {
        body = JSON.parse(bodyText);
      } catch {
        body = bodyText;
      }
      resolve({ status: Number(lines[0].split(' ')[1]), headers, body, text });
    }
    sock.write(bytes);
  });
}

function assertContractError(r: { status: number; headers: Record<string, string>; body: any }, status: number, error: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(r.body).sort(), ['docUrl', 'error', 'message']);
  assert.equal(r.body.error, error);
  assert.equal(r.body.docUrl, `/docs#description/${error}`);
  assert.equal(typeof r.body.message, 'string');
  assert.ok(r.headers['x-request-id'], 'X-Request-Id header');
}

test("an undecodable URL is the contract's 404 not_found with X-Request-Id, not FST_ERR_BAD_URL", async () => {
  const { apiKeys } = await newTenant(t);
  for (const url of ['/api/v1/contacts/%E0%A4%A', '/api/v1/tags/%ZZ', '/api/v1/contacts/%E0%A4%A/activities']) {
    const r = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKeys.full } });
    assertContractError({ status: r.statusCode, headers: r.headers as Record<string, string>, body: r.json() }, 404, 'not_found');
    assert.doesNotMatch(r.body, /FST_ERR/);
  }
});

test('an over-long id (5,000 and 100,000 characters) is 404 not_found like any odd id, not 414', async () => {
  const { apiKeys } = await newTenant(t);
  for (const n of [5_000, 100_000]) {
    for (const url of [`/api/v1/contacts/${'a'.repeat(n)}`, `/api/v1/deals/${'x'.repeat(n)}/proposals`]) {
      const r = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKeys.full } });
      assertContractError({ status: r.statusCode, headers: r.headers as Record<string, string>, body: r.json() }, 404, 'not_found');
    }
  }
  // Over a real socket, a 5,000-character id fits Node's header limit and gets the same 404.
  const r = await raw(`GET /api/v1/contacts/${'a'.repeat(5_000)} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${apiKeys.full}\r\nConnection: close\r\n\r\n`);
  assertContractError(r, 404, 'not_found');
});

test("a malformed header line is 400 bad_request in the contract's format, with X-Request-Id and Connection: close", async () => {
  for (const bytes of [
    'GET /healthz HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n',
    'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n',
    'GET /he lthz HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
  ]) {
    const r = await raw(bytes);
    assertContractError(r, 400, 'bad_request');
    assert.match(r.headers['x-request-id'], UUID);
    assert.equal(r.headers.connection?.toLowerCase(), 'close');
  }
});

test("headers over Node's limit are 431 request_header_fields_too_large in the contract's format", async () => {
  for (const bytes of [
    `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    `GET /api/v1/contacts/${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
  ]) {
    const r = await raw(bytes);
    assertContractError(r, 431, 'request_header_fields_too_large');
    assert.match(r.headers['x-request-id'], UUID);
    assert.equal(r.headers.connection?.toLowerCase(), 'close');
  }
  // The server is still fine afterwards.
  const ok = await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  assert.equal(ok.status, 200);
});
