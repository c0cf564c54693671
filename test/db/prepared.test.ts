// prepared(): compiled once, re-bound per call; on PostgreSQL a named prepared statement of each session.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createDatabase, migrate, type Db } from '../../src/db/index.js';
import { prepared } from '../../src/db/prepared.js';
import { DIALECT, testConfig } from '../helpers/app.js';

test(
  'PostgreSQL: a prepared() query runs as a named prepared statement of the session, re-bound per call',
  { skip: DIALECT !== 'postgres' && 'PostgreSQL only' },
  async () => {
    // One session, so the statements it prepared are the ones pg_prepared_statements shows.
    const database = createDatabase(testConfig(), { poolSize: 1 });
    await migrate(database);
    const { db } = database;
    const now = new Date().toISOString();
    const ids = [`ten_prep_a_${process.pid}`, `ten_prep_b_${process.pid}`];
    for (const id of ids)
      await db
        .insertInto('tenants')
        .values({ id, name: `Name ${id}`, slug: id, locale: 'en', created_at: now })
        .execute();
    after(async () => {
      await db.deleteFrom('tenants').where('id', 'in', ids).execute();
      await database.close();
    });

    const tenantName = prepared((q: Db, id: string) => q.selectFrom('tenants').select('name').where('id', '=', id));
    assert.deepEqual(await tenantName(db, ids[0]), [{ name: `Name ${ids[0]}` }]);
    assert.deepEqual(await tenantName(db, ids[1]), [{ name: `Name ${ids[1]}` }]);
    // Inside a transaction too (the same session's statement).
    await db.transaction().execute(async (tx) => assert.deepEqual(await tenantName(tx, ids[1]), [{ name: `Name ${ids[1]}` }]));
    await db.selectFrom('tenants').select('id').where('id', '=', ids[0]).execute(); // not prepared(): unnamed

    const { rows } = await database.pool!.query<{ name: string; statement: string }>('select name, statement from pg_prepared_statements');
    const ours = rows.filter((r) => r.name.startsWith('crm_'));
    assert.equal(ours.length, 1, JSON.stringify(rows));
    assert.match(ours[0].statement, /^select "name" from "tenants" where "id" = \$1$/);
  },
);

test(
  'PostgreSQL: a prepared statement gone stale under a schema change fails once, then the session runs it unnamed',
  { skip: DIALECT !== 'postgres' && 'PostgreSQL only' },
  async () => {
    const database = createDatabase(testConfig(), { poolSize: 1 });
    const table = `prep_stale_${process.pid}`;
    const { db } = database;
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
    // Temporary (this session's own, the pool has one): another test file's migrator, listing the tables of
    // `public` at the same time, must not find it there and lose it before it reads its columns.
    await sql`create temporary table ${sql.table(table)} (id text primary key, v integer)`.execute(db);
    after(async () => {
      await sql`drop table if exists ${sql.table(table)}`.execute(db);
      await database.close();
    });
    await sql`insert into ${sql.table(table)} values ('a', 1)`.execute(db);
    const valueOf = prepared((q: Db, id: string) => (q as any).selectFrom(table).select('v').where('id', '=', id));
    assert.deepEqual(await valueOf(db, 'a'), [{ v: 1 }]);
    // What a newer server's migration might do during a rolling deploy.
    await sql`alter table ${sql.table(table)} alter column v type text`.execute(db);
    await assert.rejects(valueOf(db, 'a'), (err: { code?: string }) => err.code === '0A000');
    assert.deepEqual(await valueOf(db, 'a'), [{ v: '1' }]);
    assert.deepEqual(await valueOf(db, 'a'), [{ v: '1' }]);
  },
);
