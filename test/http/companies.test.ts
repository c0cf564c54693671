import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { normalizeCnpj } from '../../src/domain/cnpj.js';
import { companiesByIds, getCompany } from '../../src/modules/companies/companies.service.js';
import { contextFor, type Ctx } from '../../src/http/context.js';

const t = await testApp();

/** A valid numeric CNPJ for any n (the check digits are found by trying all 100). */
function cnpjFor(n: number): string {
  const base = String(n).padStart(8, '0') + '0001';
  for (let d = 0; d < 100; d++) {
    const candidate = base + String(d).padStart(2, '0');
    try {
      return normalizeCnpj(candidate);
    } catch {
      /* next */
    }
  }
  throw new Error('unreachable');
}

const punctuated = (c: string) => `${c.slice(0, 2)}.${c.slice(2, 5)}.${c.slice(5, 8)}/${c.slice(8, 12)}-${c.slice(12)}`;

/** The standard tenant plus keys limited to single scopes. */
async function tenantWithKeys(): Promise<Tenant> {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push(
    { ref: 'cr', name: 'Companies read', user: 'ana', scopes: ['companies:read'] },
    { ref: 'cw', name: 'Companies write', user: 'ana', scopes: ['companies:write'] },
  );
  return newTenant(t, setup);
}

function ctxFor(tenantId: string): Ctx {
  return contextFor(t.database, t.config, tenantId, null);
}

const OLD = '2020-01-01T00:00:00.000Z';

async function insertContact(tenantId: string, id: string, companyId: string | null, deletedAt: string | null = null) {
  await t.database.db
    .insertInto('contacts')
    .values({
      tenant_id: tenantId,
      id,
      first_name: 'Test',
      last_name: null,
      email: null,
      phone: null,
      company_id: companyId,
      owner_id: null,
      score: null,
      custom_properties: '{}',
      created_at: OLD,
      updated_at: OLD,
      deleted_at: deletedAt,
      search_text: '',
    })
    .execute();
}

async function insertDeal(tenant: Tenant, id: string, companyId: string | null) {
  await t.database.db
    .insertInto('deals')
    .values({
      tenant_id: tenant.tenantId,
      id,
      title: 'Deal',
      pipeline_id: tenant.refs.sales,
      stage_id: tenant.refs.lead,
      value_cents: null,
      currency: 'BRL',
      contact_id: null,
      company_id: companyId,
      owner_id: null,
      expected_close_date: null,
      custom_properties: '{}',
      is_won: 0,
      is_lost: 0,
      closed_at: null,
      loss_reason_id: null,
      loss_notes: null,
      created_at: OLD,
      updated_at: OLD,
      deleted_at: null,
      search_text: '',
    })
    .execute();
}

