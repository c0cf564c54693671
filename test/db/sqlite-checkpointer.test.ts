// The SQLite checkpointer (db/sqlite-checkpointer.ts): committed WAL frames reach the database file without
// the writer's automatic checkpoint (WAL_AUTOCHECKPOINT_PAGES), and under a steady write load the WAL is still restarted
// (it does not grow without bound, the failure of an earlier design). Sizes and files are asserted, never times.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { WAL_AUTOCHECKPOINT_PAGES, type Database } from '../../src/db/index.js';
import { SqliteCheckpointer } from '../../src/db/sqlite-checkpointer.js';
import { DIALECT, scratchSqlite, type ScratchSqlite } from '../helpers/app.js';

const sqliteOnly = DIALECT !== 'sqlite' && 'SQLite only (PostgreSQL checkpoints by itself)';
const PAGE = 4096;

let scratch: ScratchSqlite;
let database: Database;
let file: string;
before(async () => {
  if (sqliteOnly) return;
  scratch = scratchSqlite('crm-ckpt-');
  ({ database, file } = scratch);
  await sql`create table blobs (id integer primary key, body blob not null)`.execute(database.db);
});
after(async () => {
  if (!sqliteOnly) await scratch.remove();
});

const size = (f: string) => statSync(f).size;

async function until(cond: () => boolean, ms = 5_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) if (cond()) return true;
  return cond();
}

test('committed pages reach the database file long before the writer would checkpoint', { skip: sqliteOnly }, async () => {
  const before = size(file);
  // 100 pages: far below wal_autocheckpoint (WAL_AUTOCHECKPOINT_PAGES), so only the checkpointer copies them now.
  await sql`insert into blobs (body) select zeroblob(${100 * PAGE})`.execute(database.db);
  assert.ok(await until(() => size(file) >= before + 100 * PAGE), `database file ${size(file)} bytes, was ${before}`);
});

test('under a steady write load the WAL is restarted: it stays near wal_autocheckpoint, not the bytes written', { skip: sqliteOnly }, async () => {
  // 60,000 pages (240 MiB) written in 3,000 small transactions, as fast as the writer goes: well past the mark.
  assert.ok(WAL_AUTOCHECKPOINT_PAGES * 2.5 < 60_000, 'the test writes several times wal_autocheckpoint');
  let largest = 0;
  for (let i = 0; i < 3_000; i++) {
    await database.db.transaction().execute(async (tx) => {
      await sql`insert into blobs (body) values (zeroblob(${20 * PAGE - 64}))`.execute(tx);
      await sql`delete from blobs where id = (select min(id) from blobs)`.execute(tx);
    });
    if (i % 100 === 0) largest = Math.max(largest, size(file + '-wal'));
  }
  largest = Math.max(largest, size(file + '-wal'));
  // A WAL that is never restarted would hold all 240 MiB; a restarted one, the mark and what a commit adds past it.
  assert.ok(largest < 1.5 * WAL_AUTOCHECKPOINT_PAGES * PAGE, `WAL reached ${largest} bytes`);
});

interface Thread {
  /** The exit code once the thread has ended. */
  exitCode?: number;
}

/**
 * The worker threads this process starts while `fn` runs (process's 'worker' event), and whether each has ended.
 * The checkpointer is the only thread the service starts; the suite's own database started its thread already.
 */
async function threadsStartedBy(fn: (threads: Thread[]) => Promise<void>): Promise<Thread[]> {
  const threads: Thread[] = [];
  const onWorker = (worker: Worker) => {
    const thread: Thread = {};
    threads.push(thread);
    worker.once('exit', (code) => (thread.exitCode = code));
  };
  process.on('worker', onWorker);
  try {
    await fn(threads);
  } finally {
    process.off('worker', onWorker);
  }
  return threads;
}

test('close ends the checkpointer thread', { skip: sqliteOnly, timeout: 10_000 }, async () => {
  await threadsStartedBy(async (threads) => {
    const other = scratchSqlite('crm-ckpt-');
    await sql`create table t (x integer)`.execute(other.database.db);
    await sql`insert into t values (1)`.execute(other.database.db);
    assert.ok(await until(() => threads.length > 0), 'the first write started the thread');
    assert.equal(threads.length, 1, 'one thread a database');
    await sleep(50);
    assert.equal(threads[0].exitCode, undefined, 'the thread runs while the database is open');
    await other.remove(); // its close resolves once the thread has exited
    assert.equal(threads[0].exitCode, 0, 'the thread ended, by itself, when the database closed');
  });
});

test('a thread that fails (its file is gone) harms no write, and close still ends', { skip: sqliteOnly, timeout: 10_000 }, async () => {
  await threadsStartedBy(async (threads) => {
    const checkpointer = new SqliteCheckpointer(path.join(scratch.dir, 'missing.db'), WAL_AUTOCHECKPOINT_PAGES);
    // The writer calls wrote() after each commit: it never throws, neither before nor after the thread failed.
    assert.doesNotThrow(() => checkpointer.wrote());
    // The thread cannot open the file and ends with an error (its 'error' event is the checkpointer's to handle:
    // an unhandled one would fail this test as an uncaught exception).
    assert.ok(await until(() => threads[0]?.exitCode !== undefined), 'the thread ended on its own');
    assert.notEqual(threads[0].exitCode, 0, 'with an error');
    assert.doesNotThrow(() => checkpointer.wrote());
    assert.equal(threads.length, 1, 'a failed thread is not started again at each write');
    await checkpointer.close();
  });
});
