// The read pool's fair share of time (reads.ts ReadPool): while another tenant is active, a tenant whose
// statement ran REST_AFTER_MS or more rests as long before its next one starts; alone, or after a light
// statement, it never waits; the other tenant's statements never wait for that rest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ACTIVE_WINDOW_MS, ReadPool, type ReadSlot } from '../../src/db/reads.js';

/** A slot whose statement `sleep <ms>` takes that long; it answers when its statement started. */
function fakeSlot(): ReadSlot {
  return {
    async run(sql: string) {
      const started = Date.now();
      await sleep(Number(sql.split(' ')[1]));
      return [{ started }];
    },
    cancel() {},
    warm() {},
    async close() {},
  };
}

const pool = (restAfterMs?: number) => new ReadPool([fakeSlot(), fakeSlot()], { timeoutMs: 5_000, ...(restAfterMs === undefined ? {} : { restAfterMs }) });
const startOf = async (p: Promise<unknown[]>) => (await p as { started: number }[])[0].started;

test('while another tenant is active, a heavy statement makes its tenant rest as long before its next one', async () => {
  const p = pool();
  p.seen('A');
  const first = p.run('B', 'sleep 60', []);
  const endFirst = (await startOf(first)) + 60;
  const second = await startOf(p.run('B', 'sleep 1', []));
  assert.ok(second - endFirst >= 50, `B's next statement started ${second - endFirst} ms after its heavy one ended`);
  // Meanwhile A is not held by B's rest.
  const t0 = Date.now();
  const heavy = p.run('B', 'sleep 60', []);
  await heavy;
  const a = await startOf(p.run('A', 'sleep 1', []));
  assert.ok(a - t0 < 60 + 40, `A started ${a - t0} ms in`);
  await p.close();
});

test('a tenant alone never rests, nor after a light statement, nor with restAfterMs 0', async () => {
  for (const [name, p, ms, others] of [
    ['alone', pool(), 60, false],
    ['light', pool(), 3, true],
    ['off', pool(0), 60, true],
  ] as const) {
    if (others) p.seen('A');
    const end = (await startOf(p.run('B', `sleep ${ms}`, []))) + ms;
    const next = await startOf(p.run('B', 'sleep 1', []));
    assert.ok(next - end < 25, `${name}: B's next statement started ${next - end} ms after`);
    await p.close();
  }
});

test('another tenant counts as active for ACTIVE_WINDOW_MS after its last request', async () => {
  const p = pool();
  p.seen('A', Date.now() - ACTIVE_WINDOW_MS - 1);
  p.seen('B');
  const end = (await startOf(p.run('B', 'sleep 40', []))) + 40;
  const next = await startOf(p.run('B', 'sleep 1', []));
  assert.ok(next - end < 25, `A idle for longer than the window: B waited ${next - end} ms`);
  await p.close();
});

test("a resting tenant's statements still meet their deadline: refused with 503 query_timeout, not kept", async () => {
  const p = new ReadPool([fakeSlot(), fakeSlot()], { timeoutMs: 100 });
  p.seen('A');
  await p.run('B', 'sleep 80', []);
  await assert.rejects(p.run('B', 'sleep 1', [], undefined, Date.now() + 30), (err: { statusCode?: number; code?: string }) => err.code === 'query_timeout');
  await p.close();
});
