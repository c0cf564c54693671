// Migration 017: deals store the deal as the API answers it (`doc`), its contact and company null, a generated
// column the database recomputes on every write (as 014 did for contacts and companies). The list and the single
// read send it with the contact's and company's docs spliced in (deals.service.ts dealsJson), so it must never go
// stale: filled for the rows written before the migration (SQLite rebuilds the table: every row, column and index
// must survive), then recomputed on every insert and update, the tag triggers' (migration 013) included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECT } from '../helpers/app.js';
import { scratchDatabase } from '../helpers/scratch-db.js';
import { toDeal } from '../../src/modules/deals/deals.service.js';

const { database, migrator } = await scratchDatabase('mig017');
const db = database.db as any;
const now = '2026-01-01T00:00:00.000Z';
const TENANTS = ['ten_a', 'ten_b'];
const ODD = 'Zoë "q" \\ \n\t\u0001 ✓ 😀 \u2028 "contact":null';
/** Cents whose value needs every digit, none, a sign, or is the largest amount (money.ts MAX_AMOUNT). */
const CENTS = [123456789012345, 0, -1, 1e15, 1, null, 12345, 10];

async function rows(): Promise<any[]> {
  return db.selectFrom('deals').selectAll().orderBy('tenant_id').orderBy('id').execute();
}

/** Each row's doc reads, keys in order, as toDeal makes the row with no contact and no company. */
function assertDocs(list: any[]) {
  assert.ok(list.length > 0);
  for (const r of list) {
    const want = toDeal({ ...r, deleted_at: undefined }, JSON.parse(r.tag_ids), null, null);
    const got = JSON.parse(r.doc);
    assert.deepStrictEqual(got, want, `deal ${r.tenant_id}/${r.id}`);
    assert.deepStrictEqual(Object.keys(got), Object.keys(want), `deal ${r.tenant_id}/${r.id}: key order`);
  }
}

async function indexes(): Promise<string[]> {
  const q =
    DIALECT === 'sqlite'
      ? sql<{ d: string }>`select name || ': ' || sql as d from sqlite_master where type = 'index' and tbl_name = 'deals' and sql is not null`
      : sql<{ d: string }>`select indexname || ': ' || indexdef as d from pg_indexes where tablename = 'deals' and schemaname = current_schema()`;
  return (await q.execute(db)).rows.map((r) => r.d).sort();
}

const docOf = async (tenant: string, id: string) =>
  JSON.parse((await db.selectFrom('deals').select('doc').where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirstOrThrow()).doc);