async function create(api: Client, body: Record<string, unknown>) {
  const r = await api.post('/companies', body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

test('companies: create returns the full record; a single read and the list item are the same shape', async () => {
  const { api } = await newTenant(t);
  const minimal = await create(api, { name: '  Acme Ltda  ' });
  assert.match(minimal.id, /^com_/);
  assert.deepEqual(
    { ...minimal, id: undefined, createdAt: undefined, updatedAt: undefined },
    {
      id: undefined,
      name: 'Acme Ltda',
      cnpj: null,
      website: null,
      domain: null,
      phone: null,
      industry: null,
      ownerId: null,
      tags: [],
      customProperties: {},
      createdAt: undefined,
      updatedAt: undefined,
    },
  );
  assert.match(minimal.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.equal(minimal.createdAt, minimal.updatedAt);

  const full = await create(api, {
    name: 'Globex',
    cnpj: '11.222.333/0001-81',
    website: 'https://www.globex.com.br/about',
    domain: 'globex.com.br',
    phone: '(11) 3333-4444',
    industry: ' Manufacturing ',
    ownerId: undefined,
  });
  assert.equal(full.cnpj, '11222333000181');
  assert.equal(full.website, 'https://www.globex.com.br/about');
  assert.equal(full.domain, 'globex.com.br');
  assert.equal(full.phone, '+551133334444');
  assert.equal(full.industry, 'Manufacturing');

  const read = await api.get(`/companies/${full.id}`);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body, full);
  const list = await api.get('/companies');
  assert.equal(list.status, 200);
  assert.deepEqual(
    list.body.data.find((c: any) => c.id === full.id),
    full,
  );
  assert.deepEqual(Object.keys(list.body.pagination).sort(), ['hasNext', 'hasPrev', 'nextCursor', 'page', 'pageSize', 'total', 'totalPages']);
});

test('companies: CNPJ is normalized, check digits verified, alphanumeric CNPJ accepted', async () => {
  const { api } = await newTenant(t);
  assert.equal((await create(api, { name: 'A', cnpj: '11.222.333/0001-81' })).cnpj, '11222333000181');
  assert.equal((await create(api, { name: 'B', cnpj: '12.ABC.345/01DE-35' })).cnpj, '12ABC34501DE35');
  assert.equal((await create(api, { name: 'C', cnpj: ` ${punctuated(cnpjFor(42)).toLowerCase()} ` })).cnpj, cnpjFor(42));
  for (const cnpj of ['11.222.333/0001-82', '12.ABC.345/01DE-36', '123', '00.000.000/0000-00', '11111111111111', 'not a cnpj', '']) {
    const r = await api.post('/companies', { name: 'X', cnpj });
    assert.equal(r.status, 400, cnpj);
    assert.equal(r.body.error, 'validation_failed');
    assert.deepEqual(
      r.body.details.map((d: any) => d.field),
      ['cnpj'],
    );
  }
  const numeric = await api.post('/companies', { name: 'X', cnpj: 11222333000181 });
  assert.equal(numeric.status, 400, 'a number is never coerced to a string');
  assert.equal(numeric.body.details[0].field, 'cnpj');
});

test('companies: CNPJ is unique per tenant among live companies (409 duplicate_cnpj)', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const first = await create(a.api, { name: 'First', cnpj: '11222333000181' });
  const dup = await a.api.post('/companies', { name: 'Second', cnpj: '11.222.333/0001-81' });
  assert.equal(dup.status, 409);
  assert.equal(dup.body.error, 'duplicate_cnpj');
  const alnum = await create(a.api, { name: 'Alnum', cnpj: '12ABC34501DE35' });
  const dupAlnum = await a.api.post('/companies', { name: 'Alnum 2', cnpj: '12.abc.345/01de-35' });
  assert.equal(dupAlnum.body.error, 'duplicate_cnpj');
  // Another tenant is unaffected.
  assert.equal((await b.api.post('/companies', { name: 'Other', cnpj: '11222333000181' })).status, 201);
  // PATCH into a taken CNPJ.
  const patch = await a.api.patch(`/companies/${alnum.id}`, { cnpj: '11.222.333/0001-81' });
  assert.equal(patch.status, 409);
  assert.equal(patch.body.error, 'duplicate_cnpj');
  assert.equal((await a.api.get(`/companies/${alnum.id}`)).body.cnpj, '12ABC34501DE35');
  // A soft-deleted company frees its CNPJ.
  assert.equal((await a.api.delete(`/companies/${first.id}`)).status, 204);
  assert.equal((await a.api.post('/companies', { name: 'Again', cnpj: '11222333000181' })).status, 201);
  // null clears and is not a duplicate of other nulls.
  assert.equal((await a.api.patch(`/companies/${alnum.id}`, { cnpj: null })).body.cnpj, null);
  assert.equal((await a.api.post('/companies', { name: 'No CNPJ', cnpj: null })).status, 201);
});

test('companies: domain is stripped to a bare lower-case host and unique (409 duplicate_domain)', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const c = await create(a.api, { name: 'Ex', domain: 'https://www.Example.com:8080/path?q=1' });
  assert.equal(c.domain, 'example.com');
  assert.equal((await create(a.api, { name: 'Sub', domain: 'Shop.Example.com.' })).domain, 'shop.example.com');
  for (const domain of ['EXAMPLE.com', 'http://example.com', 'www.example.com/x']) {
    const dup = await a.api.post('/companies', { name: 'Dup', domain });
    assert.equal(dup.status, 409, domain);
    assert.equal(dup.body.error, 'duplicate_domain');
  }
  assert.equal((await b.api.post('/companies', { name: 'Ex', domain: 'example.com' })).status, 201);
  for (const domain of ['', 'localhost', 'not a domain', 'user@example.com', 'exa_mple.com', '192.168.0.1', 'http://']) {
    const r = await a.api.post('/companies', { name: 'Bad', domain });
    assert.equal(r.status, 400, domain);
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(r.body.details[0].field, 'domain');
  }
  const other = await create(a.api, { name: 'Other' });
  const patch = await a.api.patch(`/companies/${other.id}`, { domain: 'www.example.com' });
  assert.equal(patch.status, 409);
  assert.equal(patch.body.error, 'duplicate_domain');
  assert.equal((await a.api.delete(`/companies/${c.id}`)).status, 204);
  assert.equal((await a.api.patch(`/companies/${other.id}`, { domain: 'www.example.com' })).body.domain, 'example.com');
});

