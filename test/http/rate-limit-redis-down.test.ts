// Issue 47, scope 1: with Redis unreachable the rate limits move to per-process counters at once (a circuit
// breaker): no request waits for Redis, the limits still hold in each process, `/readyz` (200) names the
// degraded dependency, `/metrics` shows it. The Redis here is a closed port, so this runs on both passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createKey } from '../../src/admin/keys.js';
import { RedisStore, type StoreLog } from '../../src/plugins/rate-limit.js';
import { client, DIALECT, newTenant, testApp } from '../helpers/app.js';

const DOWN = 'redis://127.0.0.1:1';
const t = await testApp({ REDIS_URL: DOWN });

function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line ? Number(line.slice(series.length + 1)) : NaN;
}

test('Redis down: every authenticated request answers at once, with its rate-limit headers, and a key limited to 5 gets 429 on its 6th call', async () => {
  const { tenantId, refs, api } = await newTenant(t);
  const k = await createKey(t.database.db, { tenantId, name: 'five', scopes: ['*'], userId: refs.ana, rateLimit: 5 });
  const five = client(t.app, k.key);
  // One call first, so that what is timed below is the rate limit's part, not the route's first use.
  assert.equal((await api.get('/tags')).status, 200);
  const statuses: number[] = [];
  const remaining: string[] = [];
  for (let i = 0; i < 6; i++) {
    const started = performance.now();
    const r = await five.get('/tags');
    const ms = performance.now() - started;
    assert.ok(ms < 100, `call ${i + 1} took ${ms.toFixed(0)} ms (the Redis command timeout was paid)`);
    statuses.push(r.status);
    remaining.push(String(r.headers['x-ratelimit-remaining']));
    assert.equal(r.headers['x-ratelimit-limit'], '5');
    assert.match(String(r.headers['x-ratelimit-reset']), /^\d+$/);
  }
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
  assert.deepEqual(remaining, ['4', '3', '2', '1', '0', '0']);
  // A steady run of reads and writes: none pays a wait on the dead connection.
  const times: number[] = [];
  for (let i = 0; i < 40; i++) {
    const started = performance.now();
    const r = i % 2 === 0 ? await api.get('/tags') : await api.post('/tags', { name: `t${i}` });
    times.push(performance.now() - started);
    assert.ok(r.status === 200 || r.status === 201, String(r.status));
  }
  // (A write's own cost varies on a busy machine: the median and the worst case tell the wait apart.)
  times.sort((a, b) => a - b);
  assert.ok(times[20] < 20, `median ${times[20].toFixed(1)} ms`);
  assert.ok(times[39] < 500, `slowest ${times[39].toFixed(0)} ms`);
});

test('Redis down: /readyz is 200 and says degraded in its body; /metrics shows the gauge at 1 and the move counted', async () => {
  const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200);
  assert.deepEqual(ready.json(), { status: 'degraded', degraded: ['redis'] });
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.equal(sample(text, 'crm_rate_limit_store_degraded'), 1);
  assert.ok(
    sample(text, 'crm_rate_limit_store_transitions_total{to="per_process"}') >= 1,
    text
      .split('\n')
      .filter((l) => l.includes('rate_limit_store'))
      .join('\n'),
  );
});

test('the breaker logs once when it opens, however many requests and reconnection attempts follow', async () => {
  const lines: string[] = [];
  const log: StoreLog = { warn: (_o, msg) => lines.push(`warn ${msg}`), info: (_o, msg) => lines.push(`info ${msg}`) };
  const store = new RedisStore(DOWN, log);
  try {
    for (let i = 0; i < 50; i++) assert.equal((await store.hit('b', 60_000)).count, i + 1);
    await new Promise((r) => setTimeout(r, 1500)); // several reconnection attempts fail meanwhile
    for (let i = 0; i < 50; i++) await store.hit('b', 60_000);
    assert.equal(store.degraded, true);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0], /^warn Redis unreachable/);
  } finally {
    await store.close();
  }
});

test(
  'with Redis up, /readyz says ok with nothing degraded and the gauge is 0',
  { skip: DIALECT === 'postgres' && process.env.REDIS_URL ? false : 'needs the PostgreSQL + Redis pass (REDIS_URL)' },
  async () => {
    const up = await testApp();
    const { api } = await newTenant(up);
    assert.equal((await api.get('/tags')).status, 200);
    const ready = await up.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: 'ok' });
    assert.equal(up.app.rateLimitStore.degraded, false);
    assert.equal(sample((await up.app.inject({ method: 'GET', url: '/metrics' })).body, 'crm_rate_limit_store_degraded'), 0);
  },
);
