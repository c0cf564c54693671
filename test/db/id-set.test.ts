// Expansions read records by a set of ids bound as one parameter (db/batch.ts inIdSet): one statement text
// whatever the number of ids (compiled once, planned once per PostgreSQL session), the records' tags in
// the same statement, and no chunking past the old 500-id lists. Both databases.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { idSet, inIdSet } from '../../src/db/batch.js';
import { findCompanies } from '../../src/modules/companies/companies.repo.js';
import { findContacts } from '../../src/modules/contacts/contacts.repo.js';
import { findDeals } from '../../src/modules/deals/deals.repo.js';
import { parseTagIds } from '../../src/modules/shared/record-tags.js';
import { DIALECT, newTenant, testApp, type Tenant } from '../helpers/app.js';

const N = 1_200;
let tenant: Tenant;
let other: Tenant;
let tagA: string;
let tagB: string;

// PostgreSQL keeps its database across runs: the rows go before the app (registered next) closes it.
after(async () => {
  for (const table of ['contacts', 'companies', 'deals'] as const) {
    for (const ten of [tenant, other]) if (ten) await db.deleteFrom(table).where('tenant_id', '=', ten.tenantId).where('id', 'like', 'ix%').execute();
  }
  for (const ten of [tenant, other])
    if (ten) await db.deleteFrom('record_tags').where('tenant_id', '=', ten.tenantId).where('object_id', 'like', 'ix%').execute();
});
const t = await testApp();
const db = t.database.db;

before(async () => {
  tenant = await newTenant(t);
  other = await newTenant(t);
  tagA = (await tenant.api.post('/tags', { name: 'A' })).body.id;
  tagB = (await tenant.api.post('/tags', { name: 'B' })).body.id;
  const now = '2026-01-01T00:00:00.000Z';
  for (const ten of [tenant, other]) {
    // ix1 … ixN; every 10th soft-deleted.
    await sql`
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${N})
      insert into contacts (tenant_id, id, first_name, custom_properties, created_at, updated_at, deleted_at, search_text)
      select cast(${ten.tenantId} as text), 'ix' || i, 'F' || i, '{}', ${now}, ${now}, case when i % 10 = 0 then ${now} end, '' from n`.execute(db);
    await sql`
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${N})
      insert into companies (tenant_id, id, name, custom_properties, created_at, updated_at, deleted_at, search_text)
      select cast(${ten.tenantId} as text), 'ix' || i, 'C' || i, '{}', ${now}, ${now}, case when i % 10 = 0 then ${now} end, '' from n`.execute(db);
    await sql`
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${N})
      insert into deals (tenant_id, id, title, pipeline_id, stage_id, currency, custom_properties, created_at, updated_at, deleted_at, search_text)
      select cast(${ten.tenantId} as text), 'ix' || i, 'D' || i, 'p', 's', 'BRL', '{}', ${now}, ${now}, case when i % 10 = 0 then ${now} end, '' from n`.execute(
      db,
    );
  }
  // Tags of the first tenant's records: odd ids carry A, multiples of 3 carry B.
  for (const objectType of ['contact', 'company', 'deal']) {
    await sql`
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${N})
      insert into record_tags (tenant_id, object_type, object_id, tag_id)
      select cast(${tenant.tenantId} as text), cast(${objectType} as text), 'ix' || i, cast(${tagA} as text) from n where i % 2 = 1
      union all
      select cast(${tenant.tenantId} as text), cast(${objectType} as text), 'ix' || i, cast(${tagB} as text) from n where i % 3 = 0`.execute(db);
  }
});

test(`one statement text and one parameter for any number of ids (${DIALECT})`, () => {
  const compile = (ids: string[]) =>
    db
      .selectFrom('contacts')
      .select('id')
      .where(inIdSet(db, 'id', idSet(db, ids)))
      .compile();
  const small = compile(['a', 'b']);
  const large = compile(Array.from({ length: 5_000 }, (_, i) => `id${i}`));
  assert.equal(small.sql, large.sql);
  assert.equal(small.parameters.length, 1);
  assert.equal(large.parameters.length, 1);
});

const expectedTags = (i: number) => [...(i % 2 === 1 ? [tagA] : []), ...(i % 3 === 0 ? [tagB] : [])].sort();

for (const [name, find] of [
  ['contacts', findContacts],
  ['companies', findCompanies],
  ['deals', findDeals],
] as const) {
  test(`${name} by ${N} ids, with duplicates, unknown and deleted ones: the live ones of the tenant, with their tags (${DIALECT})`, async () => {
    const ids = Array.from({ length: N }, (_, k) => `ix${k + 1}`);
    const asked = [...ids, 'ix1', 'ix2', 'nope', "ix1' or 1=1 --", '%', ''];
    const rows = (await find(db, tenant.tenantId, asked)) as { id: string; tag_ids: string }[];
    const live = ids.filter((_, k) => (k + 1) % 10 !== 0);
    assert.deepEqual(rows.map((r) => r.id).sort(), [...live].sort());
    for (const r of rows) {
      const i = Number(r.id.slice(2));
      assert.deepEqual(parseTagIds(r.tag_ids), expectedTags(i), r.id);
    }
    // Another tenant's records of the same ids are its own: no tag of the first tenant, no row of it.
    const theirs = (await find(db, other.tenantId, ids.slice(0, 20))) as { id: string; tag_ids: string }[];
    assert.equal(theirs.length, 18);
    assert.ok(theirs.every((r) => r.tag_ids === '[]'));
    assert.deepEqual(await find(db, tenant.tenantId, []), []);
  });
}
