import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp, type Client } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();

let seq = 0;
async function contact(api: Client, body: Record<string, unknown> = {}): Promise<any> {
  const r = await api.post('/contacts', { firstName: `Person ${++seq}`, ...body });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
async function company(api: Client, body: Record<string, unknown> = {}): Promise<any> {
  const r = await api.post('/companies', { name: `Company ${++seq}`, ...body });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
async function deal(api: Client, refs: Record<string, string>, body: Record<string, unknown> = {}): Promise<any> {
  const r = await api.post('/deals', { title: `Deal ${++seq}`, pipelineId: refs.sales, stageId: refs.lead, ...body });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
async function staticList(api: Client, objectType = 'contact', name = `List ${++seq}`): Promise<any> {
  const r = await api.post('/lists', { name, objectType, kind: 'static' });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
const memberRows = (listId: string) =>
  t.database.db.selectFrom('list_members').select('object_id').where('list_id', '=', listId).orderBy('object_id').execute();

test('lists: create, read, list (static and dynamic), rename, soft delete', async () => {
  const { api, refs } = await newTenant(t);
  const created = await api.post('/lists', { name: '  Fair attendees ', objectType: 'contact', kind: 'static', description: 'Met at the fair' });
  assert.equal(created.status, 201);
  const l = created.body;
  assert.match(l.id, /^lst_/);
  assert.deepEqual(
    { ...l, id: undefined, createdAt: undefined, updatedAt: undefined },
    {
      id: undefined,
      name: 'Fair attendees',
      objectType: 'contact',
      kind: 'static',
      description: 'Met at the fair',
      filters: null,
      memberCount: 0,
      createdAt: undefined,
      updatedAt: undefined,
    },
  );
  assert.equal(l.createdAt, l.updatedAt);
  assert.deepEqual((await api.get(`/lists/${l.id}`)).body, l);

  const companies = await staticList(api, 'company');
  const all = (await api.get('/lists')).body;
  // The fixture's dynamic list comes first (created at setup), then by createdAt, then id.
  assert.deepEqual(
    all.map((x: any) => x.id),
    [refs.hot, l.id, companies.id],
  );
  const hot = all[0];
  assert.equal(hot.kind, 'dynamic');
  assert.equal(hot.objectType, 'contact');
  assert.deepEqual(hot.filters, { operator: 'AND', conditions: [{ field: 'score', operator: 'gte', value: 80 }] });
  assert.deepEqual(
    (await api.get('/lists?objectType=contact')).body.map((x: any) => x.id),
    [refs.hot, l.id],
  );
  assert.deepEqual(
    (await api.get('/lists?objectType=company')).body.map((x: any) => x.id),
    [companies.id],
  );
  assert.deepEqual((await api.get('/lists?objectType=deal')).body, []);
  const bad = await api.get('/lists?objectType=person');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, 'validation_failed');

  await new Promise((r) => setTimeout(r, 5));
  const renamed = await api.patch(`/lists/${l.id}`, { name: 'Fair 2026', description: null });
  assert.equal(renamed.status, 200);
  assert.equal(renamed.body.name, 'Fair 2026');
  assert.equal(renamed.body.description, null);
  assert.equal(renamed.body.objectType, 'contact');
  assert.ok(renamed.body.updatedAt > l.updatedAt);
  const noop = await api.patch(`/lists/${l.id}`, {});
  assert.equal(noop.status, 200);
  assert.equal(noop.body.updatedAt, renamed.body.updatedAt);

  assert.equal((await api.delete(`/lists/${l.id}`)).status, 204);
  assert.equal((await api.get(`/lists/${l.id}`)).status, 404);
  assert.equal((await api.delete(`/lists/${l.id}`)).status, 404);
  assert.equal((await api.patch(`/lists/${l.id}`, { name: 'x' })).status, 404);
  assert.equal((await api.get(`/lists/${l.id}/members`)).status, 404);
  assert.deepEqual(
    (await api.get('/lists')).body.map((x: any) => x.id),
    [refs.hot, companies.id],
  );
  assert.equal((await api.get('/lists/lst_does_not_exist')).status, 404);
  assert.equal((await api.get('/lists/%00weird')).status, 404);
});

test('lists: deleting a list leaves its member rows untouched', async () => {
  const { api } = await newTenant(t);
  const l = await staticList(api);
  const a = await contact(api);
  await api.post(`/lists/${l.id}/members`, { objectIds: [a.id] });
  assert.equal((await api.delete(`/lists/${l.id}`)).status, 204);
  assert.deepEqual(
    (await memberRows(l.id)).map((r) => r.object_id),
    [a.id],
  );
  assert.equal((await api.get(`/contacts/${a.id}`)).status, 200);
});

test('lists: create validation — only static lists, required fields, no unknown or read-only fields', async () => {
  const { api } = await newTenant(t);
  const dyn = await api.post('/lists', { name: 'Dyn', objectType: 'contact', kind: 'dynamic' });
  assert.equal(dyn.status, 400);
  assert.equal(dyn.body.error, 'validation_failed');
  assert.equal(dyn.body.details[0].field, 'kind');
  const bodies: any[] = [
    {},
    { name: 'x', objectType: 'contact' },
    { name: 'x', kind: 'static' },
    { name: 'x', objectType: 'person', kind: 'static' },
    { name: 'x', objectType: 'contact', kind: 'smart' },
    { name: '', objectType: 'contact', kind: 'static' },
    { name: '   ', objectType: 'contact', kind: 'static' },
    { name: 7, objectType: 'contact', kind: 'static' },
    { name: 'x', objectType: 'contact', kind: 'static', description: 5 },
    { name: 'x', objectType: 'contact', kind: 'static', filters: { operator: 'AND', conditions: [] } },
    { name: 'x', objectType: 'contact', kind: 'static', memberCount: 3 },
    { name: 'x', objectType: 'contact', kind: 'static', id: 'lst_1' },
    { name: 'x', objectType: 'contact', kind: 'static', extra: true },
  ];
  for (const body of bodies) {
    const r = await api.post('/lists', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed', JSON.stringify(body));
    assert.ok(r.body.details.length > 0);
  }
  const ro = await api.post('/lists', { name: 'x', objectType: 'contact', kind: 'static', memberCount: 3 });
  assert.deepEqual(ro.body.details, [{ field: 'memberCount', message: 'is read-only' }]);
  assert.equal((await api.get('/lists')).body.length, 1); // only the fixture's dynamic list
});

test('lists: kind and objectType never change (static and dynamic lists alike); dynamic lists are read-only', async () => {
  const { api, refs } = await newTenant(t);
  const l = await staticList(api);
  for (const id of [l.id, refs.hot]) {
    for (const body of [{ kind: 'dynamic' }, { kind: 'static' }, { objectType: 'company' }, { objectType: 'contact', name: 'x' }]) {
      const r = await api.patch(`/lists/${id}`, body);
      assert.equal(r.status, 400, `${id} ${JSON.stringify(body)}`);
      assert.equal(r.body.error, 'validation_failed');
      assert.match(r.body.details[0].message, /cannot be changed/);
    }
  }
  assert.equal((await api.get(`/lists/${l.id}`)).body.name, l.name);
  const bad = await api.patch(`/lists/${l.id}`, { name: '' });
  assert.equal(bad.status, 400);
  assert.equal((await api.patch(`/lists/${l.id}`, { memberCount: 1 })).status, 400);

  // Spec 2.6: dynamic lists are read-only through the API (409 list_kind_mismatch).
  const rename = await api.patch(`/lists/${refs.hot}`, { name: 'Warm leads' });
  assert.equal(rename.status, 409);
  assert.equal(rename.body.error, 'list_kind_mismatch');
  const del = await api.delete(`/lists/${refs.hot}`);
  assert.equal(del.status, 409);
  assert.equal(del.body.error, 'list_kind_mismatch');
  const hot = (await api.get(`/lists/${refs.hot}`)).body;
  assert.equal(hot.name, 'Hot leads');
});

test('lists: adding members is all-or-nothing, idempotent, and reports added and memberCount', async () => {
  const { api, refs } = await newTenant(t);
  const l = await staticList(api);
  const [a, b, c] = [await contact(api), await contact(api), await contact(api)];
  const gone = await contact(api);
  assert.equal((await api.delete(`/contacts/${gone.id}`)).status, 204);
  const co = await company(api);
  const d = await deal(api, refs);

  const first = await api.post(`/lists/${l.id}/members`, { objectIds: [a.id, b.id, a.id] });
  assert.equal(first.status, 200);
  assert.deepEqual(first.body, { added: 2, memberCount: 2 });

  // Any missing, deleted or other-type id: 404 naming exactly the offending ids, and nothing added.
  for (const [bad, expected] of [
    [[c.id, 'con_missing'], ['con_missing']],
    [[c.id, gone.id], [gone.id]],
    [
      [c.id, co.id, d.id],
      [co.id, d.id],
    ],
    [
      ['', c.id, 'con_'],
      ['', 'con_'],
    ],
  ] as [string[], string[]][]) {
    const r = await api.post(`/lists/${l.id}/members`, { objectIds: bad });
    assert.equal(r.status, 404, JSON.stringify(bad));
    assert.equal(r.body.error, 'not_found');
    assert.deepEqual(r.body.ids, expected);
    assert.equal((await api.get(`/lists/${l.id}`)).body.memberCount, 2);
  }
  // A NUL character is refused at the edge for every body (400), like any text no record can hold.
  const nul = await api.post(`/lists/${l.id}/members`, { objectIds: [c.id, 'x\u0000'] });
  assert.equal(nul.status, 400);
  assert.equal(nul.body.details[0].field, 'objectIds[1]');
  assert.deepEqual((await memberRows(l.id)).map((r) => r.object_id).sort(), [a.id, b.id].sort());

  const again = await api.post(`/lists/${l.id}/members`, { objectIds: [b.id, c.id] });
  assert.deepEqual(again.body, { added: 1, memberCount: 3 });
  const same = await api.post(`/lists/${l.id}/members`, { objectIds: [a.id, b.id, c.id] });
  assert.deepEqual(same.body, { added: 0, memberCount: 3 });
  assert.equal((await api.get(`/lists/${l.id}`)).body.memberCount, 3);

  // Shape limits: 1..1000 string ids.
  for (const body of [
    {},
    { objectIds: [] },
    { objectIds: 'x' },
    { objectIds: [1] },
    { objectIds: [a.id], extra: 1 },
    { objectIds: Array.from({ length: 1001 }, (_, i) => `con_${i}`) },
  ]) {
    const r = await api.post(`/lists/${l.id}/members`, body);
    assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
    assert.equal(r.body.error, 'validation_failed');
  }
  // 1000 ids is accepted (all of them unknown here: 404 listing them all).
  const many = await api.post(`/lists/${l.id}/members`, { objectIds: Array.from({ length: 1000 }, (_, i) => `con_${i}`) });
  assert.equal(many.status, 404);
  assert.equal(many.body.ids.length, 1000);
  assert.equal((await api.post('/lists/lst_nope/members', { objectIds: [a.id] })).status, 404);
});

test('lists: company and deal lists hold records of their own type, in their single-read shape', async () => {
  const { api, refs } = await newTenant(t);
  const cl = await staticList(api, 'company');
  const dl = await staticList(api, 'deal');
  const co = await company(api, { domain: 'acme.test' });
  const person = await contact(api);
  const d = await deal(api, refs, { contactId: person.id, value: 10.5 });
  assert.deepEqual((await api.post(`/lists/${cl.id}/members`, { objectIds: [co.id] })).body, { added: 1, memberCount: 1 });
  assert.deepEqual((await api.post(`/lists/${cl.id}/members`, { objectIds: [person.id] })).body.ids, [person.id]);
  assert.deepEqual((await api.post(`/lists/${dl.id}/members`, { objectIds: [d.id] })).body, { added: 1, memberCount: 1 });
  assert.deepEqual((await api.post(`/lists/${dl.id}/members`, { objectIds: [co.id] })).body.ids, [co.id]);
  assert.deepEqual((await api.get(`/lists/${cl.id}/members`)).body.data, [(await api.get(`/companies/${co.id}`)).body]);
  assert.deepEqual((await api.get(`/lists/${dl.id}/members`)).body.data, [(await api.get(`/deals/${d.id}`)).body]);
  const counts = Object.fromEntries((await api.get('/lists')).body.map((x: any) => [x.id, x.memberCount]));
  assert.deepEqual(counts, { [refs.hot]: 0, [cl.id]: 1, [dl.id]: 1 });
});

test('lists: members are paged in join order (then id), records as their single read returns them', async () => {
  const { api } = await newTenant(t);
  const l = await staticList(api);
  const people = [];
  for (let i = 0; i < 5; i++) people.push(await contact(api, { email: `p${i}@example.com`, score: i }));
  // Two calls: the first two join first; within a call (same instant) the order is by id.
  await api.post(`/lists/${l.id}/members`, { objectIds: [people[3].id, people[1].id] });
  await new Promise((r) => setTimeout(r, 5));
  await api.post(`/lists/${l.id}/members`, { objectIds: [people[0].id, people[4].id, people[2].id] });
  const byId = (xs: any[]) => [...xs].sort((x, y) => (x.id < y.id ? -1 : 1)).map((x) => x.id);
  const expected = [...byId([people[3], people[1]]), ...byId([people[0], people[4], people[2]])];

  const p1 = await api.get(`/lists/${l.id}/members?pageSize=2`);
  assert.equal(p1.status, 200);
  assert.deepEqual(p1.body.pagination, {
    page: 1,
    pageSize: 2,
    total: 5,
    totalPages: 3,
    hasNext: true,
    hasPrev: false,
    nextCursor: p1.body.pagination.nextCursor,
  });
  assert.match(p1.body.pagination.nextCursor, /^[\w-]+\.[\w-]+$/, 'a next page has a cursor');
  const p2 = await api.get(`/lists/${l.id}/members?pageSize=2&page=2`);
  const p3 = await api.get(`/lists/${l.id}/members?pageSize=2&page=3`);
  assert.deepEqual(p3.body.pagination, { page: 3, pageSize: 2, total: 5, totalPages: 3, hasNext: false, hasPrev: true, nextCursor: null });
  assert.deepEqual(
    [...p1.body.data, ...p2.body.data, ...p3.body.data].map((x: any) => x.id),
    expected,
  );
  assert.deepEqual(p1.body.data[0], (await api.get(`/contacts/${expected[0]}`)).body);
  const beyond = await api.get(`/lists/${l.id}/members?page=9`);
  assert.deepEqual(beyond.body.data, []);
  assert.equal(beyond.body.pagination.total, 5);
  const far = await api.get(`/lists/${l.id}/members?page=100000000000000000000`);
  assert.equal(far.status, 200);
  assert.deepEqual(far.body.data, []);
  const dflt = await api.get(`/lists/${l.id}/members`);
  assert.equal(dflt.body.pagination.pageSize, 50);
  assert.equal(dflt.body.data.length, 5);
  assert.equal((await api.get(`/lists/${l.id}/members?pageSize=100`)).status, 200);
  for (const q of ['pageSize=101', 'pageSize=0', 'page=0', 'page=x', 'sortKey=name']) {
    const r = await api.get(`/lists/${l.id}/members?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed');
  }
});

test('lists: soft-deleted records leave lists (members, totals and counts)', async () => {
  const { api } = await newTenant(t);
  const l = await staticList(api);
  const [a, b] = [await contact(api), await contact(api)];
  await api.post(`/lists/${l.id}/members`, { objectIds: [a.id, b.id] });
  assert.equal((await api.delete(`/contacts/${a.id}`)).status, 204);
  assert.equal((await api.get(`/lists/${l.id}`)).body.memberCount, 1);
  assert.equal((await api.get('/lists')).body.find((x: any) => x.id === l.id).memberCount, 1);
  const members = (await api.get(`/lists/${l.id}/members`)).body;
  assert.deepEqual(
    members.data.map((x: any) => x.id),
    [b.id],
  );
  assert.equal(members.pagination.total, 1);
  // The deleted record is no longer a member: removing it is a 404, adding it too.
  assert.equal((await api.delete(`/lists/${l.id}/members/${a.id}`)).status, 404);
  assert.deepEqual((await api.post(`/lists/${l.id}/members`, { objectIds: [a.id] })).body.ids, [a.id]);
  assert.deepEqual((await api.post(`/lists/${l.id}/members`, { objectIds: [b.id] })).body, { added: 0, memberCount: 1 });
});

test('lists: removing a member', async () => {
  const { api } = await newTenant(t);
  const l = await staticList(api);
  const [a, b] = [await contact(api), await contact(api)];
  await api.post(`/lists/${l.id}/members`, { objectIds: [a.id] });
  const r = await api.delete(`/lists/${l.id}/members/${a.id}`);
  assert.equal(r.status, 204);
  assert.equal(r.raw.body, '');
  assert.equal((await api.get(`/lists/${l.id}`)).body.memberCount, 0);
  assert.equal((await api.get(`/contacts/${a.id}`)).status, 200);
  for (const id of [a.id, b.id, 'con_nope', '%00']) {
    const again = await api.delete(`/lists/${l.id}/members/${id}`);
    assert.equal(again.status, 404, id);
    assert.equal(again.body.error, 'not_found');
  }
  assert.equal((await api.delete(`/lists/lst_nope/members/${a.id}`)).status, 404);
});

test('lists: membership writes on a dynamic list are 409 list_kind_mismatch, member or not, before any id check', async () => {
  const { api, refs, tenantId } = await newTenant(t);
  const a = await contact(api, { score: 95 });
  const { recalculateDirtyLists } = await import('../../src/workers/dynamic-lists.js');
  // Only this tenant: a pass over the shared PostgreSQL database would take other test files' markers.
  await recalculateDirtyLists(t.database, undefined, undefined, { tenantIds: [tenantId] });
  assert.equal((await api.get(`/lists/${refs.hot}`)).body.memberCount, 1);
  for (const r of [
    await api.post(`/lists/${refs.hot}/members`, { objectIds: [a.id] }),
    await api.post(`/lists/${refs.hot}/members`, { objectIds: ['con_missing'] }),
    await api.delete(`/lists/${refs.hot}/members/${a.id}`),
    await api.delete(`/lists/${refs.hot}/members/con_missing`),
  ]) {
    assert.equal(r.status, 409);
    assert.equal(r.body.error, 'list_kind_mismatch');
  }
  assert.equal((await api.get(`/lists/${refs.hot}`)).body.memberCount, 1);
});

test('lists: scopes lists:read and lists:write', async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push(
    { ref: 'lr', name: 'Lists read', user: 'ana', scopes: ['lists:read'] },
    { ref: 'lw', name: 'Lists write', user: 'ana', scopes: ['lists:write'] },
  );
  const { api, as } = await newTenant(t, setup);
  const l = await staticList(api);
  const a = await contact(api);
  const ro = as('ro'); // contacts:read only
  const r = await ro.get('/lists');
  assert.equal(r.status, 403);
  assert.equal(r.body.error, 'insufficient_scope');
  assert.deepEqual(r.body.required, ['lists:read']);
  assert.equal((await as('lr').get(`/lists/${l.id}/members`)).status, 200);
  assert.equal((await as('lr').post('/lists', { name: 'x', objectType: 'contact', kind: 'static' })).status, 403);
  assert.equal((await as('lr').post(`/lists/${l.id}/members`, { objectIds: [a.id] })).status, 403);
  assert.equal((await as('lw').get('/lists')).status, 403);
  assert.equal((await as('lw').post(`/lists/${l.id}/members`, { objectIds: [a.id] })).status, 200);
  assert.equal((await as('lw').delete(`/lists/${l.id}/members/${a.id}`)).status, 204);
  assert.equal((await as('lw').patch(`/lists/${l.id}`, { name: 'y' })).status, 200);
  assert.equal((await as('lw').delete(`/lists/${l.id}`)).status, 204);
});

test('lists: tenant isolation — list ids in paths and record ids in bodies', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const la = await staticList(a.api);
  const ca = await contact(a.api);
  await a.api.post(`/lists/${la.id}/members`, { objectIds: [ca.id] });
  const lb = await staticList(b.api);
  const cb = await contact(b.api);

  assert.equal((await b.api.get(`/lists/${la.id}`)).status, 404);
  assert.equal((await b.api.get(`/lists/${la.id}/members`)).status, 404);
  assert.equal((await b.api.patch(`/lists/${la.id}`, { name: 'mine' })).status, 404);
  assert.equal((await b.api.post(`/lists/${la.id}/members`, { objectIds: [cb.id] })).status, 404);
  assert.equal((await b.api.delete(`/lists/${la.id}/members/${ca.id}`)).status, 404);
  assert.equal((await b.api.delete(`/lists/${la.id}`)).status, 404);
  assert.equal((await b.api.get(`/lists/${a.refs.hot}`)).status, 404);
  assert.ok(!(await b.api.get('/lists')).body.some((x: any) => x.id === la.id || x.id === a.refs.hot));

  // A's contact in B's list: 404 naming it, nothing added.
  const cross = await b.api.post(`/lists/${lb.id}/members`, { objectIds: [cb.id, ca.id] });
  assert.equal(cross.status, 404);
  assert.deepEqual(cross.body.ids, [ca.id]);
  assert.equal((await b.api.get(`/lists/${lb.id}`)).body.memberCount, 0);

  const still = await a.api.get(`/lists/${la.id}/members`);
  assert.deepEqual(
    still.body.data.map((x: any) => x.id),
    [ca.id],
  );
  assert.equal((await a.api.get(`/lists/${la.id}`)).body.name, la.name);
});
