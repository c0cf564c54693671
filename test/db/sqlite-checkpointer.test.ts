// The SQLite checkpointer (db/sqlite-checkpointer.ts): committed WAL frames reach the database file without
// the writer's automatic checkpoint (WAL_AUTOCHECKPOINT_PAGES), and under a steady write load the WAL is still restarted
// (it does not grow without bound, the failure of an earlier design). Sizes and files are asserted, never times.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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

test('close ends the checkpointer thread', { skip: sqliteOnly }, async () => {
  const other = scratchSqlite('crm-ckpt-');
  await sql`create table t (x integer)`.execute(other.database.db);
  await sql`insert into t values (1)`.execute(other.database.db);
  await other.remove(); // its close resolves once the thread has exited
});

test('a thread that fails (its file is gone) harms no write, and close still ends', { skip: sqliteOnly, timeout: 10_000 }, async () => {
  const checkpointer = new SqliteCheckpointer(path.join(scratch.dir, 'missing.db'), WAL_AUTOCHECKPOINT_PAGES);
  checkpointer.wrote();
  await sleep(300); // the thread cannot open the file and ends with an error
  checkpointer.wrote();
  await checkpointer.close();
});
