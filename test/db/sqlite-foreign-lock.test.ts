// test: alone (it judges waits and deadlines; see scripts/test.mjs)
// Another process's write lock on SQLite (db/sqlite-lock.ts, FastSqliteDriver): a write that finds it waits
// off the event loop, in one line that keeps the writes' order, while reads on the same connection go on
// answering; past QUERY_TIMEOUT_MS it fails with 503 database_unavailable (Retry-After) and writes nothing;
// once the lock is free the waiting writes go on within milliseconds. A foreign checkpoint that holds the lock
// (TRUNCATE, waiting for a reader) is met the same way, and so are the raw statements of the planner
// statistics; closing the database answers the writes still waiting at once.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type BetterSqlite from 'better-sqlite3';
import SqliteDatabase from '../../src/db/sqlite-driver.mjs';
import { sql, type Kysely } from 'kysely';
import { createDatabase, withTx, type Database, type Db } from '../../src/db/index.js';
import { prepared } from '../../src/db/prepared.js';
import { ApiError } from '../../src/errors.js';
import { DIALECT, testConfig } from '../helpers/app.js';

const sqliteOnly = DIALECT !== 'sqlite' && 'SQLite only (the write lock of a shared database file)';
const DEADLINE_MS = 800;

let dir: string;
let file: string;
let database: Database;
let db: Kysely<{ t: { x: number } }>;
/** Another connection to the same file, as `crm worker` or the CLI would hold. */
let other: BetterSqlite.Database;

before(async () => {
  if (sqliteOnly) return;
  dir = mkdtempSync(path.join(tmpdir(), 'crm-lock-'));
  file = path.join(dir, 'crm.db');
  database = createDatabase(testConfig({ DATA_DIR: dir, QUERY_TIMEOUT_MS: String(DEADLINE_MS) }));
  db = database.db as unknown as Kysely<{ t: { x: number } }>;
  await sql`create table t (x integer not null)`.execute(db);
  await sql`create index t__x on t (x)`.execute(db);
  other = new SqliteDatabase(file);
  other.pragma('busy_timeout = 5000');
});
after(async () => {
  if (sqliteOnly) return;
  if (other.inTransaction) other.exec('rollback');
  other.close();
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The longest the event loop went without running a 5 ms timer, from now until `stop()`. */
function loopWatch(): { stop(): number } {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(worst, performance.now() - last);
    },
  };
}

/** Settles once another connection holds the file's write lock (a probe's BEGIN IMMEDIATE finds it busy). */
async function writeLockHeld(): Promise<void> {
  const probe = new SqliteDatabase(file);
  probe.pragma('busy_timeout = 0');
  try {
    for (const started = performance.now(); performance.now() - started < 5_000; await sleep(10)) {
      try {
        probe.exec('begin immediate');
        probe.exec('rollback');
      } catch {
        return;
      }
    }
    assert.fail('nobody took the write lock within 5 s');
  } finally {
    probe.close();
  }
}

const xs = () => (other.prepare('select x from t order by rowid').all() as { x: number }[]).map((r) => r.x);
const insert = (tx: Db, x: number) => (tx as unknown as typeof db).insertInto('t').values({ x }).execute();
const countPrepared = prepared((d: Db) => (d as unknown as Kysely<{ t: { x: number } }>).selectFrom('t').select((e) => e.fn.countAll<number>().as('n')));
const timed = async <T>(p: Promise<T>): Promise<{ ms: number; value?: T; err?: unknown }> => {
  const t0 = performance.now();
  try {
    const value = await p;
    return { ms: performance.now() - t0, value };
  } catch (err) {
    return { ms: performance.now() - t0, err };
  }
};

test('writes wait for another process’s lock off the event loop, in order, while reads answer', { skip: sqliteOnly }, async () => {
  const before = xs();
  other.exec('begin immediate');
  const watch = loopWatch();
  let released = 0;
  try {
    // A lone write, transactions, and a lone write through prepared()'s direct path, in this order.
    const writes = [
      db.insertInto('t').values({ x: 1 }).execute(),
      withTx(database.db, (tx) => insert(tx, 2)),
      withTx(database.db, async (tx) => {
        await insert(tx, 3);
        await insert(tx, 4);
      }),
      db.insertInto('t').values({ x: 5 }).execute(),
    ].map((p) => p.then(() => performance.now() - released));
    // Meanwhile reads on the same connection answer, through Kysely and at once.
    for (let i = 0; i < 5; i++) {
      const read = await timed(sql`select count(*) n from t`.execute(db));
      assert.ok(read.ms < 100, `a read answered in ${read.ms.toFixed(1)} ms while writes waited`);
      const [{ n }] = await countPrepared(database.db);
      assert.equal(Number(n), before.length, 'reads see the committed rows only');
      await sleep(40);
    }
    other.exec('commit');
    released = performance.now();
    const after = await Promise.all(writes);
    const lag = watch.stop();
    assert.ok(lag < 100, `the event loop was held up ${lag.toFixed(1)} ms`);
    assert.ok(Math.max(...after) < 200, `writes went on ${after.map((ms) => ms.toFixed(1)).join(', ')} ms after the lock was released`);
    assert.deepEqual(xs(), [...before, 1, 2, 3, 4, 5], 'in the order they were made');
  } finally {
    watch.stop();
    if (other.inTransaction) other.exec('rollback');
  }
});

