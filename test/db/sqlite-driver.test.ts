// The SQLite driver's read transaction per turn of the event loop (db/index.ts FastSqliteDriver): reads
// outside a transaction share one snapshot until the turn ends (or the snapshot is READ_SNAPSHOT_MAX_MS
// old), and nothing else changes — a write, a
// transaction or an INSERT … RETURNING after a read in the same turn is committed and visible to another
// connection at once, and the connection closes cleanly with a read transaction open.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type BetterSqlite from 'better-sqlite3';
import SqliteDatabase from '../../src/db/sqlite-driver.mjs';
import { sql, type Kysely } from 'kysely';
import { createDatabase, READ_SNAPSHOT_MAX_MS, type Database } from '../../src/db/index.js';
import { DIALECT, scratchSqlite, testConfig, type ScratchSqlite } from '../helpers/app.js';

const sqliteOnly = DIALECT !== 'sqlite' && 'SQLite only (the driver of the embedded database)';

let scratch: ScratchSqlite;
let database: Database;
/** Another connection to the same file, as a `crm worker` process would hold. */
let other: BetterSqlite.Database;
// The tests' own table, outside the service's schema.
let db: Kysely<{ t: { x: number } }>;

before(async () => {
  if (sqliteOnly) return;
  scratch = scratchSqlite('crm-driver-');
  database = scratch.database;
  db = database.db as unknown as Kysely<{ t: { x: number } }>;
  await sql`create table t (x integer not null)`.execute(db);
  other = new SqliteDatabase(scratch.file);
  other.pragma('busy_timeout = 5000');
  other.pragma('synchronous = normal'); // as the server's connection: no sync at each commit
});
after(async () => {
  if (sqliteOnly) return;
  other.close();
  await scratch.remove();
});

const countHere = async () => Number((await db.selectFrom('t').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const countThere = () => (other.prepare('select count(*) n from t').get() as { n: number }).n;

test('reads in one turn share a snapshot; the next turn sees what another connection wrote', { skip: sqliteOnly }, async (t) => {
  await nextTurn();
  // The clock stands still, so the snapshot cannot reach READ_SNAPSHOT_MAX_MS on a slow machine (a slow
  // commit of the other connection): this test is about the end of the turn, the next one about the age.
  const now = performance.now();
  t.mock.method(performance, 'now', () => now);
  const before = await countHere();
  other.prepare('insert into t (x) values (1)').run();
  assert.equal(await countHere(), before, 'a read later in the same turn reads the same snapshot');
  t.mock.restoreAll();
  await nextTurn();
  assert.equal(await countHere(), before + 1, 'the next turn reads a new snapshot');
});

test('a turn held up by synchronous work does not keep its snapshot past READ_SNAPSHOT_MAX_MS', { skip: sqliteOnly }, async () => {
  await nextTurn();
  const before = await countHere();
  other.prepare('insert into t (x) values (1)').run();
  // Synchronous work in the same turn (a spawnSync, a long computation): no setImmediate runs meanwhile.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, READ_SNAPSHOT_MAX_MS + 5);
  assert.equal(await countHere(), before + 1);
});

test('a write after a read in the same turn is committed at once', { skip: sqliteOnly }, async () => {
  await nextTurn();
  const before = await countHere();
  await db.insertInto('t').values({ x: 2 }).execute();
  assert.equal(countThere(), before + 1, 'another connection sees the write before the turn ends');
  assert.equal(await countHere(), before + 1, 'and so does this one');
});

test('a transaction after a read in the same turn runs and is committed at once', { skip: sqliteOnly }, async () => {
  await nextTurn();
  const before = await countHere();
  await db.transaction().execute(async (tx) => {
    await tx.insertInto('t').values({ x: 3 }).execute();
    await tx.insertInto('t').values({ x: 4 }).execute();
  });
  assert.equal(countThere(), before + 2);
  // Another process's writer is not held up by the turn's snapshot either.
  await countHere();
  other.prepare('insert into t (x) values (5)').run();
  assert.equal(countThere(), before + 3);
});

test('INSERT … RETURNING after a read in the same turn is committed at once', { skip: sqliteOnly }, async () => {
  await nextTurn();
  const before = await countHere();
  const rows = await db.insertInto('t').values({ x: 6 }).returning('x').execute();
  assert.deepEqual(rows, [{ x: 6 }]);
  assert.equal(countThere(), before + 1);
});

test('a read and a failed statement in the same turn leave no transaction behind', { skip: sqliteOnly }, async () => {
  await nextTurn();
  await countHere();
  await assert.rejects(sql`select nope from t`.execute(db));
  await nextTurn();
  // With a transaction left open, this connection could not see the other's write.
  other.prepare('insert into t (x) values (7)').run();
  assert.equal(await countHere(), countThere());
});

test('a database closed in the turn of a read closes cleanly', { skip: sqliteOnly }, async () => {
  const second = createDatabase(testConfig({ DATA_DIR: scratch.dir }));
  await sql`select count(*) from t`.execute(second.db);
  await second.close();
  await nextTurn(); // the end of the turn must not run a statement on the closed connection
});
