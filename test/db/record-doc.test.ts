// Migration 014: contacts and companies store the record as the API answers it (`doc`), a generated column the
// database recomputes on every write. Every read of a contact or a company sends it as it is, so it must never
// go stale: filled for the rows written before the migration (SQLite rebuilds the tables: every row, column and
// index must survive), then recomputed on every insert and update, including the tag triggers' (migration 013),
// and never writable by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECT } from '../helpers/app.js';
import { scratchDatabase } from '../helpers/scratch-db.js';
import { toContact } from '../../src/modules/contacts/contacts.service.js';
import { toCompany } from '../../src/modules/companies/companies.service.js';

const { database, migrator } = await scratchDatabase('mig014');
const db = database.db as any;
const now = '2026-01-01T00:00:00.000Z';
const TENANTS = ['ten_a', 'ten_b'];
const ODD = 'Zoë "q" \\ \n\t\u0001 ✓ 😀 \u2028';

/** Every row of `table` (doc parsed), by tenant and id. */
async function rows(table: 'contacts' | 'companies'): Promise<any[]> {
  return db.selectFrom(table).selectAll().orderBy('tenant_id').orderBy('id').execute();
}

/** Each row's doc reads, keys in order, as the resource's mapper makes the row. */
function assertDocs(table: 'contacts' | 'companies', list: any[]) {
  assert.ok(list.length > 0);
  for (const r of list) {
    const want =
      table === 'contacts'
        ? toContact({ ...r, deleted_at: undefined }, JSON.parse(r.tag_ids))
        : toCompany({ ...r, deleted_at: undefined }, JSON.parse(r.tag_ids));
    const got = JSON.parse(r.doc);
    assert.deepStrictEqual(got, want, `${table} ${r.tenant_id}/${r.id}`);
    assert.deepStrictEqual(Object.keys(got), Object.keys(want), `${table} ${r.tenant_id}/${r.id}: key order`);
  }
}

async function indexes(table: string): Promise<string[]> {
  const q =
    DIALECT === 'sqlite'
      ? sql<{ d: string }>`select name || ': ' || sql as d from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`
      : sql<{ d: string }>`select indexname || ': ' || indexdef as d from pg_indexes where tablename = ${table} and schemaname = current_schema()`;
  return (await q.execute(db)).rows.map((r) => r.d).sort();
}

const docOf = async (table: 'contacts' | 'companies', tenant: string, id: string) =>
  JSON.parse((await db.selectFrom(table).select('doc').where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirstOrThrow()).doc);

test(`migration 014 stores every existing contact and company as its mapper makes it, and keeps every row and index (${DIALECT})`, async () => {
  assert.ifError((await migrator.migrateTo('013_record_tag_ids')).error);
  const scores = [0.1 + 0.2, 82, null, -17.25];
  for (const tenant of TENANTS) {
    await db
      .insertInto('tenants')
      .values({ id: tenant, name: tenant, slug: `${tenant}-${process.pid}`, locale: 'en', created_at: now })
      .execute();
    for (const [i, id] of ['r1', 'r2', 'r3', 'r4'].entries()) {
      await db
        .insertInto('contacts')
        .values({
          tenant_id: tenant,
          id,
          first_name: i === 0 ? ODD : `F${i}`,
          last_name: i === 1 ? null : ODD,
          email: i === 2 ? null : `${id}@x.test`,
          phone: null,
          company_id: i % 2 ? 'r1' : null,
          owner_id: i === 3 ? 'usr_1' : null,
          score: scores[i],
          custom_properties: i === 1 ? JSON.stringify({ n: 1.5, deep: { a: [1, 'x', null, true] }, t: ODD }) : '{}',
          created_at: now,
          updated_at: now,
          deleted_at: id === 'r4' ? now : null,
          search_text: 's',
        })
        .execute();
      await db
        .insertInto('companies')
        .values({
          tenant_id: tenant,
          id,
          name: i === 0 ? ODD : `C${i}`,
          cnpj: null,
          website: i === 1 ? 'https://x.test' : null,
          domain: null,
          phone: null,
          industry: i === 2 ? ODD : null,
          owner_id: null,
          custom_properties: i === 2 ? '{"k":[1,2]}' : '{}',
          created_at: now,
          updated_at: now,
          deleted_at: null,
          search_text: 's',
        })
        .execute();
    }
    await db
      .insertInto('record_tags')
      .values([
        { tenant_id: tenant, object_type: 'contact', object_id: 'r1', tag_id: 'tb' },
        { tenant_id: tenant, object_type: 'contact', object_id: 'r1', tag_id: 'Zed' },
        { tenant_id: tenant, object_type: 'company', object_id: 'r2', tag_id: 'tc' },
      ])
      .execute();
  }
  const before = { contacts: await rows('contacts'), companies: await rows('companies') };
  const indexesBefore = { contacts: await indexes('contacts'), companies: await indexes('companies') };
  assert.ok(indexesBefore.contacts.length >= 8, indexesBefore.contacts.join('\n'));

  assert.ifError((await migrator.migrateTo('014_record_doc')).error);
  for (const table of ['contacts', 'companies'] as const) {
    const after = await rows(table);
    assert.deepStrictEqual(
      after.map(({ doc, ...r }) => r),
      before[table],
      `${table}: every row and column kept`,
    );
    assertDocs(table, after);
    assert.deepStrictEqual(await indexes(table), indexesBefore[table], `${table}: every index kept`);
  }
  assert.deepEqual((await docOf('contacts', 'ten_a', 'r1')).tags, ['Zed', 'tb']);
});

