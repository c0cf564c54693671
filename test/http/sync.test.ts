import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery } from 'kysely';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { seedContacts, unseedContacts } from '../helpers/bulk.js';
import { DIALECT, newTenant, recordStatements, testApp, type Client, type RanStatement, type Tenant } from '../helpers/app.js';

// CONTRACT C.1: cursor pagination and incremental sync, on every paginated endpoint (one listing layer,
// src/listing/).
const t = await testApp();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sep = (url: string) => (url.includes('?') ? '&' : '?');

interface Walk {
  ids: string[];
  pages: any[];
}

async function pageWalk(api: Client, url: string, sizeParam = 'pageSize', size = 4): Promise<Walk> {
  const out: Walk = { ids: [], pages: [] };
  for (let page = 1; page < 500; page++) {
    const r = await api.get(`${url}${sep(url)}page=${page}&${sizeParam}=${size}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    out.pages.push(r.body.pagination);
    out.ids.push(...r.body.data.map((d: any) => d.id));
    if (!r.body.pagination.hasNext) break;
  }
  return out;
}

/** First page without page or cursor, then by nextCursor; `between` runs after each page. */
async function cursorWalk(api: Client, url: string, sizeParam = 'pageSize', size = 4, between?: () => Promise<void>): Promise<Walk> {
  const out: Walk = { ids: [], pages: [] };
  let r = await api.get(`${url}${sep(url)}${sizeParam}=${size}`);
  for (let i = 0; i < 500; i++) {
    assert.equal(r.status, 200, JSON.stringify(r.body));
    out.pages.push(r.body.pagination);
    out.ids.push(...r.body.data.map((d: any) => d.id));
    const next = r.body.pagination.nextCursor;
    assert.equal(next !== null, r.body.pagination.hasNext, 'nextCursor is null exactly on the last page');
    if (next === null) break;
    assert.equal(typeof next, 'string');
    if (between) await between();
    r = await api.get(`${url}${sep(url)}${sizeParam}=${size}&cursor=${encodeURIComponent(next)}`);
    assert.equal(r.body.pagination?.page, null);
    assert.equal(r.body.pagination?.totalPages, null);
    assert.equal(r.body.pagination?.hasPrev, null);
  }
  return out;
}

async function seed(ten: Tenant) {
  const { api } = ten;
  const contacts: any[] = [];
  for (let i = 0; i < 23; i++) {
    const r = await api.post('/contacts', {
      firstName: i % 2 ? `ana ${i % 5}` : `Bruno ${i % 7}`,
      lastName: i % 4 === 0 ? null : `Sobrenome ${i % 6}`,
      email: `c${i}@sync.test`,
      score: i % 3 === 0 ? null : i % 5,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    contacts.push(r.body);
  }
  const companies: any[] = [];
  for (let i = 0; i < 11; i++) {
    const r = await api.post('/companies', {
      name: `Empresa ${i % 4}`,
      industry: i % 3 === 0 ? null : `Ind ${i % 2}`,
      domain: i % 2 ? `d${i}.example.com` : null,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    companies.push(r.body);
  }
  const deals: any[] = [];
  for (let i = 0; i < 9; i++) {
    const r = await api.post('/deals', {
      title: `Deal ${i % 3}`,
      pipelineId: ten.refs.sales,
      stageId: ten.refs.lead,
      value: i % 3 === 0 ? null : (i % 4) * 100,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    deals.push(r.body);
  }
  const proposals: any[] = [];
  for (let i = 0; i < 7; i++) {
    // Ties in subject and total, some sent (sentAt), so that every sort key has equal and empty values.
    const r = await api.post('/proposals', { subject: `P ${i % 3}`, ...(i % 2 ? { items: [{ name: 'x', rate: (i % 4) * 10 }] } : {}) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    if (i % 3 === 1) assert.equal((await api.patch(`/proposals/${r.body.id}`, { status: 'sent' })).status, 200);
    proposals.push(r.body);
  }
  return { contacts, companies, deals, proposals };
}

test('a cursor walk of every paginated endpoint equals its page walk; nextCursor is null on the last page', async () => {
  const slug = `sync-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6)}`;
  const ten = await newTenant(t, { ...STANDARD_SETUP(), tenant: { name: 'Sync', slug } });
  const { api } = ten;
  const { contacts } = await seed(ten);

  const list = (await api.post('/lists', { name: 'Static', objectType: 'contact', kind: 'static' })).body;
  assert.equal((await api.post(`/lists/${list.id}/members`, { objectIds: contacts.slice(0, 6).map((c) => c.id) })).status, 200);
  await sleep(3);
  assert.equal((await api.post(`/lists/${list.id}/members`, { objectIds: contacts.slice(6, 11).map((c) => c.id) })).status, 200);
  const form = (await api.get('/forms')).body.find((f: any) => f.slug === 'contact-us');
  for (let i = 0; i < 7; i++) {
    const r = await t.app.inject({ method: 'POST', url: `/f/${slug}/contact-us`, payload: { email: `f${i}@sync.test`, name: `F${i}` } });
    assert.ok(r.statusCode < 300, r.body);
  }

  const urls: [string, string][] = [];
  for (const key of ['createdAt', 'updatedAt', 'firstName', 'lastName', 'email', 'score']) {
    for (const order of ['asc', 'desc']) urls.push([`/contacts?sortKey=${key}&sortOrder=${order}`, 'pageSize']);
  }
  urls.push(['/contacts', 'pageSize'], ['/contacts?search=ana', 'pageSize']);
  for (const key of ['createdAt', 'updatedAt', 'name', 'domain', 'cnpj', 'industry']) {
    for (const order of ['asc', 'desc']) urls.push([`/companies?sortKey=${key}&sortOrder=${order}`, 'pageSize']);
  }
  for (const key of ['updatedAt', 'createdAt', 'title', 'value', 'expectedCloseDate', 'closedAt']) {
    for (const order of ['asc', 'desc']) urls.push([`/deals?sortKey=${key}&sortOrder=${order}`, 'pageSize']);
  }
  urls.push(['/proposals', 'limit']);
  for (const key of ['createdAt', 'updatedAt', 'number', 'subject', 'status', 'sentAt', 'subtotal', 'total']) {
    for (const order of ['asc', 'desc']) urls.push([`/proposals?sortKey=${key}&sortOrder=${order}`, 'limit']);
  }
  urls.push([`/lists/${list.id}/members`, 'pageSize'], [`/forms/${form.id}/submissions`, 'limit']);

  for (const [url, size] of urls) {
    const byPage = await pageWalk(api, url, size, 4);
    const byCursor = await cursorWalk(api, url, size, 4);
    assert.ok(byPage.ids.length > 0, url);
    assert.deepEqual(byCursor.ids, byPage.ids, url);
    assert.equal(new Set(byCursor.ids).size, byCursor.ids.length, `${url}: each record once`);
    assert.equal(byCursor.pages[0].total, byPage.ids.length, `${url}: total`);
    for (const p of byCursor.pages.slice(1)) assert.equal(p.total, byPage.ids.length, `${url}: total with cursor`);
    assert.equal(byPage.pages.at(-1).nextCursor, null, `${url}: last page`);
  }

  // POST /contacts/search: the cursor goes in the body.
  const filters = { operator: 'AND', conditions: [{ field: 'email', operator: 'contains', value: 'sync.test' }] };
  for (const sortKey of ['lastName', 'score', 'createdAt']) {
    const byPage: string[] = [];
    for (let page = 1; ; page++) {
      const r = await api.post('/contacts/search', { filters, sortKey, sortOrder: 'asc', page, pageSize: 5 });
      byPage.push(...r.body.data.map((d: any) => d.id));
      if (!r.body.pagination.hasNext) break;
    }
    const byCursor: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const r = await api.post('/contacts/search', { filters, sortKey, sortOrder: 'asc', pageSize: 5, ...(cursor ? { cursor } : {}) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      byCursor.push(...r.body.data.map((d: any) => d.id));
      if (r.body.pagination.nextCursor === null) break;
      cursor = r.body.pagination.nextCursor;
    }
    assert.deepEqual(byCursor, byPage, `search by ${sortKey}`);
    assert.equal(byCursor.length, 30, '23 contacts and 7 made by the form');
  }
});

test('a cursor walk under concurrent creates, updates and deletes returns each unchanged record exactly once', async () => {
  const ten = await newTenant(t);
  const { api } = ten;
  const created = await seed(ten);
  const cases: {
    url: string;
    type: 'contacts' | 'companies' | 'deals';
    originals: any[];
    change: (id: string) => Promise<unknown>;
    create: () => Promise<unknown>;
  }[] = [
    {
      url: '/contacts?sortKey=updatedAt&sortOrder=asc',
      type: 'contacts',
      originals: created.contacts,
      change: (id) => api.patch(`/contacts/${id}`, { score: 99 }),
      create: () => api.post('/contacts', { firstName: 'New' }),
    },
    {
      url: '/contacts?sortKey=lastName&sortOrder=desc',
      type: 'contacts',
      originals: created.contacts,
      change: (id) => api.patch(`/contacts/${id}`, { lastName: 'Zzz' }),
      create: () => api.post('/contacts', { firstName: 'New', lastName: 'Mmm' }),
    },
    {
      url: '/contacts',
      type: 'contacts',
      originals: created.contacts,
      change: (id) => api.patch(`/contacts/${id}`, { score: 1 }),
      create: () => api.post('/contacts', { firstName: 'New' }),
    },
    {
      url: '/companies?sortKey=updatedAt&sortOrder=asc',
      type: 'companies',
      originals: created.companies,
      change: (id) => api.patch(`/companies/${id}`, { industry: 'Changed' }),
      create: () => api.post('/companies', { name: 'New' }),
    },
    {
      url: '/companies?sortKey=industry&sortOrder=asc',
      type: 'companies',
      originals: created.companies,
      change: (id) => api.patch(`/companies/${id}`, { industry: 'Aaa' }),
      create: () => api.post('/companies', { name: 'New', industry: 'Aab' }),
    },
    {
      url: '/deals?sortKey=value&sortOrder=asc',
      type: 'deals',
      originals: created.deals,
      change: (id) => api.patch(`/deals/${id}`, { value: 150 }),
      create: () => api.post('/deals', { title: 'New', pipelineId: ten.refs.sales, stageId: ten.refs.lead, value: 150 }),
    },
    {
      url: '/deals?sortKey=updatedAt&sortOrder=asc',
      type: 'deals',
      originals: created.deals,
      change: (id) => api.patch(`/deals/${id}`, { title: 'Changed' }),
      create: () => api.post('/deals', { title: 'New', pipelineId: ten.refs.sales, stageId: ten.refs.lead }),
    },
  ];
  for (const c of cases) {
    const live = (await pageWalk(api, c.url, 'pageSize', 100)).ids;
    const changed = new Set<string>();
    let step = 0;
    const walk = await cursorWalk(api, c.url, 'pageSize', 3, async () => {
      step++;
      const candidates = live.filter((id) => !changed.has(id));
      // One of each per page: a create, an update and a delete, spread over seen and unseen records.
      await c.create();
      const upd = candidates[(step * 7) % candidates.length];
      changed.add(upd);
      await c.change(upd);
      const del = candidates[(step * 11 + 3) % candidates.length];
      if (!changed.has(del)) {
        changed.add(del);
        assert.equal((await api.delete(`/${c.type}/${del}`)).status, 204);
      }
    });
    assert.ok(step >= 2, `${c.url}: the walk took several pages`);
    const counts = new Map<string, number>();
    for (const id of walk.ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const id of live) {
      if (!changed.has(id)) assert.equal(counts.get(id), 1, `${c.url}: unchanged ${id} exactly once`);
    }
    for (const [id, n] of counts) if (!changed.has(id)) assert.equal(n, 1, `${c.url}: ${id} never repeated`);
  }
});

test('cursors are tamper-proof and bound to tenant, key, endpoint, sort and filters: 400 invalid_cursor', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  for (let i = 0; i < 5; i++) await a.api.post('/contacts', { firstName: `C${i}`, lastName: 'X' });
  const first = await a.api.get('/contacts?pageSize=2&search=c');
  const cursor: string = first.body.pagination.nextCursor;
  assert.equal(typeof cursor, 'string');
  const ok = await a.api.get(`/contacts?pageSize=2&search=c&cursor=${encodeURIComponent(cursor)}`);
  assert.equal(ok.status, 200);
  assert.equal(ok.body.data.length, 2);

  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const bad = async (c: Client, url: string, why: string) => {
    const r = await c.get(url);
    assert.equal(r.status, 400, `${why}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error, 'invalid_cursor', why);
  };
  const enc = encodeURIComponent;
  await bad(a.api, `/contacts?pageSize=2&search=c&cursor=${enc(flip(cursor, 3))}`, 'edited position byte');
  await bad(a.api, `/contacts?pageSize=2&search=c&cursor=${enc(flip(cursor, cursor.length - 2))}`, 'edited signature byte');
  // The signature's last character carries 2 bits that base64url decoding drops: the 3 other characters that
  // decode to the same bytes are edits too.
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = B64.indexOf(cursor[cursor.length - 1]);
  for (let low = 0; low < 4; low++) {
    const c = B64[(last & ~3) | low];
    if (c === cursor[cursor.length - 1]) continue;
    await bad(a.api, `/contacts?pageSize=2&search=c&cursor=${enc(cursor.slice(0, -1) + c)}`, `signature's last character ${c}`);
  }
  // Malformed is invalid_cursor whatever the way: empty, or longer than any cursor (CONTRACT C.1).
  await bad(a.api, '/contacts?pageSize=2&search=c&cursor=', 'empty cursor');
  await bad(a.api, `/contacts?pageSize=2&search=c&cursor=${'A'.repeat(3000)}.${'B'.repeat(43)}`, 'overlong cursor');
  for (const body of [{ cursor: '' }, { cursor: 'x'.repeat(5000) }]) {
    const r = await a.api.post('/contacts/search', { pageSize: 2, ...body });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error, 'invalid_cursor', `search body cursor of ${body.cursor.length} characters`);
  }
  const [payload] = cursor.split('.');
  const forged = Buffer.from(JSON.stringify(['zzzz', 'con_x'])).toString('base64url') + cursor.slice(payload.length);
  await bad(a.api, `/contacts?pageSize=2&search=c&cursor=${enc(forged)}`, 'forged position');
  for (const garbage of ['x', '.', 'a.b', 'a.b.c', '%%%', '\u00e9']) await bad(a.api, `/contacts?cursor=${enc(garbage)}`, `garbage ${garbage}`);
  await bad(b.api, `/contacts?pageSize=2&search=c&cursor=${enc(cursor)}`, 'another tenant');
  await bad(a.as('ro'), `/contacts?pageSize=2&search=c&cursor=${enc(cursor)}`, 'another key of the tenant');
  await bad(a.api, `/companies?pageSize=2&search=c&cursor=${enc(cursor)}`, 'another endpoint');
  await bad(a.api, `/deals?pageSize=2&search=c&cursor=${enc(cursor)}`, 'another endpoint');
  await bad(a.api, `/contacts?pageSize=2&search=c&sortKey=firstName&cursor=${enc(cursor)}`, 'another sort key');
  await bad(a.api, `/contacts?pageSize=2&search=c&sortOrder=asc&cursor=${enc(cursor)}`, 'another sort order');
  await bad(a.api, `/contacts?pageSize=2&search=d&cursor=${enc(cursor)}`, 'other filters');
  await bad(a.api, `/contacts?pageSize=2&cursor=${enc(cursor)}`, 'filters dropped');
  await bad(a.api, `/contacts?pageSize=2&search=c&includeDeleted=true&cursor=${enc(cursor)}`, 'includeDeleted added');
  // A GET /contacts cursor is no cursor for the search endpoint, nor the other way round.
  const search = await a.api.post('/contacts/search', { cursor, pageSize: 2 });
  assert.equal(search.status, 400);
  assert.equal(search.body.error, 'invalid_cursor');
  const s1 = await a.api.post('/contacts/search', {
    pageSize: 2,
    filters: { operator: 'AND', conditions: [{ field: 'lastName', operator: 'eq', value: 'X' }] },
  });
  const sc = s1.body.pagination.nextCursor;
  const s2 = await a.api.post('/contacts/search', {
    pageSize: 2,
    cursor: sc,
    filters: { operator: 'AND', conditions: [{ field: 'lastName', operator: 'eq', value: 'Y' }] },
  });
  assert.equal(s2.body.error, 'invalid_cursor', 'search filters differ');
  await bad(a.api, `/contacts?cursor=${enc(sc)}`, 'search cursor on the list');

  // cursor with page: validation, not a cursor error.
  for (const r of [
    await a.api.get(`/contacts?pageSize=2&search=c&page=2&cursor=${enc(cursor)}`),
    await a.api.get(`/contacts?page=1&cursor=${enc(cursor)}`),
    await a.api.post('/contacts/search', { page: 1, cursor }),
    await a.api.get(`/proposals?page=1&cursor=x`),
    // Validation comes before the path's record is looked up (B.1): a missing list, form or webhook too.
    await a.api.get(`/lists/lst_missing/members?page=2&cursor=x`),
    await a.api.get(`/forms/frm_missing/submissions?page=2&cursor=x`),
    await a.api.get(`/lists/lst_missing/members?pageSize=2&limit=3`),
    await a.api.get(`/forms/frm_missing/submissions?pageSize=2&limit=3`),
    await a.api.get(`/webhooks/whk_missing/deliveries?pageSize=2&limit=3`),
  ]) {
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error, 'validation_failed');
  }
});

