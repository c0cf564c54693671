// SQLite planner statistics (db/sqlite-stats.ts): measured on the read pool, not taken from ANALYZE's
// sample, which judges an index that leads with tenant_id by its first rows (one tenant, one owner).
// Plans are asserted, never times.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { migrate, type Database } from '../../src/db/index.js';
import { installStatLines, measuringStatements, statLine } from '../../src/db/sqlite-stats.js';
import { DIALECT, scratchSqlite, type ScratchSqlite } from '../helpers/app.js';

const sqliteOnly = DIALECT !== 'sqlite' && 'SQLite only (PostgreSQL analyzes by itself)';
/** Contacts of the large tenant: 4 owners, scores 0–99, each created a second after the previous. */
const N = 20_000;
const OWNERS = 4;

let scratch: ScratchSqlite;
let database: Database;
before(async () => {
  if (sqliteOnly) return;
  scratch = scratchSqlite('crm-stats-');
  database = scratch.database;
  await migrate(database);
  const now = '2026-01-01T00:00:00.000Z';
  for (const id of ['ten_big', 'ten_small'])
    await database.db.insertInto('tenants').values({ id, name: id, slug: id, locale: 'en', created_at: now }).execute();
  await sql`
    with recursive n(i) as (select 1 union all select i + 1 from n where i < ${N})
    insert into contacts (tenant_id, id, first_name, owner_id, score, custom_properties, created_at, updated_at, deleted_at, search_text)
    select 'ten_big', 'c' || i, 'F' || i, 'usr_' || (i % ${sql.lit(OWNERS)}), i % 100, '{}',
      strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'), '2026-01-01T00:00:00.000Z',
      case when i % 10 = 0 then '2026-02-01T00:00:00.000Z' end, ''
    from n`.execute(database.db);
  await sql`insert into contacts (tenant_id, id, first_name, custom_properties, created_at, updated_at, search_text) values ('ten_small', 's1', 'S', '{}', ${now}, ${now}, '')`.execute(
    database.db,
  );
});
after(async () => {
  if (sqliteOnly) return;
  await scratch.remove();
});

const statOf = async (index: string) => (await sql<{ stat: string }>`select stat from sqlite_stat1 where idx = ${index}`.execute(database.db)).rows[0]?.stat;

async function planOf(query: string, params: unknown[]): Promise<string> {
  const rows = (
    await database.db.executeQuery({
      sql: `explain query plan ${query}`,
      parameters: params,
      query: { kind: 'RawNode' } as never,
      queryId: { queryId: 'plan' },
    })
  ).rows;
  return (rows as { detail: string }[]).map((r) => r.detail).join('\n');
}

test('a stat line: rows, then the average rows per distinct value of each leading prefix, rounded up', () => {
  assert.equal(statLine(1_000_000, [1, 4, 1_000_000], 3), '1000000 1000000 250000 1');
  assert.equal(statLine(10, [3], 2), '10 4 1'); // a unique index's last prefix is one row per value
  assert.equal(statLine(5, [0], 1), '5 5');
  assert.deepEqual(
    measuringStatements({ table: 'contacts', index: 'contacts__owner', columns: ['tenant_id', 'owner_id'], where: 'deleted_at is null', unique: false }),
    [
      'select count(*) as n from "contacts" indexed by "contacts__owner" where deleted_at is null',
      'select count(*) as n from (select 1 from "contacts" indexed by "contacts__owner" where deleted_at is null group by "tenant_id")',
      'select count(*) as n from (select 1 from "contacts" indexed by "contacts__owner" where deleted_at is null group by "tenant_id", "owner_id")',
    ],
  );
});

test(
  'optimize measures every index: its rows (partial indexes: only theirs) and its prefixes, not the first rows ANALYZE samples',
  { skip: sqliteOnly },
  async () => {
    await database.optimize((index, err) => assert.fail(`${index}: ${String(err)}`));
    const live = N - N / 10 + 1; // the partial indexes hold live rows only (deleted_at is null)
    // (tenant_id, owner_id, created_at, id, score) since migrations 011 and 015: 2 tenants, 4 owners of the big
    // one plus the small one's none; a creation time, and then an id (and the score after it), pins one row.
    assert.equal(await statOf('contacts__owner'), `${live} ${Math.ceil(live / 2)} ${Math.ceil(live / (OWNERS + 1))} 1 1 1`);
    // ANALYZE's sample (analysis_limit 1000) read ~1,000 rows of one tenant and owner: "1001" per tenant.
    const [, perTenant] = (await statOf('contacts__score'))!.split(' ').map(Number);
    assert.ok(perTenant > 1001, `rows per tenant ${perTenant}`);
    // A second pass measures again (tables grow), and keeps no per-value samples (stat4: re-planning).
    await database.optimize();
    assert.equal(await statOf('contacts__owner'), `${live} ${Math.ceil(live / 2)} ${Math.ceil(live / (OWNERS + 1))} 1 1 1`);
    const stat4 = await sql<{ n: number }>`select count(*) as n from sqlite_stat4`.execute(database.db).catch(() => ({ rows: [{ n: 0 }] }));
    assert.equal(Number(stat4.rows[0].n), 0);
  },
);

