// test: alone (it judges deadlines; see scripts/test.mjs)
// A request's data-dependent reads are answered within QUERY_TIMEOUT_MS of the request's arrival (DESIGN §4),
// not of its first statement: time spent before it (its turn to read a large body, the main connection) counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECT, testApp } from '../helpers/app.js';

const TIMEOUT_MS = 1_500;
const { database } = await testApp({ QUERY_TIMEOUT_MS: String(TIMEOUT_MS) });

/** A statement that runs far past the deadline on either database. */
const slow =
  DIALECT === 'postgres'
    ? sql<{ x: number }>`select 1 as x from pg_sleep(20)`
    : sql<{ x: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000) select count(*) as x from c`;

const arrivedAgo = (ms: number) => ({ aborted: false, startedAt: Date.now() - ms, subscribe: () => () => {} });

test("a read of a request that arrived 1 s ago is stopped at the request's deadline, ~0.5 s later, not a full QUERY_TIMEOUT_MS later", async () => {
  const t0 = Date.now();
  await assert.rejects(database.readsFor('tenant-deadline', arrivedAgo(1_000)).all(slow), (err: { code?: string }) => err.code === 'query_timeout');
  const waited = Date.now() - t0;
  assert.ok(waited < TIMEOUT_MS - 300, `answered ${waited} ms after the statement started (the request's deadline was ~500 ms away)`);
});

test('a request already past its deadline gets 503 query_timeout at once, its statement never run', async () => {
  const t0 = Date.now();
  await assert.rejects(database.readsFor('tenant-deadline', arrivedAgo(TIMEOUT_MS + 10)).all(slow), (err: { code?: string }) => err.code === 'query_timeout');
  assert.ok(Date.now() - t0 < 200);
});

test('without an arrival time the deadline runs from the first statement, as for workers', async () => {
  const t0 = Date.now();
  await assert.rejects(database.readsFor('tenant-deadline').all(slow), (err: { code?: string }) => err.code === 'query_timeout');
  const waited = Date.now() - t0;
  assert.ok(waited >= TIMEOUT_MS - 50 && waited < TIMEOUT_MS + 2_000, `answered after ${waited} ms`);
});