test('past QUERY_TIMEOUT_MS a waiting write answers 503 database_unavailable with Retry-After, and writes nothing', { skip: sqliteOnly }, async () => {
  const before = xs();
  other.exec('begin immediate');
  const watch = loopWatch();
  try {
    const outcomes = await Promise.all([
      timed(db.insertInto('t').values({ x: 10 }).execute()),
      timed(withTx(database.db, (tx) => insert(tx, 11))),
      timed(withTx(database.db, (tx) => insert(tx, 12))),
    ]);
    const lag = watch.stop();
    for (const { ms, err } of outcomes) {
      assert.ok(err instanceof ApiError, `an ApiError: ${String(err)}`);
      assert.equal(err.statusCode, 503);
      assert.equal(err.code, 'database_unavailable');
      assert.equal(err.headers['retry-after'], '1');
      assert.ok(ms >= DEADLINE_MS - 20 && ms < DEADLINE_MS + 700, `answered after ${ms.toFixed(0)} ms (deadline ${DEADLINE_MS})`);
    }
    assert.ok(lag < 100, `the event loop was held up ${lag.toFixed(1)} ms`);
  } finally {
    watch.stop();
    other.exec('commit');
  }
  assert.deepEqual(xs(), before);
  // The connection is usable at once.
  const next = await timed(withTx(database.db, (tx) => insert(tx, 13)));
  assert.ok(next.ms < 100, `the next write took ${next.ms.toFixed(1)} ms`);
  assert.deepEqual(xs(), [...before, 13]);
});

test('a raw statement around the driver (planner statistics) waits for the lock too, off the loop', { skip: sqliteOnly }, async () => {
  other.exec('begin immediate');
  const watch = loopWatch();
  try {
    // The read pool is not needed: ANALYZE of an index without a line runs on the main connection.
    const optimized = timed(database.optimize());
    await sleep(100);
    other.exec('commit');
    const { err, ms } = await optimized;
    assert.equal(err, undefined);
    assert.ok(ms < 2_000, `optimize took ${ms.toFixed(0)} ms`);
    assert.ok(watch.stop() < 100);
  } finally {
    watch.stop();
    if (other.inTransaction) other.exec('rollback');
  }
});

test('a foreign checkpoint that holds the lock while it waits for a reader blocks neither the loop nor reads', { skip: sqliteOnly }, async () => {
  // Frames in the WAL, and a reader (a third connection) whose snapshot needs them.
  for (let i = 0; i < 20; i++) await insert(database.db, 100 + i);
  const reader = new SqliteDatabase(file);
  reader.exec('begin');
  reader.prepare('select count(*) from t').get();
  // Frames the reader's snapshot does not hold. The service's checkpointer may have copied the WAL before the
  // reader began (it then reads the file alone): these frames cannot be copied while it reads, so the TRUNCATE
  // checkpoint waits for the reader either way, with the write lock held.
  for (let i = 0; i < 5; i++) other.prepare('insert into t (x) values (?)').run(150 + i);
  const driverUrl = new URL('../../src/db/sqlite-driver.mjs', import.meta.url).href;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { default: D } = await import(${JSON.stringify(driverUrl)});
       const db = new D(${JSON.stringify(file)});
       db.pragma('busy_timeout = 3000');
       process.stdout.write('start\\n');
       db.pragma('wal_checkpoint(TRUNCATE)');
       db.close();`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    await writeLockHeld(); // the checkpoint has the write lock and waits for `reader`
    const watch = loopWatch();
    const write = timed(withTx(database.db, (tx) => insert(tx, 200)));
    for (let i = 0; i < 3; i++) {
      const read = await timed(sql`select count(*) n from t`.execute(db));
      assert.ok(read.ms < 100, `a read answered in ${read.ms.toFixed(1)} ms during the checkpoint`);
      await sleep(50);
    }
    reader.exec('commit'); // the checkpoint completes and lets the lock go
    const { err, ms } = await write;
    assert.equal(err, undefined);
    assert.ok(ms >= 150, `the write waited for the checkpoint (${ms.toFixed(0)} ms)`);
    assert.ok(watch.stop() < 100, 'the event loop was not held up');
    assert.ok(xs().includes(200));
  } finally {
    if (reader.inTransaction) reader.exec('commit');
    reader.close();
    await exited;
  }
});

test('closing the database answers the writes still waiting at once (503), and leaves no timer behind', { skip: sqliteOnly }, async () => {
  const second = createDatabase(testConfig({ DATA_DIR: dir, QUERY_TIMEOUT_MS: '30000' }));
  other.exec('begin immediate');
  try {
    const waiting = timed(withTx(second.db, (tx) => insert(tx, 300)));
    await sleep(50);
    const closed = timed(second.close());
    const { err, ms } = await waiting;
    assert.ok(err instanceof ApiError && err.code === 'database_unavailable', String(err));
    assert.ok(ms < 1_000, `answered after ${ms.toFixed(0)} ms`);
    assert.equal((await closed).err, undefined);
  } finally {
    other.exec('rollback');
  }
  assert.ok(!xs().includes(300));
});
