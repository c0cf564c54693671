// Migration 013: contacts, companies and deals carry their tag ids (`tag_ids`, a sorted JSON array) kept from
// record_tags by the database's triggers. Every read takes a record's tags from it, so it must never go stale:
// filled for the rows written before the migration, then kept on every insert and delete of record_tags —
// one row or many at once, by record or by tag — without touching another type's or another tenant's record,
// and (PostgreSQL) when two transactions tag the same record at the same time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { DIALECT } from '../helpers/app.js';
import { scratchDatabase } from '../helpers/scratch-db.js';

const { database, migrator, url } = await scratchDatabase('mig013');
const db = database.db as any;
const now = '2026-01-01T00:00:00.000Z';
const TENANTS = ['ten_a', 'ten_b'];

async function tagIds(table: 'contacts' | 'companies' | 'deals', tenant: string, id: string): Promise<string> {
  return (await db.selectFrom(table).select('tag_ids').where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirstOrThrow()).tag_ids;
}

const link = (tenant: string, type: string, id: string, tag: string) => ({ tenant_id: tenant, object_type: type, object_id: id, tag_id: tag });

test(`migration 013 fills tag_ids of the records tagged before it, sorted by code point (${DIALECT})`, async () => {
  assert.ifError((await migrator.migrateTo('012_contacts_owner_score')).error);
  for (const [i, tenant] of TENANTS.entries()) {
    await db
      .insertInto('tenants')
      .values({ id: tenant, name: tenant, slug: `${tenant}-${process.pid}`, locale: 'en', created_at: now })
      .execute();
    // The same ids in both tenants, and a deal with a contact's id.
    for (const id of ['r1', 'r2', 'r3']) {
      await db
        .insertInto('contacts')
        .values({
          tenant_id: tenant,
          id,
          first_name: 'F',
          last_name: null,
          email: null,
          phone: null,
          company_id: null,
          owner_id: null,
          score: null,
          custom_properties: '{}',
          created_at: now,
          updated_at: now,
          deleted_at: id === 'r3' ? now : null,
          search_text: '',
        })
        .execute();
      await db
        .insertInto('companies')
        .values({
          tenant_id: tenant,
          id,
          name: 'C',
          cnpj: null,
          website: null,
          domain: null,
          phone: null,
          industry: null,
          owner_id: null,
          custom_properties: '{}',
          created_at: now,
          updated_at: now,
          deleted_at: null,
          search_text: '',
        })
        .execute();
    }
    // Inserted out of order, mixed case: code point order puts 'Zed' before 'alpha'.
    await db
      .insertInto('record_tags')
      .values([
        link(tenant, 'contact', 'r1', 'tb'),
        link(tenant, 'contact', 'r1', 'alpha'),
        link(tenant, 'contact', 'r1', 'Zed'),
        link(tenant, 'contact', 'r3', `only_${i}`), // a soft-deleted contact keeps its tags
        link(tenant, 'company', 'r1', 'tc'),
        link(tenant, 'deal', 'r2', 'td'), // no such deal: nothing to fill, and contact r2 is not touched
      ])
      .execute();
  }
  assert.ifError((await migrator.migrateTo('013_record_tag_ids')).error);
  for (const [i, tenant] of TENANTS.entries()) {
    assert.equal(await tagIds('contacts', tenant, 'r1'), '["Zed","alpha","tb"]');
    assert.equal(await tagIds('contacts', tenant, 'r2'), '[]');
    assert.equal(await tagIds('contacts', tenant, 'r3'), `["only_${i}"]`);
    assert.equal(await tagIds('companies', tenant, 'r1'), '["tc"]');
    assert.equal(await tagIds('companies', tenant, 'r2'), '[]');
  }
});