test('companies: website must be a full http(s) URL; phone is normalized to E.164 and not unique', async () => {
  const { api } = await newTenant(t);
  assert.equal((await create(api, { name: 'W', website: ' http://acme.com ' })).website, 'http://acme.com');
  for (const website of ['acme.com', 'ftp://acme.com', 'javascript:alert(1)', 'http://', 'https://user:pw@acme.com', 'http:acme.com', '']) {
    const r = await api.post('/companies', { name: 'W', website });
    assert.equal(r.status, 400, website);
    assert.equal(r.body.details[0].field, 'website');
  }
  const p1 = await create(api, { name: 'P1', phone: '+55 11 98765-4321' });
  const p2 = await create(api, { name: 'P2', phone: '11987654321' });
  assert.equal(p1.phone, '+5511987654321');
  assert.equal(p2.phone, '+5511987654321');
  for (const phone of ['123', 'abc', '+55 11 98765-4321 ext. 5', '']) {
    const r = await api.post('/companies', { name: 'P', phone });
    assert.equal(r.status, 400, phone);
    assert.equal(r.body.details[0].field, 'phone');
  }
});

test('companies: 20 concurrent creates with one CNPJ (or one domain) give one 201 and nineteen 409', async () => {
  const { api } = await newTenant(t);
  const byCnpj = await Promise.all(
    Array.from({ length: 20 }, (_, i) => api.post('/companies', { name: `C${i}`, cnpj: i % 2 ? '11.222.333/0001-81' : '11222333000181' })),
  );
  assert.deepEqual(byCnpj.map((r) => r.status).sort(), [201, ...Array(19).fill(409)]);
  assert.ok(byCnpj.filter((r) => r.status === 409).every((r) => r.body.error === 'duplicate_cnpj'));
  const byDomain = await Promise.all(
    Array.from({ length: 20 }, (_, i) => api.post('/companies', { name: `D${i}`, domain: i % 2 ? 'https://www.race.com' : 'RACE.com' })),
  );
  assert.deepEqual(byDomain.map((r) => r.status).sort(), [201, ...Array(19).fill(409)]);
  assert.ok(byDomain.filter((r) => r.status === 409).every((r) => r.body.error === 'duplicate_domain'));
  assert.equal((await api.get('/companies')).body.pagination.total, 2);
});

test('companies: ownerId and tags are checked in the tenant; PATCH tags replaces the set', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const vip = (await a.api.post('/tags', { name: 'VIP' })).body.id;
  const hot = (await a.api.post('/tags', { name: 'Hot' })).body.id;
  const foreignTag = (await b.api.post('/tags', { name: 'VIP' })).body.id;

  const c = await create(a.api, { name: 'Owned', ownerId: a.refs.ana, tags: [vip, hot, vip] });
  assert.equal(c.ownerId, a.refs.ana);
  assert.deepEqual([...c.tags].sort(), [vip, hot].sort());

  const badOwner = await a.api.post('/companies', { name: 'X', ownerId: b.refs.ana });
  assert.equal(badOwner.status, 404);
  assert.equal(badOwner.body.error, 'not_found');
  assert.match(badOwner.body.message, /ownerId/);
  const missingOwner = await a.api.post('/companies', { name: 'X', ownerId: 'usr_nope' });
  assert.equal(missingOwner.status, 404);
  const badTag = await a.api.post('/companies', { name: 'X', tags: [vip, foreignTag] });
  assert.equal(badTag.status, 404);
  assert.match(badTag.body.message, /tags\[1\]/);
  assert.equal((await a.api.get('/companies')).body.pagination.total, 1, 'nothing was created by the failed calls');

  const patchBadTag = await a.api.patch(`/companies/${c.id}`, { tags: ['tag_missing'] });
  assert.equal(patchBadTag.status, 404);
  assert.match(patchBadTag.body.message, /tags\[0\]/);
  const patchBadOwner = await a.api.patch(`/companies/${c.id}`, { ownerId: b.refs.bruno });
  assert.equal(patchBadOwner.status, 404);
  assert.match(patchBadOwner.body.message, /ownerId/);
  const unchanged = (await a.api.get(`/companies/${c.id}`)).body;
  assert.deepEqual(unchanged, c);

  const replaced = await a.api.patch(`/companies/${c.id}`, { tags: [hot], ownerId: a.refs.bruno });
  assert.deepEqual(replaced.body.tags, [hot]);
  assert.equal(replaced.body.ownerId, a.refs.bruno);
  const cleared = await a.api.patch(`/companies/${c.id}`, { tags: [], ownerId: null });
  assert.deepEqual(cleared.body.tags, []);
  assert.equal(cleared.body.ownerId, null);

  // Deleting a tag removes it from the company.
  await a.api.patch(`/companies/${c.id}`, { tags: [vip, hot] });
  await a.api.delete(`/tags/${vip}`);
  assert.deepEqual((await a.api.get(`/companies/${c.id}`)).body.tags, [hot]);
});

