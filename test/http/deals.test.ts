// Deals: CRUD, fields and money, list filters/sorting/pagination, GET /contacts/:id/deals, scopes,
// tenant isolation and bad input. The state machine and events live in deals-state.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function deal(ten: Tenant, extra: Record<string, unknown> = {}) {
  return { title: 'Deal', pipelineId: ten.refs.sales, stageId: ten.refs.lead, ...extra };
}
async function create(ten: Tenant, extra: Record<string, unknown> = {}) {
  const r = await ten.api.post('/deals', deal(ten, extra));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
async function contact(api: Client, firstName = 'Ana', extra: Record<string, unknown> = {}) {
  const r = await api.post('/contacts', { firstName, ...extra });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
async function company(api: Client, name = 'Acme') {
  const r = await api.post('/companies', { name });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

/** The standard tenant plus narrow keys for the scope tests. */
async function tenantWithKeys() {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push(
    { ref: 'deals_r', name: 'Deals read', user: 'ana', scopes: ['deals:read'], rateLimit: 1000 },
    { ref: 'deals_w', name: 'Deals write', user: 'ana', scopes: ['deals:write'], rateLimit: 1000 },
  );
  return newTenant(t, setup);
}

test('deals: create with every field, read back, update, soft delete', async () => {
  const ten = await newTenant(t);
  const { api, refs } = ten;
  const c = await contact(api, 'Ana', { email: 'ana@cliente.test' });
  const co = await company(api);
  const tag = (await api.post('/tags', { name: 'Hot' })).body;
  const created = await api.post('/deals', {
    title: '  Acme — 50 licenses  ',
    pipelineId: refs.sales,
    stageId: refs.proposal,
    value: 12500.5,
    currency: 'usd',
    contactId: c.id,
    companyId: co.id,
    ownerId: refs.bruno,
    expectedCloseDate: '2026-12-15',
    customProperties: { [refs.deal_number]: 3, [refs.deal_select]: 'ent' },
    tags: [tag.id],
  });
  assert.equal(created.status, 201);
  const d = created.body;
  assert.match(d.id, /^deal_/);
  assert.equal(d.title, 'Acme — 50 licenses');
  assert.equal(d.value, 12500.5);
  assert.equal(d.currency, 'USD');
  assert.equal(d.contactId, c.id);
  assert.deepEqual(d.contact, (await api.get(`/contacts/${c.id}`)).body, 'contact expanded as its single read');
  assert.equal(d.companyId, co.id);
  assert.deepEqual(d.company, (await api.get(`/companies/${co.id}`)).body, 'company expanded as its single read');
  assert.equal(d.ownerId, refs.bruno);
  assert.equal(d.expectedCloseDate, '2026-12-15');
  assert.deepEqual(d.customProperties, { [refs.deal_number]: 3, [refs.deal_select]: 'ent' });
  assert.deepEqual(d.tags, [tag.id]);
  assert.deepEqual([d.isWon, d.isLost, d.closedAt, d.lossReasonId, d.lossNotes], [false, false, null, null, null]);
  assert.equal(d.createdAt, d.updatedAt);
  assert.deepEqual(
    Object.keys(d).sort(),
    [
      'id',
      'title',
      'pipelineId',
      'stageId',
      'value',
      'currency',
      'contactId',
      'contact',
      'companyId',
      'company',
      'ownerId',
      'expectedCloseDate',
      'customProperties',
      'tags',
      'isWon',
      'isLost',
      'closedAt',
      'lossReasonId',
      'lossNotes',
      'createdAt',
      'updatedAt',
    ].sort(),
  );
  assert.deepEqual((await api.get(`/deals/${d.id}`)).body, d);

  await sleep(2);
  const patched = await api.patch(`/deals/${d.id}`, {
    title: 'Renamed',
    value: null,
    contactId: null,
    companyId: null,
    ownerId: null,
    expectedCloseDate: null,
    customProperties: { [refs.deal_number]: null, [refs.deal_text]: 'hello' },
    tags: [],
  });
  assert.equal(patched.status, 200);
  const p = patched.body;
  assert.equal(p.title, 'Renamed');
  assert.deepEqual([p.value, p.contactId, p.contact, p.companyId, p.company, p.ownerId, p.expectedCloseDate], [null, null, null, null, null, null, null]);
  assert.deepEqual(p.customProperties, { [refs.deal_select]: 'ent', [refs.deal_text]: 'hello' }, 'customProperties merge key by key');
  assert.deepEqual(p.tags, []);
  assert.equal(p.currency, 'USD', 'omitted fields stay unchanged');
  assert.equal(p.createdAt, d.createdAt);
  assert.ok(p.updatedAt > d.updatedAt);
  // An empty PATCH changes nothing.
  assert.deepEqual((await api.patch(`/deals/${d.id}`, {})).body, p);

  assert.equal((await api.delete(`/deals/${d.id}`)).status, 204);
  assert.equal((await api.get(`/deals/${d.id}`)).status, 404);
  assert.equal((await api.get(`/deals/${d.id}`)).body.error, 'not_found');
});

test('deals: expanded contact/company are null once soft-deleted', async () => {
  const ten = await newTenant(t);
  const c = await contact(ten.api);
  const co = await company(ten.api);
  const d = await create(ten, { contactId: c.id, companyId: co.id });
  assert.equal((await ten.api.delete(`/contacts/${c.id}`)).status, 204);
  assert.equal((await ten.api.delete(`/companies/${co.id}`)).status, 204);
  const r = (await ten.api.get(`/deals/${d.id}`)).body;
  assert.equal(r.contact, null);
  assert.equal(r.company, null);
  const listed = (await ten.api.get('/deals')).body.data[0];
  assert.equal(listed.contact, null);
  // A deleted contact/company can no longer be referenced.
  assert.equal((await ten.api.patch(`/deals/${d.id}`, { contactId: c.id })).status, 404);
  assert.equal((await ten.api.patch(`/deals/${d.id}`, { companyId: co.id })).status, 404);
});

test('deals: money is exact — 19.99 round-trips, 0.1 and 0.2 stay themselves, > 2 decimals is 400', async () => {
  const ten = await newTenant(t);
  for (const value of [19.99, 0.1, 0.2, 0.3, 0, 1234567.89, 9999999999999.99, 1e13]) {
    const d = await create(ten, { value });
    assert.equal(d.value, value);
    assert.equal((await ten.api.get(`/deals/${d.id}`)).body.value, value);
  }
  const cents = await t.database.db.selectFrom('deals').select(['value_cents']).where('tenant_id', '=', ten.tenantId).where('title', '=', 'Deal').execute();
  assert.ok(
    cents.some((r) => r.value_cents === 1999),
    'stored as integer cents',
  );
  assert.ok(cents.some((r) => r.value_cents === 30));

  const total = (await ten.api.get('/deals')).body.pagination.total;
  for (const value of [19.999, 0.001, 1e-7, -1, -0.01, 1e14, '10', true, [1], { a: 1 }]) {
    const r = await ten.api.post('/deals', deal(ten, { value }));
    assert.equal(r.status, 400, JSON.stringify(value));
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(r.body.details[0].field, 'value');
  }
  const d = await create(ten, { value: 10 });
  const bad = await ten.api.patch(`/deals/${d.id}`, { value: 10.555 });
  assert.equal(bad.status, 400);
  assert.equal((await ten.api.get(`/deals/${d.id}`)).body.value, 10);
  assert.equal((await ten.api.get('/deals')).body.pagination.total, total + 1);
});

test('deals: currency defaults to BRL, must be ISO 4217 (any case on input)', async () => {
  const ten = await newTenant(t);
  assert.equal((await create(ten)).currency, 'BRL');
  assert.equal((await create(ten, { currency: 'EUR' })).currency, 'EUR');
  assert.equal((await create(ten, { currency: 'jpy' })).currency, 'JPY');
  for (const currency of ['ABC', 'US', 'EURO', '', 'R$', 42, null]) {
    const r = await ten.api.post('/deals', deal(ten, { currency }));
    assert.equal(r.status, 400, JSON.stringify(currency));
    assert.equal(r.body.details[0].field, 'currency');
  }
  const d = await create(ten);
  assert.equal((await ten.api.patch(`/deals/${d.id}`, { currency: 'XYZ' })).status, 400);
  assert.equal((await ten.api.patch(`/deals/${d.id}`, { currency: 'USD' })).body.currency, 'USD');
});

test('deals: field validation (title, expectedCloseDate, customProperties, unknown and read-only fields)', async () => {
  const ten = await newTenant(t);
  const cases: [Record<string, unknown>, string][] = [
    [{ title: '' }, 'title'],
    [{ title: '   ' }, 'title'],
    [{ title: 42 }, 'title'],
    [{ expectedCloseDate: '2026-02-30' }, 'expectedCloseDate'],
    [{ expectedCloseDate: '2026-12-15T10:00:00Z' }, 'expectedCloseDate'],
    [{ expectedCloseDate: '15/12/2026' }, 'expectedCloseDate'],
    [{ customProperties: { [ten.refs.deal_number]: 'three' } }, `customProperties.${ten.refs.deal_number}`],
    [{ customProperties: { [ten.refs.contact_text]: 'x' } }, `customProperties.${ten.refs.contact_text}`],
    [{ customProperties: { prop_nope: 1 } }, 'customProperties.prop_nope'],
    [{ extra: 1 }, 'extra'],
    [{ id: 'deal_x' }, 'id'],
    [{ createdAt: '2026-01-01T00:00:00.000Z' }, 'createdAt'],
    [{ contact: {} }, 'contact'],
    [{ isWon: 'true' }, 'isWon'],
    [{ tags: 'tag_1' }, 'tags'],
  ];
  for (const [extra, field] of cases) {
    const r = await ten.api.post('/deals', deal(ten, extra));
    assert.equal(r.status, 400, JSON.stringify(extra));
    assert.equal(r.body.error, 'validation_failed');
    assert.ok(
      r.body.details.some((x: any) => x.field === field),
      `${JSON.stringify(extra)} → ${JSON.stringify(r.body.details)}`,
    );
  }
  const d = await create(ten);
  for (const [extra, field] of cases) {
    const r = await ten.api.patch(`/deals/${d.id}`, extra);
    assert.equal(r.status, 400, JSON.stringify(extra));
    assert.ok(r.body.details.some((x: any) => x.field === field));
  }
  assert.equal((await ten.api.get('/deals')).body.pagination.total, 1);
  assert.equal((await ten.api.patch(`/deals/${d.id}`, { title: null })).status, 400, 'title cannot be cleared');
});

test('deals: tags are tag ids of the tenant; PATCH replaces the set', async () => {
  const ten = await newTenant(t);
  const a = (await ten.api.post('/tags', { name: 'A' })).body;
  const b = (await ten.api.post('/tags', { name: 'B' })).body;
  const d = await create(ten, { tags: [a.id, b.id, a.id] });
  assert.deepEqual([...d.tags].sort(), [a.id, b.id].sort());
  const r = await ten.api.post('/deals', deal(ten, { tags: [a.id, 'tag_nope'] }));
  assert.equal(r.status, 404);
  assert.match(r.body.message, /tags\[1\]/);
  assert.deepEqual((await ten.api.patch(`/deals/${d.id}`, { tags: [b.id] })).body.tags, [b.id]);
  // Deleting the tag removes it from the deal.
  await ten.api.delete(`/tags/${b.id}`);
  assert.deepEqual((await ten.api.get(`/deals/${d.id}`)).body.tags, []);
});

test('deals: referenced ids must exist (404 naming the field)', async () => {
  const ten = await newTenant(t);
  const d = await create(ten);
  for (const field of ['contactId', 'companyId', 'ownerId', 'lossReasonId']) {
    const extra: Record<string, unknown> = { [field]: 'x_nope' };
    if (field === 'lossReasonId') extra.isLost = true;
    const r = await ten.api.post('/deals', deal(ten, extra));
    assert.equal(r.status, 404, field);
    assert.equal(r.body.error, 'not_found');
    assert.match(r.body.message, new RegExp(field));
    const p = await ten.api.patch(`/deals/${d.id}`, extra);
    assert.equal(p.status, 404, field);
    assert.match(p.body.message, new RegExp(field));
  }
  assert.equal((await ten.api.get('/deals')).body.pagination.total, 1);
});

test('deals: tenant isolation — path ids and every id in bodies', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const ca = await contact(a.api);
  const coa = await company(a.api);
  const taga = (await a.api.post('/tags', { name: 'Secret' })).body;
  const da = await create(a, { title: 'A deal', contactId: ca.id });

  // Paths.
  assert.equal((await b.api.get(`/deals/${da.id}`)).status, 404);
  assert.equal((await b.api.patch(`/deals/${da.id}`, { title: 'Mine' })).status, 404);
  assert.equal((await b.api.patch(`/deals/${da.id}`, { isWon: true })).status, 404);
  assert.equal((await b.api.delete(`/deals/${da.id}`)).status, 404);
  assert.equal((await b.api.get(`/contacts/${ca.id}/deals`)).status, 404);
  assert.equal((await b.api.get('/deals')).body.pagination.total, 0);
  assert.deepEqual((await a.api.get(`/deals/${da.id}`)).body, da, 'untouched');

  // Bodies: B's deal pointing at A's records.
  const db = await create(b);
  const bodies: [Record<string, unknown>, string][] = [
    [{ contactId: ca.id }, 'contactId'],
    [{ companyId: coa.id }, 'companyId'],
    [{ ownerId: a.refs.ana }, 'ownerId'],
    [{ isLost: true, lossReasonId: a.refs.price }, 'lossReasonId'],
    [{ tags: [taga.id] }, 'tags[0]'],
  ];
  for (const [extra, field] of bodies) {
    const r = await b.api.post('/deals', deal(b, extra));
    assert.equal(r.status, 404, JSON.stringify(extra));
    assert.ok(r.body.message.includes(field), r.body.message);
    const p = await b.api.patch(`/deals/${db.id}`, extra);
    assert.equal(p.status, 404, JSON.stringify(extra));
  }
  const pip = await b.api.post('/deals', { title: 'x', pipelineId: a.refs.sales, stageId: a.refs.lead });
  assert.equal(pip.status, 404);
  assert.match(pip.body.message, /pipelineId/);
  const stg = await b.api.post('/deals', { title: 'x', pipelineId: b.refs.sales, stageId: a.refs.lead });
  assert.equal(stg.status, 404);
  assert.match(stg.body.message, /stageId/);
  assert.equal((await b.api.patch(`/deals/${db.id}`, { stageId: a.refs.proposal })).status, 404);
  assert.equal((await b.api.patch(`/deals/${db.id}`, { pipelineId: a.refs.partners, stageId: a.refs.p_intro })).status, 404);
  assert.equal((await b.api.get('/deals')).body.pagination.total, 1);
  assert.deepEqual((await b.api.get(`/deals/${db.id}`)).body, db);

  // Query filters naming A's ids simply match nothing.
  for (const q of [`contactId=${ca.id}`, `pipelineId=${a.refs.sales}`, `stageId=${a.refs.lead}`, `ownerId=${a.refs.ana}`, `companyId=${coa.id}`]) {
    const r = await b.api.get(`/deals?${q}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.pagination.total, 0, q);
  }
});

test('deals: scopes — deals:read reads, deals:write writes, neither implies the other', async () => {
  const ten = await tenantWithKeys();
  const d = await create(ten);
  const r = ten.as('deals_r');
  const w = ten.as('deals_w');
  assert.equal((await r.get('/deals')).status, 200);
  assert.equal((await r.get(`/deals/${d.id}`)).status, 200);
  const denied = await r.post('/deals', deal(ten));
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error, 'insufficient_scope');
  assert.deepEqual(denied.body.required, ['deals:write']);
  assert.equal((await r.patch(`/deals/${d.id}`, { title: 'x' })).status, 403);
  assert.equal((await r.delete(`/deals/${d.id}`)).status, 403);
  assert.equal((await w.get('/deals')).status, 403);
  assert.equal((await w.get(`/deals/${d.id}`)).status, 403);
  assert.equal((await w.post('/deals', deal(ten))).status, 201);
  assert.equal((await w.patch(`/deals/${d.id}`, { title: 'x' })).status, 200);
  assert.equal((await ten.as('ro').get('/deals')).status, 403, 'contacts:read is not deals:read');
  assert.equal((await client(t.app, undefined).get('/deals')).status, 401);
});

// --- GET /deals: filters, sorting, pagination ------------------------------------------------------

test('GET /deals: default page, pageSize and envelope; pageSize/page bounds', async () => {
  const ten = await newTenant(t);
  const empty = await ten.api.get('/deals');
  assert.deepEqual(empty.body, { data: [], pagination: { page: 1, pageSize: 50, total: 0, totalPages: 0, hasNext: false, hasPrev: false, nextCursor: null } });
  for (const q of [
    'pageSize=101',
    'pageSize=0',
    'page=0',
    'page=-1',
    'page=abc',
    'pageSize=1.5',
    'sortKey=nope',
    'sortKey=id',
    'sortOrder=up',
    'isWon=maybe',
    'valueMin=abc',
    'unknownParam=1',
  ]) {
    const r = await ten.api.get(`/deals?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed', q);
  }
  assert.equal((await ten.api.get('/deals?pageSize=100')).status, 200);
});

test('GET /deals: pagination walk visits every deal once, with hasNext/hasPrev', async () => {
  const ten = await newTenant(t);
  const ids = new Set<string>();
  for (let i = 0; i < 7; i++) ids.add((await create(ten, { title: `D${i}` })).id);
  const seen: string[] = [];
  for (let page = 1; page <= 4; page++) {
    const r = await ten.api.get(`/deals?pageSize=2&page=${page}&sortKey=createdAt&sortOrder=asc`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.pagination, {
      page,
      pageSize: 2,
      total: 7,
      totalPages: 4,
      hasNext: page < 4,
      hasPrev: page > 1,
      nextCursor: page < 4 ? r.body.pagination.nextCursor : null,
    });
    seen.push(...r.body.data.map((d: any) => d.id));
  }
  assert.equal(seen.length, 7);
  assert.deepEqual(new Set(seen), ids);
  const beyond = await ten.api.get('/deals?pageSize=2&page=9');
  assert.deepEqual(beyond.body.data, []);
  assert.equal(beyond.body.pagination.hasPrev, true);
  assert.equal(beyond.body.pagination.hasNext, false);
});

test('GET /deals: filters by pipeline, stage, owner, contact, company, flags', async () => {
  const ten = await newTenant(t);
  const { refs } = ten;
  const c1 = await contact(ten.api, 'C1');
  const co1 = await company(ten.api);
  const d1 = await create(ten, { title: 'one', ownerId: refs.ana, contactId: c1.id });
  const d2 = await create(ten, { title: 'two', stageId: refs.proposal, ownerId: refs.bruno, companyId: co1.id });
  const d3 = await create(ten, { title: 'three', pipelineId: refs.partners, stageId: refs.p_intro });
  const d4 = await create(ten, { title: 'four', isWon: true });
  const d5 = await create(ten, { title: 'five', isLost: true });
  const ids = async (q: string) => {
    const r = await ten.api.get(`/deals?${q}&sortKey=title&sortOrder=asc`);
    assert.equal(r.status, 200, q);
    assert.equal(r.body.pagination.total, r.body.data.length);
    return r.body.data.map((d: any) => d.title);
  };
  assert.deepEqual(await ids(`pipelineId=${refs.partners}`), ['three']);
  assert.deepEqual(await ids(`pipelineId=${refs.sales}`), ['five', 'four', 'one', 'two']);
  assert.deepEqual(await ids(`stageId=${refs.proposal}`), ['two']);
  assert.deepEqual(await ids(`ownerId=${refs.bruno}`), ['two']);
  assert.deepEqual(await ids(`contactId=${c1.id}`), ['one']);
  assert.deepEqual(await ids(`companyId=${co1.id}`), ['two']);
  assert.deepEqual(await ids('isWon=true'), ['four']);
  assert.deepEqual(await ids('isLost=true'), ['five']);
  assert.deepEqual(await ids('isWon=false&isLost=false'), ['one', 'three', 'two']);
  assert.deepEqual(await ids(`isWon=false&pipelineId=${refs.sales}&ownerId=${refs.ana}`), ['one']);
  assert.deepEqual(await ids('contactId=con_nope'), []);
  assert.ok(d1 && d2 && d3 && d4 && d5);
});

test('GET /deals: valueMin/valueMax are inclusive and exact in cents', async () => {
  const ten = await newTenant(t);
  for (const [title, value] of [
    ['a', 0.1],
    ['b', 0.3],
    ['c', 10],
    ['d', 10.01],
    ['e', 19.99],
    ['f', null],
  ] as const)
    await create(ten, { title, value });
  const titles = async (q: string) => {
    const r = await ten.api.get(`/deals?${q}&sortKey=title&sortOrder=asc`);
    assert.equal(r.status, 200, q);
    return r.body.data.map((d: any) => d.title);
  };
  assert.deepEqual(await titles('valueMin=0.3'), ['b', 'c', 'd', 'e']);
  assert.deepEqual(await titles('valueMax=0.3'), ['a', 'b']);
  assert.deepEqual(await titles('valueMin=10&valueMax=10.01'), ['c', 'd']);
  assert.deepEqual(await titles('valueMin=10.005'), ['d', 'e'], 'a bound between cents rounds inward');
  assert.deepEqual(await titles('valueMax=10.005'), ['a', 'b', 'c']);
  assert.deepEqual(await titles('valueMin=19.99&valueMax=19.99'), ['e']);
  assert.deepEqual(await titles('valueMin=20'), []);
  assert.deepEqual(await titles('valueMin=-5'), ['a', 'b', 'c', 'd', 'e']);
  assert.deepEqual(await titles('valueMax=1e300'), ['a', 'b', 'c', 'd', 'e']);
  assert.deepEqual(await titles('valueMin=-1e300'), ['a', 'b', 'c', 'd', 'e']);
  for (const q of ['valueMin=Infinity', 'valueMax=-Infinity', 'valueMin=NaN', 'valueMin=']) {
    const r = await ten.api.get(`/deals?${q}`);
    assert.ok(r.status === 400 || r.status === 200, q);
  }
  assert.equal((await ten.api.get('/deals?valueMin=Infinity')).status, 400);
});

test('GET /deals: closedAtFrom/closedAtTo are inclusive ISO date-time bounds; bad values 400', async () => {
  const ten = await newTenant(t);
  await create(ten, { title: 'oct', isWon: true, closedAt: '2026-10-15T12:00:00.000Z' });
  await create(ten, { title: 'nov', isWon: true, closedAt: '2026-11-01T00:00:00.000Z' });
  await create(ten, { title: 'open' });
  const titles = async (q: string) => {
    const r = await ten.api.get(`/deals?${q}&sortKey=title&sortOrder=asc`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data.map((d: any) => d.title);
  };
  assert.deepEqual(await titles('closedAtFrom=2026-11-01T00:00:00Z'), ['nov']);
  assert.deepEqual(await titles('closedAtFrom=2026-10-15T12:00:00.000Z&closedAtTo=2026-11-01T00:00:00.000Z'), ['nov', 'oct']);
  assert.deepEqual(await titles('closedAtTo=2026-10-15T12:00:00Z'), ['oct']);
  assert.deepEqual(await titles(`closedAtFrom=${encodeURIComponent('2026-10-15T09:00:00-03:00')}`), ['nov', 'oct'], 'offsets are compared as instants');
  assert.deepEqual(await titles(`closedAtFrom=${encodeURIComponent('2026-10-15T09:00:01-03:00')}`), ['nov']);
  for (const q of ['closedAtFrom=yesterday', 'closedAtTo=2026-13-01T00:00:00Z', 'closedAtFrom=2026-10-15T12:00:00']) {
    const r = await ten.api.get(`/deals?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed');
  }
});

test('GET /deals: search is a case-insensitive substring of the title (wildcards literal)', async () => {
  const ten = await newTenant(t);
  for (const title of ['Acme renewal', 'ACME upsell', 'Globex', '100% discount', 'snake_case']) await create(ten, { title });
  const titles = async (search: string) =>
    (await ten.api.get(`/deals?search=${encodeURIComponent(search)}&sortKey=title&sortOrder=asc`)).body.data.map((d: any) => d.title);
  assert.deepEqual(await titles('acme'), ['Acme renewal', 'ACME upsell'], 'titles sort case-insensitively');
  assert.deepEqual(await titles('NEW'), ['Acme renewal']);
  assert.deepEqual(await titles('%'), ['100% discount']);
  assert.deepEqual(await titles('_'), ['snake_case']);
  assert.deepEqual(await titles('zzz'), []);
});

test('GET /deals: every sortKey, both orders, ties broken by id, empty values last', async () => {
  const ten = await newTenant(t);
  const specs = [
    { title: 'b', value: 30, expectedCloseDate: '2026-12-01', isWon: true, closedAt: '2026-10-01T00:00:00Z' },
    { title: 'A', value: 10, expectedCloseDate: '2026-11-01' },
    { title: 'c', value: null, expectedCloseDate: null, isWon: true, closedAt: '2026-09-01T00:00:00Z' },
    { title: 'd', value: 20, expectedCloseDate: '2027-01-01' },
  ];
  for (const s of specs) {
    await create(ten, s);
    await sleep(3);
  }
  await ten.api.patch(`/deals/${(await ten.api.get('/deals?search=A')).body.data.find((d: any) => d.title === 'A').id}`, { title: 'a' });
  const order = async (q: string) => (await ten.api.get(`/deals?${q}`)).body.data.map((d: any) => d.title);
  assert.deepEqual(await order(''), ['a', 'd', 'c', 'b'], 'default: updatedAt desc');
  assert.deepEqual(await order('sortKey=updatedAt&sortOrder=asc'), ['b', 'c', 'd', 'a']);
  assert.deepEqual(await order('sortKey=createdAt&sortOrder=asc'), ['b', 'a', 'c', 'd']);
  assert.deepEqual(await order('sortKey=createdAt'), ['d', 'c', 'a', 'b']);
  assert.deepEqual(await order('sortKey=title&sortOrder=asc'), ['a', 'b', 'c', 'd']);
  assert.deepEqual(await order('sortKey=title&sortOrder=desc'), ['d', 'c', 'b', 'a']);
  assert.deepEqual(await order('sortKey=value&sortOrder=asc'), ['a', 'd', 'b', 'c']);
  assert.deepEqual(await order('sortKey=value&sortOrder=desc'), ['b', 'd', 'a', 'c']);
  assert.deepEqual(await order('sortKey=expectedCloseDate&sortOrder=asc'), ['a', 'b', 'd', 'c']);
  assert.deepEqual(await order('sortKey=expectedCloseDate&sortOrder=desc'), ['d', 'b', 'a', 'c']);
  assert.deepEqual((await order('sortKey=closedAt&sortOrder=asc')).slice(0, 2), ['c', 'b']);
  assert.deepEqual((await order('sortKey=closedAt&sortOrder=desc')).slice(0, 2), ['b', 'c']);

  // Ties (equal values) break by id, so pages never repeat or skip.
  const ten2 = await newTenant(t);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await create(ten2, { value: 5 })).id);
  const walk: string[] = [];
  for (let page = 1; page <= 3; page++)
    walk.push(...(await ten2.api.get(`/deals?sortKey=value&sortOrder=asc&pageSize=2&page=${page}`)).body.data.map((d: any) => d.id));
  assert.deepEqual(walk, [...ids].sort());
});

test('GET /deals: list items have the single-read shape, expansions batched', async () => {
  const ten = await newTenant(t);
  const c = await contact(ten.api);
  const co = await company(ten.api);
  const tag = (await ten.api.post('/tags', { name: 'T' })).body;
  for (let i = 0; i < 3; i++) await create(ten, { contactId: c.id, companyId: co.id, tags: [tag.id] });
  const list = (await ten.api.get('/deals')).body.data;
  for (const d of list) assert.deepEqual(d, (await ten.api.get(`/deals/${d.id}`)).body);
});

// --- GET /contacts/:id/deals ----------------------------------------------------------------------

test('GET /contacts/:id/deals: open deals first, then updatedAt descending; contact 404s', async () => {
  const ten = await tenantWithKeys();
  const c = await contact(ten.api);
  const other = await contact(ten.api, 'Bob');
  const mk = async (title: string) => {
    const d = await create(ten, { title, contactId: c.id, value: 1.5 });
    await sleep(3);
    return d;
  };
  const o1 = await mk('open-old');
  const w = await mk('won');
  const o2 = await mk('open-new');
  const l = await mk('lost');
  await create(ten, { title: 'not mine', contactId: other.id });
  const gone = await mk('deleted');
  await ten.api.patch(`/deals/${w.id}`, { isWon: true });
  await sleep(3);
  await ten.api.patch(`/deals/${l.id}`, { isLost: true });
  await sleep(3);
  await ten.api.delete(`/deals/${gone.id}`);

  const r = await ten.as('ro').get(`/contacts/${c.id}/deals`);
  assert.equal(r.status, 200, 'contacts:read is the scope of the contact sub-read');
  assert.deepEqual(
    r.body.map((d: any) => d.title),
    ['open-new', 'open-old', 'lost', 'won'],
  );
  assert.deepEqual(r.body[0], {
    id: o2.id,
    title: 'open-new',
    stageId: ten.refs.lead,
    pipelineId: ten.refs.sales,
    value: 1.5,
    currency: 'BRL',
    isWon: false,
    isLost: false,
    updatedAt: o2.updatedAt,
  });
  // Touching the old open deal brings it first among open ones.
  await ten.api.patch(`/deals/${o1.id}`, { title: 'open-old' });
  assert.deepEqual((await ten.api.get(`/contacts/${c.id}/deals`)).body.map((d: any) => d.title).slice(0, 2), ['open-old', 'open-new']);

  assert.equal((await ten.api.get(`/contacts/${other.id}/deals`)).body.length, 1);
  const fresh = await contact(ten.api, 'Nobody');
  assert.deepEqual((await ten.api.get(`/contacts/${fresh.id}/deals`)).body, []);
  assert.equal((await ten.api.get('/contacts/con_nope/deals')).status, 404);
  await ten.api.delete(`/contacts/${fresh.id}`);
  assert.equal((await ten.api.get(`/contacts/${fresh.id}/deals`)).status, 404);
  assert.equal((await ten.as('deals_r').get(`/contacts/${c.id}/deals`)).status, 403, 'deals:read is not contacts:read');
});

// --- Bad input never 5xx ----------------------------------------------------------------------------

test('deals: odd ids and hostile input answer 4xx, never 5xx', async () => {
  const ten = await newTenant(t);
  const d = await create(ten);
  for (const id of ['%00', 'a%00b', 'x'.repeat(2000), '%F0%9F%92%A9', "'; drop table deals; --", '..%2F..', '%25']) {
    for (const r of [
      await ten.api.get(`/deals/${id}`),
      await ten.api.patch(`/deals/${id}`, { title: 'x' }),
      await ten.api.delete(`/deals/${id}`),
      await ten.api.get(`/contacts/${id}/deals`),
    ]) {
      assert.ok(r.status === 404, `${id} → ${r.status} ${JSON.stringify(r.body)}`);
    }
  }
  const nul = '\u0000';
  const bodies: Record<string, unknown>[] = [
    { title: `a${nul}b` },
    { contactId: nul },
    { companyId: `x${nul}` },
    { ownerId: nul },
    { isLost: true, lossReasonId: nul },
    { isLost: true, lossNotes: nul },
    { tags: [nul] },
    { pipelineId: nul, stageId: nul },
    { stageId: nul },
    { currency: nul },
    { expectedCloseDate: nul },
    { isWon: true, closedAt: nul },
    { customProperties: { [ten.refs.deal_text]: nul } },
    { customProperties: { [nul]: 1 } },
    { value: 1e308 },
    { value: -0 },
    { title: 'x'.repeat(501) },
    { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) },
  ];
  for (const b of bodies) {
    const p = await ten.api.patch(`/deals/${d.id}`, b);
    assert.ok(p.status >= 200 && p.status < 500, `PATCH ${JSON.stringify(b)} → ${p.status} ${JSON.stringify(p.body)}`);
    const c = await ten.api.post('/deals', { ...deal(ten), ...b });
    assert.ok(c.status >= 200 && c.status < 500, `POST ${JSON.stringify(b)} → ${c.status} ${JSON.stringify(c.body)}`);
  }
  for (const page of ['100000000000000000000', '184467440737095516', '1e300']) {
    const r = await ten.api.get(`/deals?page=${page}`);
    assert.equal(r.status, 200, page);
    assert.deepEqual(r.body.data, []);
  }
  for (const q of ['search=%00', `contactId=%00`, 'pipelineId=a%00', 'closedAtFrom=%00', 'sortKey=%00', 'valueMin=1e400', 'isWon=%00']) {
    const r = await ten.api.get(`/deals?${q}`);
    assert.ok(r.status === 200 || r.status === 400, `${q} → ${r.status}`);
  }
  for (const raw of ['{', '[]', 'null', '"x"', '{"title": "x",}']) {
    const r = await ten.api.post('/deals', raw);
    assert.equal(r.status, 400, raw);
  }
  assert.equal((await ten.api.post('/deals', 'title=x', { 'content-type': 'application/x-www-form-urlencoded' })).status, 415);
});

test('deals: the contact and company expanded in every read (create, single read, page on the main connection and on the read pool, empty PATCH) equal their own single reads, tags, custom properties and decimals included', async () => {
  const ten = await newTenant(t);
  const { api, refs } = ten;
  const hot = (await api.post('/tags', { name: 'Hot' })).body.id;
  const vip = (await api.post('/tags', { name: 'VIP' })).body.id;
  const co = (
    await api.post('/companies', {
      name: 'Ação & Cia "Ltda"',
      website: 'https://acao.example',
      customProperties: {
        [refs.company_number]: 0.1 + 0.2,
        [refs.company_multi_select]: ['smb', 'ent'],
        [refs.company_boolean]: false,
        [refs.company_text]: 'uma "linha" \\ só',
        [refs.company_textarea]: 'linha\nduas',
      },
      tags: [vip],
    })
  ).body;
  const c = (
    await api.post('/contacts', {
      firstName: 'Zoë',
      lastName: "O'Brien \\ \u00e9",
      email: 'zoe@cliente.test',
      phone: '+55 11 98888-7777',
      companyId: co.id,
      score: 72.35,
      customProperties: {
        [refs.contact_number]: 123456789.123456789,
        [refs.contact_date]: '2026-02-03',
        [refs.contact_boolean]: true,
        [refs.contact_select]: 'ent',
      },
      tags: [vip, hot],
    })
  ).body;
  const created = await api.post('/deals', { title: 'Embedded', pipelineId: refs.sales, stageId: refs.proposal, contactId: c.id, companyId: co.id });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.ok(c.id && co.id, 'contact and company created');
  const contactRead = (await api.get(`/contacts/${c.id}`)).body;
  const companyRead = (await api.get(`/companies/${co.id}`)).body;
  assert.deepEqual(contactRead.tags, [hot, vip].sort());
  const reads = [
    ['create', created.body],
    ['single read', (await api.get(`/deals/${created.body.id}`)).body],
    ['page (main connection)', (await api.get('/deals?pageSize=10')).body.data.find((d: { id: string }) => d.id === created.body.id)],
    ['page (read pool)', (await api.get(`/deals?pipelineId=${refs.sales}&isWon=false`)).body.data.find((d: { id: string }) => d.id === created.body.id)],
    ['page with deleted ones', (await api.get('/deals?includeDeleted=true')).body.data.find((d: { id: string }) => d.id === created.body.id)],
    ['empty PATCH', (await api.patch(`/deals/${created.body.id}`, {})).body],
  ] as const;
  for (const [name, d] of reads) {
    assert.ok(d, name);
    assert.deepEqual(d.contact, contactRead, `${name}: contact`);
    assert.deepEqual(d.company, companyRead, `${name}: company`);
  }
  // A deleted contact is no longer expanded.
  assert.equal((await api.delete(`/contacts/${c.id}`)).status, 204);
  const after = (await api.get(`/deals?pipelineId=${refs.sales}&isWon=false`)).body.data.find((d: { id: string }) => d.id === created.body.id);
  assert.equal(after.contact, null);
  assert.deepEqual(after.company, companyRead);
});
