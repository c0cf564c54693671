// CONTRACT D.3 duplicates: GET /contacts/duplicates and GET /companies/duplicates list pairs of live records that
// share a rule's key (e-mail without +tag and Gmail dots; folded name with the same company or e-mail domain;
// company name without legal suffixes; registrable domain; CNPJ root; phone), most likely first, each pair once
// with a < b, paged by cursor; `reason` narrows to one rule; a deleted (or merged: soft-deleted) record leaves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { newTenant, testApp, type Client } from '../helpers/app.js';
import { cnpjCheckDigits } from '../../src/domain/cnpj.js';

const t = await testApp();

async function post(api: Client, url: string, body: Record<string, unknown>): Promise<any> {
  const r = await api.post(url, body);
  assert.equal(r.status, 201, `${url} ${JSON.stringify(r.body)}`);
  return r.body;
}
const cnpj = (base12: string) => base12 + cnpjCheckDigits(base12);
const pairOf = (a: string, b: string) => (a < b ? [a, b] : [b, a]);

async function duplicates(api: Client, url: string): Promise<any> {
  const r = await api.get(url);
  assert.equal(r.status, 200, `${url} ${JSON.stringify(r.body)}`);
  return r.body;
}

test('contacts: ana+crm@gmail.com ~ a.na@gmail.com by e-mail; the same folded name at one company or e-mail domain; exactly the rules that matched', async () => {
  const { api } = await newTenant(t);
  const co = await post(api, '/companies', { name: 'Acme' });
  const a = await post(api, '/contacts', { firstName: 'Ana', lastName: 'Souza', email: 'ana+crm@gmail.com' });
  const b = await post(api, '/contacts', { firstName: 'ANA', lastName: 'souza', email: 'a.na@gmail.com' });
  const c = await post(api, '/contacts', { firstName: 'João', lastName: 'Silva', companyId: co.id });
  const d = await post(api, '/contacts', { firstName: 'Joao ', lastName: 'SILVA', companyId: co.id, email: 'joao@acme.test' });
  const e = await post(api, '/contacts', { firstName: 'Joao', lastName: 'Silva', email: 'js@other.test' }); // no shared company or domain
  await post(api, '/contacts', { firstName: 'Ana', lastName: 'Souza', email: 'ana@acme.test' }); // same name, other domain, no company

  const body = await duplicates(api, '/contacts/duplicates');
  assert.deepEqual(body.data, [
    { ids: pairOf(a.id, b.id), score: 0.96, reasons: ['email', 'name'] },
    { ids: pairOf(c.id, d.id), score: 0.6, reasons: ['name'] },
  ]);
  assert.equal(body.pagination.total, 2);
  assert.equal(body.pagination.nextCursor, null);
  assert.ok(!JSON.stringify(body).includes(e.id));

  const byEmail = await duplicates(api, '/contacts/duplicates?reason=email');
  assert.deepEqual(byEmail.data, [{ ids: pairOf(a.id, b.id), score: 0.9, reasons: ['email'] }]);
  const bad = await api.get('/contacts/duplicates?reason=cnpj');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, 'validation_failed');
});

test('companies: Acme Ltda ~ ACME S.A. by name; registrable domain (mind acme.com.br), CNPJ root and phone', async () => {
  const { api } = await newTenant(t);
  const a = await post(api, '/companies', { name: 'Acme Ltda', domain: 'sales.acme.com', cnpj: cnpj('112223330001') });
  const b = await post(api, '/companies', { name: 'ACME S.A.', domain: 'acme.com', cnpj: cnpj('112223330002') });
  const c = await post(api, '/companies', { name: 'Beta Comércio', domain: 'loja.beta.com.br', phone: '+55 11 3333-4444' });
  const d = await post(api, '/companies', { name: 'Gamma', domain: 'beta.com.br', phone: '(11) 3333-4444' });
  const e = await post(api, '/companies', { name: 'Delta', domain: 'delta.com.br' }); // shares only `com.br` with c and d

  const body = await duplicates(api, '/companies/duplicates');
  assert.deepEqual(body.data, [
    { ids: pairOf(a.id, b.id), score: 0.976, reasons: ['cnpj', 'domain', 'name'] },
    { ids: pairOf(c.id, d.id), score: 0.91, reasons: ['domain', 'phone'] },
  ]);
  assert.ok(!JSON.stringify(body).includes(e.id));
  for (const [reason, ids] of [
    ['name', pairOf(a.id, b.id)],
    ['cnpj', pairOf(a.id, b.id)],
    ['phone', pairOf(c.id, d.id)],
  ] as const) {
    assert.deepEqual(
      (await duplicates(api, `/companies/duplicates?reason=${reason}`)).data.map((p: any) => p.ids),
      [ids],
      reason,
    );
  }
  assert.equal((await duplicates(api, '/companies/duplicates?reason=domain')).data.length, 2);
});

