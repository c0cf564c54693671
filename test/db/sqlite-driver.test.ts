// The SQLite driver (db/index.ts FastSqliteDriver):
// - its read transaction per turn of the event loop: reads outside a transaction share one snapshot until
//   the turn ends (or the snapshot is READ_SNAPSHOT_MAX_MS old), and nothing else changes — a write, a
//   transaction or an INSERT … RETURNING after a read in the same turn is committed and visible to another
//   connection at once, and the connection closes cleanly with a read transaction open;
// - its group commit: the write transactions of one turn share one COMMIT, each is answered only once that
//   COMMIT has run, a failed one is undone alone, a statement outside a transaction never sees or joins an
//   uncommitted group, and a COMMIT that fails fails every member;
// - prepared()'s statements on an idle connection, run at once around Kysely's executor, and queued through
//   it while a transaction holds the connection; those of that transaction run at once while it holds it.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type BetterSqlite from 'better-sqlite3';
import SqliteDatabase from '../../src/db/sqlite-driver.mjs';
import { sql, type Kysely } from 'kysely';
import { createDatabase, withTx, READ_SNAPSHOT_MAX_MS, type Database, type Db } from '../../src/db/index.js';
import { prepared } from '../../src/db/prepared.js';
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

const countHere = async () =>
  Number(
    (
      await db
        .selectFrom('t')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
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
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  try {
    await nextTurn();
    const second = createDatabase(testConfig({ DATA_DIR: scratch.dir }));
    const { rows } = await sql<{ n: number }>`select count(*) n from t`.execute(second.db);
    assert.equal(rows[0].n, countThere(), 'the read was answered');
    let turnEnded = false;
    setImmediate(() => (turnEnded = true)); // after the driver's own end of the turn's read
    await second.close();
    assert.equal(turnEnded, false, 'closed in the turn of the read, its read transaction open');
    // The end of the turn, where the read transaction would end, must not run a statement on the closed connection.
    await nextTurn();
    await nextTurn();
    assert.deepEqual(uncaught, [], 'nothing failed at the end of the turn');
    await assert.rejects(sql`select 1`.execute(second.db), 'closed: it runs nothing more');
  } finally {
    process.off('uncaughtException', onUncaught);
  }
  // Its read transaction did not outlive it: another connection restarts the WAL, which needs every reader gone.
  const [checkpoint] = other.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  assert.equal(checkpoint.busy, 0, 'no reader holds the WAL');
});

const insert = (tx: Db, x: number) => (tx as unknown as typeof db).insertInto('t').values({ x }).execute();

test('the transactions of one turn share one COMMIT, and each is answered only after it', { skip: sqliteOnly }, async () => {
  await nextTurn();
  const before = countThere();
  let seenByOther = -1;
  const first = withTx(database.db, (tx) => insert(tx, 10));
  const second = withTx(database.db, async (tx) => {
    await insert(tx, 11);
    // The first transaction has ended, but its group has not committed yet.
    seenByOther = countThere();
  });
  await first;
  assert.equal(countThere(), before + 2, 'once the first is answered, both are committed');
  await second;
  assert.equal(seenByOther, before, 'another connection saw neither before the group committed');
});