test('updatedAfter is strict and ISO-only; sortKey=updatedAt&sortOrder=asc on contacts, companies, deals and proposals', async () => {
  const ten = await newTenant(t);
  const { api } = ten;
  const made = {
    contacts: (await api.post('/contacts', { firstName: 'A' })).body,
    companies: (await api.post('/companies', { name: 'A' })).body,
    deals: (await api.post('/deals', { title: 'A', pipelineId: ten.refs.sales, stageId: ten.refs.lead })).body,
    proposals: (await api.post('/proposals', { subject: 'A' })).body,
  };
  await sleep(5);
  const later = {
    contacts: (await api.post('/contacts', { firstName: 'B' })).body,
    companies: (await api.post('/companies', { name: 'B' })).body,
    deals: (await api.post('/deals', { title: 'B', pipelineId: ten.refs.sales, stageId: ten.refs.lead })).body,
    proposals: (await api.post('/proposals', { subject: 'B' })).body,
  };
  for (const type of ['contacts', 'companies', 'deals', 'proposals'] as const) {
    const a = made[type];
    const at = await api.get(`/${type}?updatedAfter=${enc(a.updatedAt)}`);
    assert.equal(at.status, 200, JSON.stringify(at.body));
    assert.deepEqual(
      at.body.data.map((r: any) => r.id),
      [later[type].id],
      `${type}: strictly after`,
    );
    const before = new Date(Date.parse(a.updatedAt) - 1).toISOString();
    const incl = await api.get(`/${type}?updatedAfter=${enc(before)}&sortKey=updatedAt&sortOrder=asc`);
    assert.deepEqual(
      incl.body.data.map((r: any) => r.id),
      [a.id, later[type].id],
      `${type}: updatedAt ascending`,
    );
    const desc = await api.get(`/${type}?sortKey=updatedAt&sortOrder=desc`);
    assert.deepEqual(
      desc.body.data.map((r: any) => r.id),
      [later[type].id, a.id],
    );
    // Offsets without "Z" are ISO too; other text is not.
    assert.equal((await api.get(`/${type}?updatedAfter=${enc('2020-01-01T00:00:00+03:00')}`)).body.pagination.total, 2);
    for (const badValue of ['yesterday', '2026-13-45T99:99:99Z', '1700000000']) {
      const r = await api.get(`/${type}?updatedAfter=${enc(badValue)}`);
      assert.equal(r.status, 400, `${type} ${badValue}`);
      assert.equal(r.body.error, 'validation_failed');
    }
    assert.equal((await api.get(`/${type}?sortKey=nope`)).body.error, 'validation_failed');
  }
});
const enc = encodeURIComponent;