test('a deleted record leaves its pairs (a merge soft-deletes), and another tenant sees none of them', async () => {
  const { api } = await newTenant(t);
  const a = await post(api, '/contacts', { firstName: 'Rita', email: 'rita+1@x.test' });
  const b = await post(api, '/contacts', { firstName: 'Rute', email: 'rita+2@x.test' });
  const c = await post(api, '/contacts', { firstName: 'Rosa', email: 'rita@x.test' });
  assert.equal((await duplicates(api, '/contacts/duplicates')).data.length, 3); // a group of 3: 3 pairs
  const other = await newTenant(t);
  assert.deepEqual((await duplicates(other.api, '/contacts/duplicates')).data, []);

  assert.equal((await api.delete(`/contacts/${c.id}`)).status, 204);
  assert.deepEqual(
    (await duplicates(api, '/contacts/duplicates')).data.map((p: any) => p.ids),
    [pairOf(a.id, b.id)],
  );
  assert.equal((await api.delete(`/contacts/${b.id}`)).status, 204);
  assert.deepEqual((await duplicates(api, '/contacts/duplicates')).data, []);
  // Restored, the pair is back: the keys follow every write.
  assert.equal((await api.post(`/contacts/${b.id}/restore`)).status, 200);
  assert.equal((await duplicates(api, '/contacts/duplicates')).data.length, 1);
  // An update that changes the key ends the pair.
  assert.equal((await api.patch(`/contacts/${b.id}`, { email: 'other@x.test' })).status, 200);
  assert.deepEqual((await duplicates(api, '/contacts/duplicates')).data, []);
});

test('cursor pages walk every pair once in order; a cursor is bound to its reason and key; read scope suffices', async () => {
  const { api, as } = await newTenant(t);
  for (let i = 0; i < 5; i++) await post(api, '/contacts', { firstName: `P${i}`, email: `pat+${i}@x.test` }); // 10 pairs
  await post(api, '/contacts', { firstName: 'Q', lastName: 'Q', email: 'q1@y.test' });
  await post(api, '/contacts', { firstName: 'q', lastName: 'q', email: 'q2@y.test' }); // 1 name pair, lower score
  const all = (await duplicates(api, '/contacts/duplicates?pageSize=100')).data;
  assert.equal(all.length, 11);
  const seen: any[] = [];
  let url = '/contacts/duplicates?pageSize=3';
  for (;;) {
    const page = await duplicates(api, url);
    assert.equal(page.pagination.total, 11);
    seen.push(...page.data);
    if (!page.pagination.nextCursor) break;
    assert.equal(page.pagination.hasNext, true);
    url = `/contacts/duplicates?pageSize=3&cursor=${encodeURIComponent(page.pagination.nextCursor)}`;
  }
  assert.deepEqual(seen, all);
  assert.deepEqual(all.at(-1).reasons, ['name']);
  for (const p of all) assert.ok(p.ids[0] < p.ids[1] && p.score > 0 && p.score <= 1);

  const first = await duplicates(api, '/contacts/duplicates?pageSize=3');
  const cursor = encodeURIComponent(first.pagination.nextCursor);
  assert.equal((await api.get(`/contacts/duplicates?pageSize=3&reason=email&cursor=${cursor}`)).body.error, 'invalid_cursor');
  assert.equal((await as('ro').get(`/contacts/duplicates?pageSize=3&cursor=${cursor}`)).body.error, 'invalid_cursor');
  assert.equal((await as('ro').get('/contacts/duplicates')).status, 200);
  assert.equal((await as('ro').get('/companies/duplicates')).status, 403);
});

test('merging a pair (D.2) removes it from the list: the merged record is soft-deleted and gives up its e-mail', async () => {
  const { api } = await newTenant(t);
  const a = await post(api, '/contacts', { firstName: 'Ana', lastName: 'Souza', email: 'ana+crm@gmail.com' });
  const b = await post(api, '/contacts', { firstName: 'Ana', lastName: 'Souza', email: 'a.na@gmail.com' });
  const c = await post(api, '/companies', { name: 'Acme Ltda' });
  const d = await post(api, '/companies', { name: 'ACME S.A.' });
  assert.equal((await duplicates(api, '/contacts/duplicates')).data.length, 1);
  assert.equal((await duplicates(api, '/companies/duplicates')).data.length, 1);
  const merged = await api.post('/contacts/merge', { primaryId: a.id, mergedId: b.id });
  assert.equal(merged.status, 200, JSON.stringify(merged.body));
  assert.deepEqual((await duplicates(api, '/contacts/duplicates')).data, []);
  assert.equal((await api.post('/companies/merge', { primaryId: d.id, mergedId: c.id })).status, 200);
  assert.deepEqual((await duplicates(api, '/companies/duplicates')).data, []);
});

