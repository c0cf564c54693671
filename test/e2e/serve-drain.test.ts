// test: alone (judged by the clock around a SIGTERM; see scripts/test.mjs)
// CONTRACT A.1, `crm serve` on SIGTERM with requests in flight over keep-alive connections: /readyz turns
// 503 at once, the server keeps accepting and answering for SHUTDOWN_DRAIN_MS, then finishes what is in
// flight and exits 0 within 10 s. No request that reached it is dropped, reset, or answered 503.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Pool } from 'undici';
import { cli, startServer, type RunningServer } from '../helpers/server.js';
import { sampleSetup, scratch, sleep } from './cli.helpers.js';

const servers: RunningServer[] = [];
after(async () => {
  for (const s of servers) await s.kill();
});

interface Outcome {
  kind: 'get' | 'post';
  status?: number;
  error?: string;
  connection?: string;
  body?: any;
}

async function call(pool: Pool, key: string, kind: 'get' | 'post', marker: string): Promise<Outcome> {
  try {
    const r =
      kind === 'get'
        ? await pool.request({ method: 'GET', path: '/api/v1/contacts?pageSize=50', headers: { 'x-api-key': key } })
        : await pool.request({
            method: 'POST',
            path: '/api/v1/contacts',
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body: JSON.stringify({ firstName: 'Drain', lastName: marker, email: `${marker}@drain.test` }),
          });
    const text = await r.body.text();
    return { kind, status: r.statusCode, connection: String(r.headers.connection ?? ''), body: text ? JSON.parse(text) : undefined };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    return { kind, error: `${e.code ?? ''} ${e.cause?.code ?? ''} ${e.message}` };
  }
}

/** GET on a fresh connection of its own (a load balancer's probe, a client arriving during the drain). */
async function fresh(url: string, path: string, key?: string): Promise<{ status: number; connection: string }> {
  const c = new Client(url);
  try {
    const r = await c.request({ method: 'GET', path, headers: key ? { 'x-api-key': key } : {} });
    await r.body.text();
    return { status: r.statusCode, connection: String(r.headers.connection ?? '') };
  } finally {
    await c.close().catch(() => {});
  }
}

test(
  'SIGTERM with 50 requests in flight on keep-alive connections: every one answered, readiness 503 during the drain, exit 0 within 10 s',
  { timeout: 180_000 },
  async () => {
    const s = await scratch();
    const r = cli(['setup', 'apply', s.file('setup.json', sampleSetup())], s.env);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const key = r.json.apiKeys.full as string;

    for (const [round, offsetMs] of [0, 5, 20, 50].entries()) {
      const server = await startServer({ ...s.env, WORKERS: 'true', SHUTDOWN_DRAIN_MS: '1000' });
      servers.push(server);
      const exited = new Promise<number | null>((resolve) => server.proc.once('exit', (code) => resolve(code)));
      if (round === 0) {
        // Enough rows that a page of 50 takes real work.
        for (let i = 0; i < 200; i++) {
          const c = await fetch(`${server.url}/api/v1/contacts`, {
            method: 'POST',
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body: JSON.stringify({ firstName: 'Seed', lastName: String(i), email: `seed${i}@drain.test` }),
          });
          assert.equal(c.status, 201);
        }
      }
      assert.equal((await fresh(server.url, '/readyz')).status, 200);

      // Fifty keep-alive connections, opened and used once before the burst, so that every request of the
      // burst is written at once and is truly in flight at the signal (with fewer connections the client
      // would queue some of them and send them later, possibly after the drain window on a loaded machine).
      const pool = new Pool(server.url, { connections: 50, pipelining: 1, keepAliveTimeout: 60_000 });
      const warm = await Promise.all(Array.from({ length: 50 }, () => pool.request({ method: 'GET', path: '/healthz' }).then((x) => x.body.text())));
      assert.equal(warm.length, 50);

      const kinds = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? 'post' : 'get') as 'get' | 'post');
      const burst = kinds.map((kind, i) => call(pool, key, kind, `r${round}-${i}`));
      await sleep(offsetMs);
      const signalled = Date.now();
      server.proc.kill('SIGTERM');

      // Readiness turns 503 at once while the server still answers on new connections.
      let ready = 200;
      for (let i = 0; i < 40 && ready !== 503; i++) {
        ready = (await fresh(server.url, '/readyz')).status;
        if (ready !== 503) await sleep(10);
      }
      assert.equal(ready, 503, 'readiness is 503 during the drain');
      assert.ok(Date.now() - signalled < 600, `readiness 503 after ${Date.now() - signalled} ms`);
      const during = await fresh(server.url, '/api/v1/contacts?pageSize=1', key);
      assert.equal(during.status, 200, 'a request sent during the drain window is answered');
      assert.equal(during.connection.toLowerCase(), 'close', 'answers during the drain close their connection');

      const outcomes = await Promise.all(burst);
      const bad = outcomes.filter((o) => o.error !== undefined || (o.kind === 'get' ? o.status !== 200 : o.status !== 201));
      assert.deepEqual(bad, [], `round ${round}: ${bad.length} of 50 lost or refused`);
      for (const o of outcomes) {
        if (o.kind === 'get') assert.equal(o.body.data.length, 50);
        else assert.match(o.body.email, /@drain\.test$/);
      }

      assert.equal(await exited, 0, server.stderr());
      assert.ok(Date.now() - signalled < 10_000, `exited ${Date.now() - signalled} ms after SIGTERM`);
      await pool.close().catch(() => {});
    }

    // Every acknowledged POST was committed, exactly once.
    const rows = await s.db().db.selectFrom('contacts').select('email').where('email', 'like', 'r%@drain.test').execute();
    assert.equal(rows.length, 4 * 17);
  },
);