test(`record_tags' inserts and deletes keep tag_ids, one row or many, by record or by tag (${DIALECT})`, async () => {
  const [a, b] = TENANTS;
  // One row, then several rows of several records in one statement.
  await db
    .insertInto('record_tags')
    .values(link(a, 'contact', 'r2', 'x"quote'))
    .execute();
  assert.equal(await tagIds('contacts', a, 'r2'), '["x\\"quote"]');
  await db
    .insertInto('record_tags')
    .values([link(a, 'contact', 'r2', 'm'), link(a, 'contact', 'r1', 'm'), link(a, 'company', 'r2', 'm'), link(a, 'company', 'r2', 'ñ')])
    .execute();
  assert.equal(await tagIds('contacts', a, 'r2'), '["m","x\\"quote"]');
  assert.equal(await tagIds('contacts', a, 'r1'), '["Zed","alpha","m","tb"]');
  assert.equal(await tagIds('companies', a, 'r2'), '["m","ñ"]');
  // The other tenant's records with the same ids, and the other types, are not touched.
  assert.equal(await tagIds('contacts', b, 'r2'), '[]');
  assert.equal(await tagIds('companies', b, 'r2'), '[]');
  // A record's tags replaced (PATCH: delete all, insert the new set).
  await db.deleteFrom('record_tags').where('tenant_id', '=', a).where('object_type', '=', 'contact').where('object_id', '=', 'r1').execute();
  assert.equal(await tagIds('contacts', a, 'r1'), '[]');
  await db
    .insertInto('record_tags')
    .values(link(a, 'contact', 'r1', 'n'))
    .execute();
  assert.equal(await tagIds('contacts', a, 'r1'), '["n"]');
  // A tag deleted from every record that carries it (DELETE /tags/:id).
  await db.deleteFrom('record_tags').where('tenant_id', '=', a).where('tag_id', '=', 'm').execute();
  assert.equal(await tagIds('contacts', a, 'r2'), '["x\\"quote"]');
  assert.equal(await tagIds('companies', a, 'r2'), '["ñ"]');
  assert.equal(await tagIds('contacts', b, 'r1'), '["Zed","alpha","tb"]');
  // Deals too.
  await db
    .insertInto('deals')
    .values({
      tenant_id: a,
      id: 'd1',
      title: 'D',
      value_cents: null,
      currency: 'BRL',
      pipeline_id: 'p1',
      stage_id: 's1',
      contact_id: null,
      company_id: null,
      owner_id: null,
      expected_close_date: null,
      custom_properties: '{}',
      is_won: 0,
      is_lost: 0,
      closed_at: null,
      loss_reason_id: null,
      loss_notes: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      search_text: '',
    })
    .execute();
  await db
    .insertInto('record_tags')
    .values([link(a, 'deal', 'd1', 'q'), link(a, 'deal', 'd1', 'p')])
    .execute();
  assert.equal(await tagIds('deals', a, 'd1'), '["p","q"]');
  assert.deepEqual(JSON.parse(await tagIds('deals', a, 'd1')), ['p', 'q']);
});

test('PostgreSQL: two transactions tagging the same record at once leave both tags in tag_ids', { skip: DIALECT !== 'postgres' }, async () => {
  const one = new pg.Client({ connectionString: url });
  const two = new pg.Client({ connectionString: url });
  await one.connect();
  await two.connect();
  try {
    const [a] = TENANTS;
    await one.query('begin');
    await one.query(`insert into record_tags (tenant_id, object_type, object_id, tag_id) values ($1, 'company', 'r3', 'race1')`, [a]);
    await two.query('begin');
    // Waits for `one`'s lock on the company's row (its trigger updated it), then must see race1 committed.
    const second = two.query(`insert into record_tags (tenant_id, object_type, object_id, tag_id) values ($1, 'company', 'r3', 'race2')`, [a]);
    await new Promise((r) => setTimeout(r, 100));
    await one.query('commit');
    await second;
    await two.query('commit');
    assert.equal(await tagIds('companies', a, 'r3'), '["race1","race2"]');
  } finally {
    await one.end();
    await two.end();
  }
});