test('companies: customProperties are validated against company properties and merged on PATCH', async () => {
  const { api, refs } = await newTenant(t);
  const text = refs.company_text;
  const num = refs.company_number;
  const sel = refs.company_select;
  const c = await create(api, { name: 'Props', customProperties: { [text]: 'hello', [num]: 12.5 } });
  assert.deepEqual(c.customProperties, { [text]: 'hello', [num]: 12.5 });

  for (const [props, field] of [
    [{ [num]: '12' }, `customProperties.${num}`],
    [{ [sel]: 'nope' }, `customProperties.${sel}`],
    [{ [refs.contact_text]: 'x' }, `customProperties.${refs.contact_text}`],
    [{ text_field: 'x' }, 'customProperties.text_field'],
  ] as const) {
    const r = await api.post('/companies', { name: 'Bad', customProperties: props });
    assert.equal(r.status, 400, JSON.stringify(props));
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(r.body.details[0].field, field);
  }

  const merged = await api.patch(`/companies/${c.id}`, { customProperties: { [sel]: 'ent', [text]: null } });
  assert.equal(merged.status, 200);
  assert.deepEqual(merged.body.customProperties, { [num]: 12.5, [sel]: 'ent' });
  const bad = await api.patch(`/companies/${c.id}`, { customProperties: { [num]: true } });
  assert.equal(bad.status, 400);
  assert.deepEqual((await api.get(`/companies/${c.id}`)).body.customProperties, { [num]: 12.5, [sel]: 'ent' });
});

test('companies: PATCH updates any subset, null clears optional fields, name cannot be cleared', async () => {
  const { api } = await newTenant(t);
  const c = await create(api, {
    name: 'Patch me',
    cnpj: '11222333000181',
    website: 'https://a.com',
    domain: 'a.com',
    phone: '+551133334444',
    industry: 'Retail',
  });
  await new Promise((r) => setTimeout(r, 5));
  const p = await api.patch(`/companies/${c.id}`, { industry: 'Energy', website: null, domain: null, phone: null });
  assert.equal(p.status, 200);
  assert.equal(p.body.name, 'Patch me');
  assert.equal(p.body.cnpj, '11222333000181');
  assert.equal(p.body.industry, 'Energy');
  assert.equal(p.body.website, null);
  assert.equal(p.body.domain, null);
  assert.equal(p.body.phone, null);
  assert.equal(p.body.createdAt, c.createdAt);
  assert.ok(p.body.updatedAt > c.updatedAt, 'updatedAt moves');
  assert.equal((await api.patch(`/companies/${c.id}`, { name: ' Renamed ' })).body.name, 'Renamed');
  assert.equal((await api.patch(`/companies/${c.id}`, { industry: '  ' })).body.industry, null);

  const same = await api.patch(`/companies/${c.id}`, {});
  assert.equal(same.status, 200);
  assert.equal(same.body.name, 'Renamed');

  for (const body of [
    { name: null },
    { name: '' },
    { name: '   ' },
    { name: 5 },
    { id: 'com_x' },
    { createdAt: OLD },
    { updatedAt: OLD },
    { deletedAt: OLD },
    { unknown: 1 },
    { tags: 'x' },
    { tags: [1] },
    { customProperties: [] },
    { industry: 3 },
  ]) {
    const r = await api.patch(`/companies/${c.id}`, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed');
    assert.ok(r.body.details.length > 0);
  }
  const ro = await api.patch(`/companies/${c.id}`, { id: 'com_x' });
  assert.deepEqual(ro.body.details, [{ field: 'id', message: 'is read-only' }]);
  assert.equal((await api.patch('/companies/com_missing', { name: 'X' })).status, 404);
});

test('companies: create validation gives 400 validation_failed naming the field', async () => {
  const { api } = await newTenant(t);
  const cases: [unknown, string][] = [
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 42 }, 'name'],
    [{ name: null }, 'name'],
    [{ name: 'x'.repeat(256) }, 'name'],
    [{ name: 'X', extra: true }, 'extra'],
    [{ name: 'X', id: 'com_1' }, 'id'],
    [{ name: 'X', tags: 'tag_1' }, 'tags'],
    [{ name: 'X', ownerId: 7 }, 'ownerId'],
    [{ name: 'X', industry: ['a'] }, 'industry'],
    [{ name: 'X', customProperties: 'x' }, 'customProperties'],
  ];
  for (const [body, field] of cases) {
    const r = await api.post('/companies', body as any);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed');
    assert.ok(
      r.body.details.some((d: any) => d.field === field),
      `${JSON.stringify(body)} → ${JSON.stringify(r.body.details)}`,
    );
  }
  assert.equal((await api.post('/companies', '{"name":')).body.error, 'invalid_json');
  assert.equal((await api.post('/companies', [{ name: 'X' }])).status, 400);
  assert.equal((await api.get('/companies')).body.pagination.total, 0);
});