test('includeDeleted returns soft-deleted records with deletedAt; a soft delete moves updatedAt; totals count them', async () => {
  const ten = await newTenant(t);
  const { api } = ten;
  const mk = {
    contacts: () => api.post('/contacts', { firstName: 'A' }),
    companies: () => api.post('/companies', { name: 'A' }),
    deals: () => api.post('/deals', { title: 'A', pipelineId: ten.refs.sales, stageId: ten.refs.lead }),
    proposals: () => api.post('/proposals', { subject: 'A' }),
  };
  for (const type of ['contacts', 'companies', 'deals', 'proposals'] as const) {
    const keep = (await mk[type]()).body;
    const gone = (await mk[type]()).body;
    await sleep(5);
    assert.equal((await api.delete(`/${type}/${gone.id}`)).status, 204);

    const plain = await api.get(`/${type}`);
    assert.deepEqual(
      plain.body.data.map((r: any) => r.id),
      [keep.id],
    );
    assert.equal(plain.body.pagination.total, 1);
    assert.ok(!('deletedAt' in plain.body.data[0]), `${type}: no deletedAt without includeDeleted`);
    assert.ok(!('deletedAt' in (await api.get(`/${type}/${keep.id}`)).body));

    const all = await api.get(`/${type}?includeDeleted=true&sortKey=updatedAt&sortOrder=asc`);
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.equal(all.body.pagination.total, 2, `${type}: total counts deleted records`);
    const byId = new Map(all.body.data.map((r: any) => [r.id, r]));
    const deleted: any = byId.get(gone.id);
    assert.equal(typeof deleted.deletedAt, 'string', `${type}: deletedAt set`);
    assert.equal((byId.get(keep.id) as any).deletedAt, null);
    assert.ok(deleted.updatedAt > gone.updatedAt, `${type}: the soft delete moved updatedAt`);
    assert.equal(deleted.updatedAt, deleted.deletedAt);
    // An updatedAfter sync from before the delete sees it.
    const sync = await api.get(`/${type}?includeDeleted=true&updatedAfter=${enc(gone.updatedAt)}`);
    assert.deepEqual(
      sync.body.data.map((r: any) => r.id),
      [gone.id],
    );
    // Cursors work in includeDeleted mode too.
    const walk = await cursorWalk(api, `/${type}?includeDeleted=true`, type === 'proposals' ? 'limit' : 'pageSize', 1);
    assert.deepEqual([...walk.ids].sort(), [keep.id, gone.id].sort());
  }
});

