// Migration 009 fills `search_text` of rows written before it, in batches, as the repos write it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { SEARCH_TEXT } from '../../src/db/search-text.js';
import { DIALECT } from '../helpers/app.js';
import { scratchDatabase } from '../helpers/scratch-db.js';

test(`migration 009 fills search_text of existing rows, past one batch (${DIALECT})`, async () => {
  const { database, migrator: m } = await scratchDatabase('mig009');
  const before = await m.migrateTo('008_event_log_commit_order');
  assert.ifError(before.error);
  const db = database.db as any;
  const now = '2026-01-01T00:00:00.000Z';
  const tenant = 'ten_mig';
  await db
    .insertInto('tenants')
    .values({ id: tenant, name: 'Mig', slug: `mig-${process.pid}`, locale: 'en', created_at: now })
    .execute();
  const N = 2_345; // more than two batches of 1,000
  const contacts = Array.from({ length: N }, (_, i) => ({
    tenant_id: tenant,
    id: `c${String(i).padStart(5, '0')}`,
    first_name: i % 2 ? 'João' : 'ÂNGELA',
    last_name: i % 3 ? `Gonçalves ${i}` : null,
    email: i % 5 ? `p${i}@exemplo.com` : null,
    phone: null,
    company_id: null,
    owner_id: null,
    score: null,
    custom_properties: '{}',
    created_at: now,
    updated_at: now,
    deleted_at: i === 7 ? now : null,
  }));
  for (let i = 0; i < N; i += 500)
    await db
      .insertInto('contacts')
      .values(contacts.slice(i, i + 500))
      .execute();
  await db
    .insertInto('companies')
    .values({
      tenant_id: tenant,
      id: 'k1',
      name: 'Açaí Ltda',
      cnpj: '11222333000181',
      website: 'https://açaí.com.br',
      domain: 'xn--aa-oia.com.br',
      phone: null,
      industry: null,
      owner_id: null,
      custom_properties: '{}',
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    .execute();
  await db
    .insertInto('tags')
    .values({ tenant_id: tenant, id: 't1', name: 'Ωμέγα', name_key: 'ωμέγα', color: '#000000', created_at: now, updated_at: now })
    .execute();
  await db
    .insertInto('proposals')
    .values({
      tenant_id: tenant,
      id: 'p1',
      number: 'PR-2026-0001',
      subject: 'Implantação',
      status: 'draft',
      sent_at: null,
      deal_id: null,
      contact_id: null,
      client_id: null,
      recipient_name: null,
      recipient_email: null,
      discount_cents: 0,
      adjustment_cents: 0,
      subtotal_cents: 0,
      total_cents: 0,
      notes: null,
      owner_id: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    .execute();

  const rest = await m.migrateTo('009_search_text');
  assert.ifError(rest.error);
  assert.deepEqual(
    rest.results?.map((r) => r.migrationName),
    ['009_search_text'],
  );

  const rows = await db
    .selectFrom('contacts')
    .select(['id', 'first_name', 'last_name', 'email', 'search_text'])
    .where('tenant_id', '=', tenant)
    .orderBy('id')
    .execute();
  assert.equal(rows.length, N);
  for (const r of rows) assert.equal(r.search_text, SEARCH_TEXT.contacts(r), r.id);
  assert.equal(rows[1].search_text, `joao goncalves 1\u001fp1@exemplo.com`);
  assert.equal(rows[0].search_text, 'angela \u001f', 'no last name, no e-mail');
  const company = await db.selectFrom('companies').select('search_text').where('id', '=', 'k1').executeTakeFirstOrThrow();
  assert.equal(company.search_text, 'acai ltda\u001f11222333000181\u001fhttps://acai.com.br\u001fxn--aa-oia.com.br');
  assert.equal((await db.selectFrom('tags').select('search_text').where('id', '=', 't1').executeTakeFirstOrThrow()).search_text, 'ωμεγα');
  assert.equal(
    (await db.selectFrom('proposals').select('search_text').where('id', '=', 'p1').executeTakeFirstOrThrow()).search_text,
    'pr-2026-0001\u001fimplantacao',
  );
  // The search index of the dialect: trigram (PostgreSQL), or search_text in the default order's index (SQLite).
  const index =
    DIALECT === 'sqlite'
      ? await sql<{ n: number }>`select count(*) as n from pragma_index_info('contacts__created') where name = 'search_text'`.execute(db)
      : await sql<{ n: number }>`select count(*)::int as n from pg_indexes where indexname = 'contacts__search_trgm' and schemaname = current_schema()`.execute(
          db,
        );
  assert.equal(Number(index.rows[0].n), 1);
});