test('companies: soft delete clears companyId on contacts and deals and moves their updatedAt', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const db = t.database.db;
  const c = await create(a.api, { name: 'Doomed', cnpj: '11222333000181', domain: 'doomed.com' });
  const keep = await create(a.api, { name: 'Kept' });
  await insertContact(a.tenantId, 'con_linked_1', c.id);
  await insertContact(a.tenantId, 'con_linked_2', c.id);
  await insertContact(a.tenantId, 'con_other', keep.id);
  await insertContact(b.tenantId, 'con_foreign', c.id); // a stray reference in another tenant is never touched
  await insertDeal(a, 'deal_linked', c.id);
  await insertDeal(a, 'deal_other', keep.id);
  await db.deleteFrom('list_dirty').where('tenant_id', '=', a.tenantId).execute();

  const del = await a.api.delete(`/companies/${c.id}`);
  assert.equal(del.status, 204);
  assert.equal(del.body, '');

  const contacts = await db
    .selectFrom('contacts')
    .select(['tenant_id', 'id', 'company_id', 'updated_at'])
    .where('tenant_id', 'in', [a.tenantId, b.tenantId])
    .orderBy('id')
    .execute();
  assert.equal(contacts.length, 4);
  const byId = Object.fromEntries(contacts.map((r) => [`${r.tenant_id === a.tenantId ? 'a' : 'b'}:${r.id}`, r]));
  for (const id of ['a:con_linked_1', 'a:con_linked_2']) {
    assert.equal(byId[id].company_id, null, id);
    assert.ok(byId[id].updated_at > OLD, `${id} updatedAt moved`);
  }
  assert.equal(byId['a:con_other'].company_id, keep.id);
  assert.equal(byId['a:con_other'].updated_at, OLD);
  assert.equal(byId['b:con_foreign'].company_id, c.id);
  assert.equal(byId['b:con_foreign'].updated_at, OLD);
  const deals = await db.selectFrom('deals').select(['id', 'company_id', 'updated_at']).where('tenant_id', '=', a.tenantId).orderBy('id').execute();
  assert.deepEqual(
    deals.map((d) => [d.id, d.company_id, d.updated_at > OLD]),
    [
      ['deal_linked', null, true],
      ['deal_other', keep.id, false],
    ],
  );
  const dirty = await db.selectFrom('list_dirty').select('object_type').where('tenant_id', '=', a.tenantId).orderBy('object_type').execute();
  assert.deepEqual(
    dirty.map((d) => d.object_type),
    ['company', 'contact', 'deal'],
  );

  // The company is gone from every read, and a second delete is 404.
  assert.equal((await a.api.get(`/companies/${c.id}`)).status, 404);
  assert.equal((await a.api.patch(`/companies/${c.id}`, { name: 'Back' })).status, 404);
  assert.equal((await a.api.delete(`/companies/${c.id}`)).status, 404);
  assert.deepEqual(
    (await a.api.get('/companies')).body.data.map((x: any) => x.id),
    [keep.id],
  );
  assert.equal((await a.api.get('/companies?search=doomed')).body.pagination.total, 0);
  assert.equal((await companiesByIds(ctxFor(a.tenantId), [c.id])).size, 0);
  // The row stays in the database (soft delete).
  const row = await db.selectFrom('companies').select(['deleted_at']).where('tenant_id', '=', a.tenantId).where('id', '=', c.id).executeTakeFirstOrThrow();
  assert.ok(row.deleted_at);
});