test(`doc follows every insert and update of its row, the tag triggers' included (${DIALECT})`, async () => {
  const [a, b] = TENANTS;
  await db
    .insertInto('contacts')
    .values({
      tenant_id: a,
      id: 'r9',
      first_name: 'New',
      last_name: null,
      email: null,
      phone: null,
      company_id: null,
      owner_id: null,
      score: 5,
      custom_properties: '{"p":true}',
      created_at: now,
      updated_at: now,
      deleted_at: null,
      search_text: '',
    })
    .execute();
  assertDocs('contacts', await rows('contacts'));
  await db
    .updateTable('contacts')
    .set({ first_name: 'Renamed', score: 1e21, custom_properties: '{"p":false}', updated_at: '2026-02-02T00:00:00.000Z' })
    .where('tenant_id', '=', a)
    .where('id', '=', 'r9')
    .execute();
  assert.deepEqual(await docOf('contacts', a, 'r9'), {
    id: 'r9',
    firstName: 'Renamed',
    lastName: null,
    email: null,
    phone: null,
    companyId: null,
    ownerId: null,
    tags: [],
    customProperties: { p: false },
    score: 1e21,
    createdAt: now,
    updatedAt: '2026-02-02T00:00:00.000Z',
  });
  // Tags through record_tags only (migration 013's triggers rewrite tag_ids, and so doc).
  await db
    .insertInto('record_tags')
    .values([
      { tenant_id: a, object_type: 'contact', object_id: 'r9', tag_id: 'z' },
      { tenant_id: a, object_type: 'contact', object_id: 'r9', tag_id: 'a' },
      { tenant_id: a, object_type: 'company', object_id: 'r1', tag_id: 'k' },
    ])
    .execute();
  assert.deepEqual((await docOf('contacts', a, 'r9')).tags, ['a', 'z']);
  assert.deepEqual((await docOf('companies', a, 'r1')).tags, ['k']);
  assert.deepEqual((await docOf('companies', b, 'r1')).tags, [], 'the other tenant untouched');
  await db.deleteFrom('record_tags').where('tenant_id', '=', a).where('tag_id', '=', 'z').execute();
  assert.deepEqual((await docOf('contacts', a, 'r9')).tags, ['a']);
  // A soft delete rewrites the row; doc never carries deletedAt (listings with includeDeleted append it).
  await db.updateTable('companies').set({ deleted_at: now, name: 'Gone' }).where('tenant_id', '=', b).where('id', '=', 'r3').execute();
  assert.equal((await docOf('companies', b, 'r3')).name, 'Gone');
  assert.equal('deletedAt' in (await docOf('companies', b, 'r3')), false);
  assertDocs('contacts', await rows('contacts'));
  assertDocs('companies', await rows('companies'));
});

test(`doc cannot be written (${DIALECT})`, async () => {
  await assert.rejects(sql`update contacts set doc = '{}' where id = 'r1'`.execute(db));
  await assert.rejects(
    sql`insert into companies (tenant_id, id, name, custom_properties, created_at, updated_at, doc) values ('ten_a', 'x', 'X', '{}', ${now}, ${now}, '{}')`.execute(
      db,
    ),
  );
});