test('an index added after the first pass (a migration) gets its line on the next pass, measured', { skip: sqliteOnly }, async () => {
  await database.optimize();
  await sql`create index contacts__stats_test on contacts (tenant_id, score) where deleted_at is null`.execute(database.db);
  // Without a line SQLite takes an index for highly selective, and may walk it for any query of its table.
  assert.equal(await statOf('contacts__stats_test'), undefined);
  await database.optimize();
  const live = N - N / 10 + 1;
  // Live rows (i % 10 ≠ 0) hold 90 scores; the small tenant's contact has none: 91 (tenant, score) values.
  assert.equal(await statOf('contacts__stats_test'), `${live} ${Math.ceil(live / 2)} ${Math.ceil(live / 91)}`);
  await sql`drop index contacts__stats_test`.execute(database.db);
});

test(
  'with measured statistics, owner + score range ordered by creation walks an ordered index instead of sorting the score range',
  { skip: sqliteOnly },
  async () => {
    await database.optimize();
    const page = `select id from contacts where tenant_id = ? and owner_id = ? and score >= ? and deleted_at is null order by created_at desc, id desc limit 50`;
    const plan = await planOf(page, ['ten_big', 'usr_1', 60]);
    assert.match(plan, /contacts__owner \(/, plan);
    assert.doesNotMatch(plan, /contacts__score|contacts__owner_score/, plan);
    assert.doesNotMatch(plan, /TEMP B-TREE/, plan);
    const rows = (
      await database.db.executeQuery({ sql: page, parameters: ['ten_big', 'usr_1', 60], query: { kind: 'RawNode' } as never, queryId: { queryId: 'page' } })
    ).rows;
    assert.equal(rows.length, 50);
  },
);

test(
  "with measured statistics, the total of owner + score range counts one range of contacts__owner_score (migration 012), not the rows of one condition's index",
  { skip: sqliteOnly },
  async () => {
    await database.optimize();
    const count = `select count(*) as n from contacts where tenant_id = ? and deleted_at is null and owner_id = ? and score >= ?`;
    const plan = await planOf(count, ['ten_big', 'usr_1', 60]);
    assert.match(plan, /contacts__owner_score \(tenant_id=\? AND owner_id=\? AND score>\?\)/, plan);
    const rows = (
      await database.db.executeQuery({ sql: count, parameters: ['ten_big', 'usr_1', 60], query: { kind: 'RawNode' } as never, queryId: { queryId: 'count' } })
    ).rows as { n: number }[];
    // Live contacts of owner 1 (i % 4 = 1, i % 10 ≠ 0) with i % 100 ≥ 60.
    let expected = 0;
    for (let i = 1; i <= N; i++) if (i % OWNERS === 1 && i % 10 !== 0 && i % 100 >= 60) expected++;
    assert.equal(Number(rows[0].n), expected);
  },
);

test('the read processes plan with the new lines at their next statement, not with those they started with', { skip: sqliteOnly }, async () => {
  await database.optimize();
  const pool = database.readPool!;
  pool.warm();
  // Two single-condition indexes (owner and score together have their own since migration 012).
  const query = `explain query plan select id from contacts where tenant_id = ? and company_id = ? and score = ? and deleted_at is null`;
  const tenants = ['ten_big', 'ten_small'];
  let round = 0;
  /** The plan on each read connection (two tenants at once take both), after a statement that reads data. */
  const plansOnReaders = async () => {
    // A statement that reads the database is the one that notices a schema change (EXPLAIN reads nothing).
    await Promise.all(tenants.map((t) => pool.run(t, 'select count(*) as n from contacts where tenant_id = ?', [t])));
    round++; // a new text: a statement prepared anew
    const plans = await Promise.all(tenants.map((t) => pool.run(t, `${query} -- ${round}`, ['ten_big', 'com_1', 7])));
    return plans.map((rows) => (rows as { detail: string }[]).map((r) => r.detail).join('\n'));
  };
  // Lines written by hand, through a connection of the file of its own (the writer's is not exposed).
  const { default: SqliteDatabase } = await import('../../src/db/sqlite-driver.mjs');
  const writer = new SqliteDatabase(scratch.file);
  writer.pragma('busy_timeout = 5000');
  const install = (company: string, score: string) =>
    installStatLines(writer, [
      { table: 'contacts', index: 'contacts__company', stat: company },
      { table: 'contacts', index: 'contacts__score', stat: score },
    ]);
  try {
    install('18001 9001 1', '18001 9001 9001'); // the company pins one row; a score value holds all
    for (const plan of await plansOnReaders()) assert.match(plan, /contacts__company/);
    install('18001 9001 9001', '18001 9001 1'); // the reverse
    for (const plan of await plansOnReaders()) assert.match(plan, /contacts__score/);
  } finally {
    writer.close();
    await database.optimize();
  }
});