test('a failed transaction of a group is undone alone', { skip: sqliteOnly }, async () => {
  await nextTurn();
  const before = countThere();
  const results = await Promise.allSettled([
    withTx(database.db, (tx) => insert(tx, 20)),
    withTx(database.db, async (tx) => {
      await insert(tx, 21);
      throw new Error('no');
    }),
    withTx(database.db, (tx) => insert(tx, 22)),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.deepEqual(
    (other.prepare('select x from t where x in (20, 21, 22) order by x').all() as { x: number }[]).map((r) => r.x),
    [20, 22],
  );
  assert.equal(countThere(), before + 2);
});

test('a statement outside a transaction commits the group first', { skip: sqliteOnly }, async () => {
  await nextTurn();
  const before = countThere();
  const member = withTx(database.db, (tx) => insert(tx, 30));
  // A read in the same turn, after the member: it reads committed data only.
  const n = await countHere();
  assert.equal(n, before + 1);
  assert.equal(countThere(), before + 1, 'what the read saw was committed');
  const lone = withTx(database.db, (tx) => insert(tx, 31));
  await db.insertInto('t').values({ x: 32 }).execute();
  assert.equal(countThere(), before + 3, 'a lone write is committed when it returns, with the group before it');
  await Promise.all([member, lone]);
});

test('a COMMIT that fails fails every transaction of its group, and keeps none of them', { skip: sqliteOnly }, async () => {
  // The service's schema has no deferred constraint; this table's makes the group's COMMIT fail.
  await sql`create table parent (id integer primary key)`.execute(db);
  await sql`create table child (parent_id integer references parent (id) deferrable initially deferred)`.execute(db);
  await sql`pragma foreign_keys = on`.execute(db);
  try {
    await nextTurn();
    const before = countThere();
    const results = await Promise.allSettled([
      withTx(database.db, (tx) => insert(tx, 40)),
      withTx(database.db, (tx) => sql`insert into child (parent_id) values (1)`.execute(tx)),
      withTx(database.db, (tx) => insert(tx, 41)),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected', 'rejected'],
    );
    assert.match(String((results[0] as PromiseRejectedResult).reason), /FOREIGN KEY/);
    assert.equal(countThere(), before);
    assert.equal((other.prepare('select count(*) n from child').get() as { n: number }).n, 0);
    // The connection is usable again.
    await withTx(database.db, (tx) => insert(tx, 42));
    assert.equal(countThere(), before + 1);
  } finally {
    await sql`pragma foreign_keys = off`.execute(db);
  }
});

// prepared()'s statements run at once on an idle connection (FastSqliteDriver.runNow), around Kysely's executor.
const countPrepared = prepared((d: Db, min: number) =>
  (d as unknown as Kysely<{ t: { x: number } }>)
    .selectFrom('t')
    .select((e) => e.fn.countAll<number>().as('n'))
    .where('x', '>=', min),
);

test('a prepared() statement on an idle connection runs at once, without Kysely’s executor', { skip: sqliteOnly }, async (t) => {
  await nextTurn();
  const viaKysely = t.mock.method(database.db, 'executeQuery');
  const [{ n }] = await countPrepared(database.db, 0);
  assert.equal(Number(n), countThere());
  assert.equal(viaKysely.mock.callCount(), 0);
});

test('a prepared() statement while a transaction holds the connection waits for it and never sees its writes', { skip: sqliteOnly }, async (t) => {
  await nextTurn();
  const viaKysely = t.mock.method(database.db, 'executeQuery');
  const before = countThere();
  let read: Promise<{ n: number }[]> | undefined;
  let readEnded = false;
  const rolledBack = withTx(database.db, async (tx) => {
    await insert(tx, 50);
    // The transaction holds the connection: the read queues behind it.
    read = countPrepared(database.db, 0);
    void read.then(() => (readEnded = true));
    await nextTurn();
    assert.equal(readEnded, false, 'the read waited for the transaction');
    throw new Error('undo');
  });
  await assert.rejects(rolledBack, /undo/);
  const [{ n }] = await read!;
  assert.equal(Number(n), before, 'the read never saw the rolled-back insert');
  assert.equal(viaKysely.mock.callCount(), 1, 'it went through Kysely, which queued it');
});

const insertPrepared = prepared((d: Db, x: number) => (d as unknown as Kysely<{ t: { x: number } }>).insertInto('t').values({ x }));

test(
  'prepared() statements of a transaction run at once while it holds the connection, in their order, undone with it; after its end they go through Kysely',
  { skip: sqliteOnly },
  async (t) => {
    await nextTurn();
    const before = countThere();
    let kept: Db | undefined;
    let viaKysely: ReturnType<typeof t.mock.method> | undefined;
    await assert.rejects(
      withTx(database.db, async (tx) => {
        viaKysely = t.mock.method(tx, 'executeQuery');
        await insertPrepared(tx, 7001);
        const [{ n }] = await countPrepared(tx, 7001);
        assert.equal(Number(n), 1, 'the transaction reads its own write');
        throw new Error('undo');
      }),
      /undo/,
    );
    assert.equal(viaKysely!.mock.callCount(), 0, 'neither went through Kysely');
    assert.equal(countThere(), before, 'the rolled-back insert is gone');
    await withTx(database.db, async (tx) => {
      kept = tx;
      await insertPrepared(tx, 7002);
    });
    assert.equal(countThere(), before + 1);
    // A transaction that ended must not run in the next one: its statement goes to Kysely, which refuses it.
    await withTx(database.db, async () => {
      await assert.rejects(insertPrepared(kept!, 7003), /committed|rolled back/i);
    });
    assert.equal(countThere(), before + 1);
  },
);

test('LIMIT and OFFSET are bound inside an expression, (? + 0): a bare parameter there is prepared anew at each run', { skip: sqliteOnly }, async () => {
  // SQLite 3.46+ plans with the value bound to a bare LIMIT or OFFSET parameter, so each bind expires the
  // plan (a look-up by e-mail domain took 5.2 µs instead of 0.6: db/index.ts FastSqliteQueryCompiler).
  const compiled = db.selectFrom('t').select('x').orderBy('x').limit(3).offset(2).compile();
  assert.match(compiled.sql, /limit \(\? \+ 0\) offset \(\? \+ 0\)$/);
  assert.deepEqual(compiled.parameters, [3, 2]);
  // A value compiled inline stays as it is.
  assert.match(
    db
      .selectFrom('t')
      .select('x')
      .limit(sql.lit(4) as never)
      .compile().sql,
    /limit 4$/,
  );
  await db.deleteFrom('t').execute();
  await db
    .insertInto('t')
    .values([5, 1, 4, 2, 3, 6].map((x) => ({ x })))
    .execute();
  assert.deepEqual(
    (await db.selectFrom('t').select('x').orderBy('x').limit(3).offset(2).execute()).map((r) => r.x),
    [3, 4, 5],
  );
  assert.deepEqual(
    (await db.selectFrom('t').select('x').orderBy('x').limit(1).offset(5).execute()).map((r) => r.x),
    [6],
  );
});