test('companies: create and update mark company lists for recalculation', async () => {
  const { api, tenantId } = await newTenant(t);
  const db = t.database.db;
  const dirty = () => db.selectFrom('list_dirty').select('object_type').where('tenant_id', '=', tenantId).execute();
  await db.deleteFrom('list_dirty').where('tenant_id', '=', tenantId).execute();
  const c = await create(api, { name: 'M' });
  assert.deepEqual(
    (await dirty()).map((d) => d.object_type),
    ['company'],
  );
  await db.deleteFrom('list_dirty').where('tenant_id', '=', tenantId).execute();
  await api.patch(`/companies/${c.id}`, { industry: 'X' });
  assert.deepEqual(
    (await dirty()).map((d) => d.object_type),
    ['company'],
  );
});

test('companies: scopes — read and write are separate; other keys get 403 insufficient_scope', async () => {
  const ten = await tenantWithKeys();
  const c = await create(ten.api, { name: 'Scoped' });
  const reader = ten.as('cr');
  const writer = ten.as('cw');
  const contactsOnly = ten.as('ro');
  assert.equal((await reader.get('/companies')).status, 200);
  assert.equal((await reader.get(`/companies/${c.id}`)).status, 200);
  for (const r of [
    await reader.post('/companies', { name: 'X' }),
    await reader.patch(`/companies/${c.id}`, { name: 'X' }),
    await reader.delete(`/companies/${c.id}`),
  ]) {
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'insufficient_scope');
    assert.deepEqual(r.body.required, ['companies:write']);
    assert.deepEqual(r.body.have, ['companies:read']);
  }
  const w = await writer.post('/companies', { name: 'By writer' });
  assert.equal(w.status, 201);
  assert.equal((await writer.patch(`/companies/${w.body.id}`, { industry: 'X' })).status, 200);
  for (const r of [await writer.get('/companies'), await writer.get(`/companies/${c.id}`)]) {
    assert.equal(r.status, 403);
    assert.deepEqual(r.body.required, ['companies:read']);
  }
  for (const r of [
    await contactsOnly.get('/companies'),
    await contactsOnly.get(`/companies/${c.id}`),
    await contactsOnly.post('/companies', { name: 'X' }),
    await contactsOnly.delete(`/companies/${c.id}`),
  ]) {
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'insufficient_scope');
  }
  // Scope is checked before validation.
  assert.equal((await reader.post('/companies', { bogus: 1 })).status, 403);
  assert.equal((await writer.delete(`/companies/${w.body.id}`)).status, 204);
});

test('companies: tenant isolation in paths, lists and filters', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const c = await create(a.api, { name: 'Secret Corp', cnpj: '11222333000181', domain: 'secret.com', ownerId: a.refs.ana });
  assert.equal((await b.api.get(`/companies/${c.id}`)).status, 404);
  assert.equal((await b.api.patch(`/companies/${c.id}`, { name: 'Mine' })).status, 404);
  assert.equal((await b.api.delete(`/companies/${c.id}`)).status, 404);
  assert.equal((await b.api.get('/companies')).body.pagination.total, 0);
  assert.equal((await b.api.get('/companies?search=secret')).body.pagination.total, 0);
  const foreignOwner = await a.api.get(`/companies?ownerId=${b.refs.ana}`);
  assert.equal(foreignOwner.status, 200);
  assert.equal(foreignOwner.body.pagination.total, 0);
  assert.deepEqual(
    (await a.api.get(`/companies?ownerId=${a.refs.ana}`)).body.data.map((x: any) => x.id),
    [c.id],
  );
  assert.deepEqual((await a.api.get(`/companies/${c.id}`)).body, c);
  // Service helpers used by deals and proposals are tenant-scoped too.
  assert.equal((await companiesByIds(ctxFor(b.tenantId), [c.id])).size, 0);
  assert.deepEqual((await companiesByIds(ctxFor(a.tenantId), [c.id, 'com_missing', c.id])).get(c.id), c);
  await assert.rejects(getCompany(ctxFor(b.tenantId), c.id), { statusCode: 404 });
});