test('empty values sort last in both directions on contacts, companies and deals', async () => {
  const ten = await newTenant(t);
  await seed(ten);
  const checks: [string, string, (r: any) => unknown][] = [
    ['contacts', 'lastName', (r) => r.lastName],
    ['contacts', 'score', (r) => r.score],
    ['contacts', 'email', (r) => r.email],
    ['companies', 'industry', (r) => r.industry],
    ['companies', 'domain', (r) => r.domain],
    ['deals', 'value', (r) => r.value],
    ['deals', 'closedAt', (r) => r.closedAt],
  ];
  await ten.api.post('/contacts', { firstName: 'No email' });
  for (const [type, key, get] of checks) {
    for (const order of ['asc', 'desc']) {
      const r = await ten.api.get(`/${type}?sortKey=${key}&sortOrder=${order}&pageSize=100`);
      assert.equal(r.status, 200);
      const values = r.body.data.map(get);
      const firstEmpty = values.findIndex((v: unknown) => v === null);
      assert.ok(firstEmpty >= 0 || key !== 'closedAt', `${type} ${key}: has empty values`);
      if (firstEmpty < 0) continue;
      assert.ok(
        values.slice(firstEmpty).every((v: unknown) => v === null),
        `${type} ${key} ${order}: empty values last`,
      );
    }
  }
});