test(`migration 017 stores every existing deal as toDeal makes it, and keeps every row and index (${DIALECT})`, async () => {
  assert.ifError((await migrator.migrateTo('016_deals_pipeline_updated')).error);
  for (const tenant of TENANTS) {
    await db
      .insertInto('tenants')
      .values({ id: tenant, name: tenant, slug: `${tenant}-${process.pid}`, locale: 'en', created_at: now })
      .execute();
    for (const [i, cents] of CENTS.entries()) {
      await db
        .insertInto('deals')
        .values({
          tenant_id: tenant,
          id: `d${i}`,
          title: i === 0 ? ODD : `Deal ${i}`,
          pipeline_id: 'pip_1',
          stage_id: `stg_${i % 3}`,
          value_cents: cents,
          currency: i % 2 ? 'USD' : 'BRL',
          contact_id: i % 2 ? 'con_1' : null,
          company_id: i % 3 ? 'com_1' : null,
          owner_id: i === 2 ? 'usr_1' : null,
          expected_close_date: i === 3 ? '2026-03-04' : null,
          custom_properties: i === 1 ? JSON.stringify({ n: 1.5, big: 12345678901234567890, deep: { a: [1, 'x', null, true] }, t: ODD, contact: null }) : '{}',
          is_won: i === 4 ? 1 : 0,
          is_lost: i === 5 ? 1 : 0,
          closed_at: i === 4 || i === 5 ? now : null,
          loss_reason_id: i === 5 ? 'lr_1' : null,
          loss_notes: i === 5 ? ODD : null,
          created_at: now,
          updated_at: now,
          deleted_at: i === 7 ? now : null,
          search_text: 's',
        })
        .execute();
    }
    await db
      .insertInto('record_tags')
      .values([
        { tenant_id: tenant, object_type: 'deal', object_id: 'd1', tag_id: 'tb' },
        { tenant_id: tenant, object_type: 'deal', object_id: 'd1', tag_id: 'Zed' },
      ])
      .execute();
  }
  const before = await rows();
  const indexesBefore = await indexes();
  assert.ok(indexesBefore.length >= 7, indexesBefore.join('\n'));

  assert.ifError((await migrator.migrateTo('017_deal_doc')).error);
  const after = await rows();
  assert.deepStrictEqual(
    after.map(({ doc, ...r }) => r),
    before,
    'every row and column kept',
  );
  assertDocs(after);
  assert.deepStrictEqual(await indexes(), indexesBefore, 'every index kept');
  assert.deepEqual((await docOf('ten_a', 'd1')).tags, ['Zed', 'tb']);
  assert.equal((await docOf('ten_a', 'd0')).value, 1234567890123.45);
  assert.equal((await docOf('ten_a', 'd3')).value, 1e13);
  assert.equal((await docOf('ten_a', 'd4')).isWon, true);
});

test(`a deal's doc follows every insert and update of its row, the tag triggers' included (${DIALECT})`, async () => {
  const [a, b] = TENANTS;
  await db
    .insertInto('deals')
    .values({
      tenant_id: a,
      id: 'd9',
      title: 'New',
      pipeline_id: 'pip_1',
      stage_id: 'stg_1',
      value_cents: 999,
      currency: 'EUR',
      contact_id: null,
      company_id: null,
      owner_id: null,
      expected_close_date: null,
      custom_properties: '{"p":true}',
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
  assertDocs(await rows());
  await db
    .updateTable('deals')
    .set({ title: 'Won', value_cents: 5, is_won: 1, closed_at: now, stage_id: 'stg_won', updated_at: '2026-02-02T00:00:00.000Z' })
    .where('tenant_id', '=', a)
    .where('id', '=', 'd9')
    .execute();
  const doc = await docOf(a, 'd9');
  assert.deepEqual(
    [doc.title, doc.value, doc.isWon, doc.closedAt, doc.stageId, doc.updatedAt],
    ['Won', 0.05, true, now, 'stg_won', '2026-02-02T00:00:00.000Z'],
  );
  await db
    .insertInto('record_tags')
    .values([
      { tenant_id: a, object_type: 'deal', object_id: 'd9', tag_id: 'z' },
      { tenant_id: a, object_type: 'deal', object_id: 'd9', tag_id: 'a' },
    ])
    .execute();
  assert.deepEqual((await docOf(a, 'd9')).tags, ['a', 'z']);
  await db.deleteFrom('record_tags').where('tenant_id', '=', a).where('tag_id', '=', 'z').execute();
  assert.deepEqual((await docOf(a, 'd9')).tags, ['a']);
  assert.deepEqual((await docOf(b, 'd1')).tags, ['Zed', 'tb'], 'the other tenant untouched');
  // A soft delete rewrites the row; doc never carries deletedAt (listings with includeDeleted append it).
  await db.updateTable('deals').set({ deleted_at: now, title: 'Gone' }).where('tenant_id', '=', b).where('id', '=', 'd2').execute();
  assert.equal((await docOf(b, 'd2')).title, 'Gone');
  assert.equal('deletedAt' in (await docOf(b, 'd2')), false);
  assertDocs(await rows());
});

test(`a deal's doc cannot be written (${DIALECT})`, async () => {
  await assert.rejects(sql`update deals set doc = '{}' where id = 'd1'`.execute(db));
});