test('companies: list search, ownerId, updatedAfter and query validation', async () => {
  const { api, refs } = await newTenant(t);
  const acme = await create(api, { name: 'ACME Industries', cnpj: '11222333000181', ownerId: refs.ana });
  const globex = await create(api, { name: 'Globex', website: 'https://globex-corp.io/home', domain: 'globex.io', ownerId: refs.bruno });
  const alnum = await create(api, { name: 'Initech', cnpj: '12ABC34501DE35' });
  const ids = async (q: string) => (await api.get(`/companies?${q}`)).body.data.map((x: any) => x.id).sort();

  assert.deepEqual(await ids('search=acme'), [acme.id]);
  assert.deepEqual(await ids('search=INDUSTRIES'), [acme.id]);
  assert.deepEqual(await ids('search=222333'), [acme.id]);
  assert.deepEqual(await ids(`search=${encodeURIComponent('11.222.333/0001')}`), [acme.id], 'punctuated CNPJ needle');
  assert.deepEqual(await ids(`search=${encodeURIComponent('12.abc.345')}`), [alnum.id]);
  assert.deepEqual(await ids('search=globex-corp'), [globex.id], 'website');
  assert.deepEqual(await ids('search=LOBEX.I'), [globex.id], 'domain');
  assert.deepEqual(await ids('search=%25'), [], 'wildcards are literal');
  assert.deepEqual(await ids('search=_'), []);
  assert.deepEqual(await ids(`ownerId=${refs.bruno}`), [globex.id]);
  assert.deepEqual(await ids('ownerId=usr_nobody'), []);

  // updatedAfter is strict.
  assert.deepEqual(await ids(`updatedAfter=${encodeURIComponent(alnum.updatedAt)}`), []);
  await new Promise((r) => setTimeout(r, 5));
  const patched = (await api.patch(`/companies/${acme.id}`, { industry: 'Anvils' })).body;
  assert.deepEqual(await ids(`updatedAfter=${encodeURIComponent(alnum.updatedAt)}`), [acme.id]);
  assert.deepEqual(await ids(`updatedAfter=${encodeURIComponent(patched.updatedAt)}`), []);
  assert.deepEqual((await ids('updatedAfter=2000-01-01')).length, 3);
  assert.deepEqual((await ids('updatedAfter=2000-01-01T00:00:00-03:00')).length, 3);

  for (const q of [
    'updatedAfter=yesterday',
    'updatedAfter=2026-13-01',
    'updatedAfter=',
    'sortKey=website',
    'sortKey=custom',
    'sortOrder=up',
    'pageSize=101',
    'pageSize=0',
    'page=0',
    'page=-1',
    'page=abc',
    'bogus=1',
  ]) {
    const r = await api.get(`/companies?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed', q);
  }
  const defaults = await api.get('/companies');
  assert.equal(defaults.body.pagination.page, 1);
  assert.equal(defaults.body.pagination.pageSize, 50);
  // Default sort: createdAt descending.
  assert.deepEqual(
    defaults.body.data.map((x: any) => x.id),
    [alnum.id, globex.id, acme.id]
      .filter(() => true)
      .sort((x, y) => {
        const cx = [acme, globex, alnum].find((c) => c.id === x)!.createdAt;
        const cy = [acme, globex, alnum].find((c) => c.id === y)!.createdAt;
        return cx < cy ? 1 : cx > cy ? -1 : x < y ? 1 : -1;
      }),
  );
});

test('companies: pagination walks every sort key and order, each id exactly once, in order', async () => {
  const { api } = await newTenant(t);
  const names = ['delta', 'Alpha', 'charlie', 'bravo', 'alpha', 'Echo', 'delta', 'foxtrot', 'golf', 'Hotel', 'india', 'juliet', 'kilo'];
  const industries = [null, 'Retail', 'energy', 'Retail', null, 'agro', 'Energy', null, 'mining', 'retail', null, 'agro', 'zinc'];
  const created: any[] = [];
  // Sequential creates in two bursts so createdAt ties are likely and the id tie-break is exercised.
  for (let i = 0; i < names.length; i++) {
    created.push(
      await create(api, {
        name: names[i],
        industry: industries[i],
        cnpj: i % 3 === 0 ? null : cnpjFor(1000 + ((i * 7) % 13)),
        domain: i % 4 === 0 ? null : `d${(i * 5) % 13}.example.com`,
      }),
    );
  }
  await api.patch(`/companies/${created[3].id}`, { industry: 'Retail' });
  const all = new Map<string, any>(((await api.get('/companies?pageSize=100')).body.data as any[]).map((c) => [c.id, c]));
  assert.equal(all.size, names.length);

  const keyOf = (c: any, key: string) => {
    const v = c[key];
    if (v === null) return null;
    return key === 'name' || key === 'industry' ? v.toLowerCase() : v;
  };
  for (const sortKey of ['createdAt', 'updatedAt', 'name', 'domain', 'cnpj', 'industry']) {
    for (const sortOrder of ['asc', 'desc'] as const) {
      const seen: any[] = [];
      let page = 1;
      for (;;) {
        const r = await api.get(`/companies?page=${page}&pageSize=4&sortKey=${sortKey}&sortOrder=${sortOrder}`);
        assert.equal(r.status, 200);
        const p = r.body.pagination;
        assert.equal(p.total, names.length);
        assert.equal(p.totalPages, Math.ceil(names.length / 4));
        assert.equal(p.hasPrev, page > 1);
        assert.equal(p.hasNext, page < p.totalPages);
        seen.push(...r.body.data);
        if (!p.hasNext) break;
        page++;
      }
      const ids = seen.map((c) => c.id);
      assert.equal(new Set(ids).size, names.length, `${sortKey} ${sortOrder}: each id once`);
      assert.deepEqual([...ids].sort(), [...all.keys()].sort());
      // Values are ordered; empty values come last in both directions (one rule for every list, C.1).
      for (let i = 1; i < seen.length; i++) {
        const prev = keyOf(seen[i - 1], sortKey);
        const cur = keyOf(seen[i], sortKey);
        const ok = prev === null ? cur === null : cur === null || (sortOrder === 'asc' ? prev <= cur : prev >= cur);
        assert.ok(ok, `${sortKey} ${sortOrder}: ${prev} then ${cur}`);
      }
    }
  }
  const beyond = await api.get('/companies?page=99&pageSize=4');
  assert.equal(beyond.status, 200);
  assert.deepEqual(beyond.body.data, []);
  assert.equal(beyond.body.pagination.hasPrev, true);
  assert.equal(beyond.body.pagination.hasNext, false);
});

test('companies: odd input never produces a 5xx', async () => {
  const { api } = await newTenant(t);
  const c = await create(api, { name: 'Robust' });
  const calls = [
    api.get('/companies/%00'),
    api.get('/companies/a%00b'),
    api.get(`/companies/${'x'.repeat(5000)}`),
    api.get("/companies/'%20or%201=1--"),
    api.patch('/companies/%00', { name: 'x' }),
    api.delete('/companies/%00'),
    api.get('/companies?search=%00'),
    api.get(`/companies?search=${'%25'.repeat(200)}`),
    api.get('/companies?ownerId=%00'),
    api.get('/companies?updatedAfter=%00'),
    api.get('/companies?page=100000000000000000000'),
    api.get('/companies?page=9007199254740993&pageSize=100'),
    api.get('/companies?page=1.5'),
    api.get('/companies?pageSize=1e3'),
    api.get('/companies?sortKey=name;drop%20table%20companies'),
    api.post('/companies', { name: 'a\u0000b' }),
    api.post('/companies', { name: 'x', industry: '\u0000' }),
    api.post('/companies', { name: 'x', cnpj: '\u0000' }),
    api.post('/companies', { name: 'x', domain: 'a\u0000.com' }),
    api.post('/companies', { name: 'x', website: 'https://a\u0000.com' }),
    api.post('/companies', { name: 'x', phone: '\u0000' }),
    api.post('/companies', { name: 'x', ownerId: '\u0000' }),
    api.post('/companies', { name: 'x', tags: ['\u0000'] }),
    api.post('/companies', { name: 'x', customProperties: { '\u0000': 'x' } }),
    api.post('/companies', { name: 'x', customProperties: { __proto__: 'x' } }),
    api.post('/companies', { name: 'x', domain: `${'a'.repeat(300)}.com` }),
    api.post('/companies', { name: 'x', domain: 'xn--.com' }),
    api.post('/companies', { name: 'x', domain: 'ü.com' }),
    api.post('/companies', { name: 'x', website: `https://${'a'.repeat(2030)}.com` }),
    api.post('/companies', { name: 'x', tags: Array(101).fill('t') }),
    api.post('/companies', 'null'),
    api.post('/companies', '"x"'),
    api.post('/companies', { name: 'x' }, { 'content-type': 'text/plain' }),
    api.patch(`/companies/${c.id}`, 'null'),
    api.patch(`/companies/${c.id}`, { name: 'x\u0000' }),
    api.patch(`/companies/${c.id}`, { tags: ['\u0000'] }),
    api.patch(`/companies/${c.id}`, { ownerId: '\u0000' }),
  ];
  for (const r of await Promise.all(calls)) {
    assert.ok(r.status < 500, `${r.raw.raw.req?.url ?? ''} → ${r.status} ${JSON.stringify(r.body)}`);
  }
  assert.deepEqual((await api.get(`/companies/${c.id}`)).body, c);
});
