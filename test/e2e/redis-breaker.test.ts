// test: alone (a redis-server of its own, judged by the clock; see scripts/test.mjs)
// Issue 47, scope 1 (Redis half), the rate-limit store's circuit breaker against a redis-server of the
// test's own: killed, it moves to per-process counts at once; frozen (SIGSTOP, the connection stays open),
// its watchdog does the same after COMMAND_TIMEOUT_MS; back, it is shared again within 5 s and the
// in-process counts are dropped (the shared window is authoritative). Both database passes run it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RedisStore, type StoreLog } from '../../src/plugins/rate-limit.js';
import { ownRedis, type OwnRedis } from '../helpers/redis.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recordingLog(): { log: StoreLog; lines: string[] } {
  const lines: string[] = [];
  return { lines, log: { warn: (_o, msg) => lines.push(`warn ${msg}`), info: (_o, msg) => lines.push(`info ${msg}`) } };
}

/** Hits `bucket` and times the call. */
async function timedHit(store: RedisStore, bucket: string): Promise<{ count: number; ms: number }> {
  const started = performance.now();
  const { count } = await store.hit(bucket, 60_000);
  return { count, ms: performance.now() - started };
}

async function until(what: string, ok: () => boolean, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!ok()) {
    if (performance.now() - started > timeoutMs) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await sleep(10);
  }
  return performance.now() - started;
}

async function sharedStore(redis: OwnRedis, log: StoreLog): Promise<RedisStore> {
  const store = new RedisStore(redis.url, log);
  assert.equal((await store.hit('warm', 60_000)).count, 1);
  assert.equal(store.degraded, false);
  return store;
}

test('killed: per-process at once, no call waits; restarted: shared again within 5 s, the in-process counts dropped', async () => {
  const redis = await ownRedis();
  await redis.start();
  const { log, lines } = recordingLog();
  const store = await sharedStore(redis, log);
  try {
    for (let i = 1; i <= 3; i++) assert.equal((await store.hit('k', 60_000)).count, i);
    await redis.kill();
    const opened = await until('per-process after the kill', () => store.degraded, 1000);
    const down = [];
    for (let i = 0; i < 50; i++) down.push(await timedHit(store, 'k'));
    assert.deepEqual(
      down.map((d) => d.count),
      Array.from({ length: 50 }, (_, i) => i + 1),
      'counted in process',
    );
    assert.ok(Math.max(...down.map((d) => d.ms)) < 50, `a call waited ${Math.max(...down.map((d) => d.ms)).toFixed(1)} ms`);
    await redis.start();
    const recovered = await until('shared after the restart', () => !store.degraded, 5000);
    // The restarted server kept nothing (no persistence) and the process forgot its own counts: 1.
    assert.equal((await store.hit('k', 60_000)).count, 1);
    assert.deepEqual(
      lines.map((l) => l.split(':')[0]),
      ['warn Redis unreachable', 'info Redis answers again'],
    );
    console.log(
      `# killed: per-process after ${opened.toFixed(0)} ms; 50 calls, slowest ${Math.max(...down.map((d) => d.ms)).toFixed(2)} ms; shared again ${recovered.toFixed(0)} ms after the restart`,
    );
  } finally {
    await store.close();
  }
});

test('frozen (SIGSTOP): the watchdog opens the circuit, later calls do not wait; resumed: shared again within 5 s', async () => {
  const redis = await ownRedis();
  await redis.start();
  const { log, lines } = recordingLog();
  const store = await sharedStore(redis, log);
  try {
    for (let i = 1; i <= 3; i++) assert.equal((await store.hit('f', 60_000)).count, i);
    redis.signal('SIGSTOP');
    // The call in flight when the server froze waits for the watchdog (COMMAND_TIMEOUT_MS), once.
    const first = await timedHit(store, 'f');
    assert.ok(first.ms < 1500, `the first call waited ${first.ms.toFixed(0)} ms`);
    assert.equal(store.degraded, true);
    const later = [];
    for (let i = 0; i < 20; i++) later.push(await timedHit(store, 'f'));
    assert.ok(Math.max(...later.map((d) => d.ms)) < 50, `a later call waited ${Math.max(...later.map((d) => d.ms)).toFixed(1)} ms`);
    await sleep(1500); // reconnection attempts to the frozen server fail meanwhile, without a word more
    redis.signal('SIGCONT');
    const recovered = await until('shared after SIGCONT', () => !store.degraded, 5000);
    // The server kept its window (3 calls, and perhaps the frozen one): the in-process 21 are forgotten.
    const next = (await store.hit('f', 60_000)).count;
    assert.ok(next === 4 || next === 5, `count after the return: ${next}`);
    assert.deepEqual(
      lines.map((l) => l.split(':')[0]),
      ['warn Redis unreachable', 'info Redis answers again'],
    );
    console.log(
      `# frozen: the call in flight answered in ${first.ms.toFixed(0)} ms, later ones at most ${Math.max(...later.map((d) => d.ms)).toFixed(2)} ms; shared again ${recovered.toFixed(0)} ms after SIGCONT`,
    );
  } finally {
    redis.signal('SIGCONT');
    await store.close();
  }
});
