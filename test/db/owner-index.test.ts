// Migration 011: a page of contacts or companies filtered by owner, in the lists' default order
// (created_at, ties by id), walks the owner index in that order — no sort of the owner's rows, and on
// SQLite no walk of the created_at index that reads every row it passes to test the owner. Plans are
// asserted, never times; the rows of the page are checked against the order the API promises.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECT, newTenant, testApp, type Tenant } from '../helpers/app.js';

const CONTACTS = 20_000;
const COMPANIES = 8_000;
const OWNERS = 4;

// PostgreSQL keeps its database across runs: the rows go before the app (registered next) closes it.
after(async () => {
  if (!tenant) return;
  await db.deleteFrom('contacts').where('tenant_id', '=', tenant.tenantId).where('id', 'like', 'oc%').execute();
  await db.deleteFrom('companies').where('tenant_id', '=', tenant.tenantId).where('id', 'like', 'oc%').execute();
});
const t = await testApp();
const db = t.database.db;
let tenant: Tenant;

before(async () => {
  tenant = await newTenant(t);
  // Owners round-robin, so an owner's rows are spread over the whole table; one creation time for all, so
  // the order inside the index must come from the id as well.
  await sql`
    with recursive n(i) as (select 1 union all select i + 1 from n where i < ${CONTACTS})
    insert into contacts (tenant_id, id, first_name, last_name, email, phone, company_id, owner_id, score, custom_properties, created_at, updated_at, deleted_at, search_text)
    select cast(${tenant.tenantId} as text), 'oc' || i, 'F' || i, null, null, null, null, 'own' || (i % ${sql.lit(OWNERS)}), i % 100, '{}',
      '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', null, 'f' || i
    from n`.execute(db);
  await sql`
    with recursive n(i) as (select 1 union all select i + 1 from n where i < ${COMPANIES})
    insert into companies (tenant_id, id, name, cnpj, website, domain, phone, industry, owner_id, custom_properties, created_at, updated_at, deleted_at, search_text)
    select cast(${tenant.tenantId} as text), 'oc' || i, 'C' || i, null, null, null, null, null, 'own' || (i % ${sql.lit(OWNERS)}), '{}',
      '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', null, 'c' || i
    from n`.execute(db);
  if (DIALECT === 'postgres') await sql`analyze contacts, companies`.execute(db);
  else await t.database.optimize();
});

const pageSql = (table: string, offset: number) =>
  `select id from ${table} where tenant_id = $1 and deleted_at is null and owner_id = $2 order by created_at desc, id desc limit 50 offset ${offset}`;

async function planOf(table: string, offset: number): Promise<string> {
  const text = pageSql(table, offset);
  const query = DIALECT === 'postgres' ? `explain ${text}` : `explain query plan ${text.replace(/\$\d/g, '?')}`;
  const rows = (await db.executeQuery({ sql: query, parameters: [tenant.tenantId, 'own1'], query: { kind: 'RawNode' } as never, queryId: { queryId: 'plan' } })).rows as Record<string, unknown>[];
  return rows.map((r) => String(r['QUERY PLAN'] ?? r.detail)).join('\n');
}

for (const table of ['contacts', 'companies']) {
  test(`${table} filtered by owner: a deep page walks ${table}__owner in the list's order, with no sort (${DIALECT})`, async () => {
    for (const offset of [0, 950]) {
      const plan = await planOf(table, offset);
      assert.match(plan, new RegExp(`${table}__owner`), plan);
      assert.doesNotMatch(plan, /TEMP B-TREE|Sort/, plan);
    }
  });

  test(`${table} filtered by owner: the page holds that owner's rows, newest first, ties by id descending (${DIALECT})`, async () => {
    const text = pageSql(table, 950);
    const rows = (await db.executeQuery({ sql: DIALECT === 'postgres' ? text : text.replace(/\$\d/g, '?'), parameters: [tenant.tenantId, 'own1'], query: { kind: 'RawNode' } as never, queryId: { queryId: 'page' } })).rows as { id: string }[];
    const n = table === 'contacts' ? CONTACTS : COMPANIES;
    // Every created_at is equal: the order is by id descending, as text.
    const ids = Array.from({ length: n }, (_, k) => k + 1).filter((i) => i % OWNERS === 1).map((i) => `oc${i}`).sort().reverse();
    assert.deepEqual(rows.map((r) => r.id), ids.slice(950, 1000));
  });
}