test('a cursor page is a keyset read (no OFFSET) that uses the tenant index, 2,000 records deep', async () => {
  const ten = await newTenant(t);
  const { api } = ten;
  // 2,000 contacts sharing one createdAt: the walk rests on the id tie-break all the way down.
  await seedContacts(t.database.db, ten.tenantId, 2000, 'none');
  let last: RanStatement | undefined;
  const ids: string[] = [];
  let r = await api.get('/contacts?pageSize=100');
  ids.push(...r.body.data.map((c: any) => c.id));
  while (r.body.pagination.nextCursor) {
    const cursor = r.body.pagination.nextCursor;
    // Wherever the page runs: the read pool, or the main connection for a page that walks its index.
    const ran = await recordStatements(t.database, () => api.get(`/contacts?pageSize=100&cursor=${enc(cursor)}`));
    r = ran.result;
    assert.equal(r.status, 200);
    ids.push(...r.body.data.map((c: any) => c.id));
    last = [...ran.pooled, ...ran.main].find((s) => /order by/i.test(s.sql));
    assert.ok(last, 'the page query ran');
    assert.doesNotMatch(last.sql, /\boffset\b/i, 'no OFFSET in a cursor page');
    assert.match(last.sql, /\("created_at", "id"\) < \(/, 'keyset predicate on (createdAt, id)');
  }
  assert.equal(ids.length, 2000);
  assert.equal(new Set(ids).size, 2000);
  // The plan of the 20th page: a range of the (tenant_id, created_at, id) index, no sort step.
  if (DIALECT === 'sqlite') {
    const plan = (await t.database.db.executeQuery(CompiledQuery.raw(`explain query plan ${last!.sql}`, [...last!.parameters]))).rows
      .map((x: any) => x.detail)
      .join('\n');
    assert.match(plan, /USING INDEX contacts__created/, plan);
    assert.doesNotMatch(plan, /TEMP B-TREE/, `no sort step: ${plan}`);
  } else {
    const plan = (await t.database.db.executeQuery(CompiledQuery.raw(`explain ${last!.sql}`, [...last!.parameters]))).rows
      .map((x: any) => x['QUERY PLAN'])
      .join('\n');
    assert.match(plan, /contacts__created/, plan);
    assert.doesNotMatch(plan, /\bSort\b/, `no sort step: ${plan}`);
  }
  await unseedContacts(t.database.db, ten.tenantId);
});

test('list members and form submissions: cursors bound to their list or form', async () => {
  const ten = await newTenant(t);
  const { api } = ten;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await api.post('/contacts', { firstName: `M${i}` })).body.id);
  const l1 = (await api.post('/lists', { name: 'L1', objectType: 'contact', kind: 'static' })).body;
  const l2 = (await api.post('/lists', { name: 'L2', objectType: 'contact', kind: 'static' })).body;
  await api.post(`/lists/${l1.id}/members`, { objectIds: ids });
  await api.post(`/lists/${l2.id}/members`, { objectIds: ids });
  const p1 = await api.get(`/lists/${l1.id}/members?pageSize=2`);
  const c = p1.body.pagination.nextCursor;
  assert.equal(typeof c, 'string');
  assert.equal((await api.get(`/lists/${l1.id}/members?pageSize=2&cursor=${enc(c)}`)).status, 200);
  const other = await api.get(`/lists/${l2.id}/members?pageSize=2&cursor=${enc(c)}`);
  assert.equal(other.status, 400);
  assert.equal(other.body.error, 'invalid_cursor');
  const forms = await api.get(`/forms/${(await api.get('/forms')).body[0].id}/submissions?cursor=${enc(c)}`);
  assert.equal(forms.body.error, 'invalid_cursor');
  // Members removed during a walk are simply not returned; the others still come exactly once.
  const order = (await pageWalk(api, `/lists/${l1.id}/members`, 'pageSize', 100)).ids;
  const walk = await cursorWalk(api, `/lists/${l1.id}/members`, 'pageSize', 2, async () => {
    if ((await api.get(`/contacts/${order[4]}`)).status === 200) await api.delete(`/contacts/${order[4]}`);
  });
  assert.deepEqual(walk.ids, order.slice(0, 4));
});