/** What the triggers keep (duplicate_keys, duplicate_key_counts) against the live records' keys computed now. */
async function assertKeysRight(tenantId: string): Promise<number> {
  const db = t.database.db;
  const holders = await sql<{
    kind: string;
    k1: string;
    k2: string;
    id: string;
  }>`select kind, k1, k2, record_id as id from duplicate_keys where tenant_id = ${tenantId}`.execute(db);
  const counts = await sql<{
    kind: string;
    k1: string;
    k2: string;
    n: number;
  }>`select kind, k1, k2, n from duplicate_key_counts where tenant_id = ${tenantId}`.execute(db);
  const live = (table: string, cond: string) => sql.raw(`from ${table} where deleted_at is null and ${cond} and tenant_id = `);
  const person = 'crm_dup_person(first_name, last_name)';
  const recount = await sql<{ kind: string; k1: string; k2: string; id: string }>`
    select 'contacts.email' as kind, crm_dup_email(email) as k1, '' as k2, id ${live('contacts', 'email is not null')}${tenantId}
    union all select 'contacts.name_company', ${sql.raw(person)}, company_id, id ${live('contacts', `company_id is not null and ${person} is not null`)}${tenantId}
    union all select 'contacts.name_domain', ${sql.raw(person)}, crm_dup_email_domain(email), id ${live('contacts', `email is not null and ${person} is not null`)}${tenantId}
    union all select 'companies.name', crm_dup_company_name(name), '', id ${live('companies', 'crm_dup_company_name(name) is not null')}${tenantId}
    union all select 'companies.domain', crm_dup_domain(domain), '', id ${live('companies', 'domain is not null')}${tenantId}
    union all select 'companies.cnpj', substr(cnpj, 1, 8), '', id ${live('companies', 'cnpj is not null')}${tenantId}
    union all select 'companies.phone', phone, '', id ${live('companies', 'phone is not null')}${tenantId}`.execute(db);
  const lines = (rows: { kind: string; k1: string; k2: string; id: string }[]) => rows.map((r) => `${r.kind} ${r.k1} ${r.k2} ${r.id}`).sort();
  assert.deepEqual(lines(holders.rows), lines(recount.rows));
  const n = new Map<string, number>();
  for (const r of recount.rows) n.set(`${r.kind} ${r.k1} ${r.k2}`, (n.get(`${r.kind} ${r.k1} ${r.k2}`) ?? 0) + 1);
  assert.deepEqual(counts.rows.map((r) => `${r.kind} ${r.k1} ${r.k2} ${Number(r.n)}`).sort(), [...n].map(([k, c]) => `${k} ${c}`).sort());
  return holders.rows.length;
}

test('the keys follow batches, updates, deletes and restores in their transaction: the kept keys and counts equal a recount', async () => {
  const { api, tenantId } = await newTenant(t);
  const co1 = await post(api, '/companies', { name: 'Zeta Ltda', domain: 'zeta.com', phone: '+55 11 2222-3333' });
  const co2 = await post(api, '/companies', { name: 'ZETA S.A.', domain: 'www.zeta.com.br', phone: '+55 11 2222-3333' });
  const batch = await api.post('/contacts/batch/create', {
    inputs: [
      { firstName: 'Lia', lastName: 'Reis', email: 'lia+a@zeta.com', companyId: co1.id },
      { firstName: 'LIA', lastName: 'Réis', email: 'lia+b@zeta.com', companyId: co1.id },
      { firstName: 'Lia', lastName: 'Reis', email: 'lia@zeta.com', companyId: co2.id },
    ],
  });
  assert.equal(batch.status, 200, JSON.stringify(batch.body));
  const [x, y, z] = batch.body.results.map((r: any) => r.id);
  assert.ok(x && y && z, JSON.stringify(batch.body.results[0]));
  assert.ok((await assertKeysRight(tenantId)) > 0);
  // One batch, one key held three times: three pairs, each by e-mail and name.
  const pairs = (await duplicates(api, '/contacts/duplicates')).data;
  assert.deepEqual(
    pairs.map((p: any) => [p.ids, p.reasons]),
    [
      [pairOf(x, y), ['email', 'name']],
      [pairOf(x, z), ['email', 'name']],
      [pairOf(y, z), ['email', 'name']],
    ].sort((a: any, b: any) => (a[0][0] + a[0][1] < b[0][0] + b[0][1] ? -1 : 1)),
  );
  assert.equal((await api.patch(`/contacts/${z}`, { email: 'lia@elsewhere.test', firstName: 'Lea' })).status, 200);
  assert.equal((await api.patch(`/contacts/${y}`, { companyId: null })).status, 200);
  await assertKeysRight(tenantId);
  assert.deepEqual((await duplicates(api, '/contacts/duplicates')).data, [{ ids: pairOf(x, y), score: 0.96, reasons: ['email', 'name'] }]);
  assert.equal((await api.post('/contacts/batch/delete', { ids: [x, z] })).status, 200);
  await assertKeysRight(tenantId);
  assert.deepEqual((await duplicates(api, '/contacts/duplicates')).data, []);
  assert.equal((await api.post(`/contacts/${x}/restore`)).status, 200);
  await assertKeysRight(tenantId);
  assert.equal((await duplicates(api, '/contacts/duplicates')).data.length, 1);

  assert.deepEqual((await duplicates(api, '/companies/duplicates')).data, [{ ids: pairOf(co1.id, co2.id), score: 0.88, reasons: ['phone', 'name'] }]);
  assert.equal((await api.patch(`/companies/${co2.id}`, { name: 'Eta', phone: null })).status, 200);
  await assertKeysRight(tenantId);
  assert.deepEqual((await duplicates(api, '/companies/duplicates')).data, []);
});
