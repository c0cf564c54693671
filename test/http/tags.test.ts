import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp } from '../helpers/app.js';

const t = await testApp();

test('tags: create, read, list with search, update, delete', async () => {
  const { api } = await newTenant(t);
  const created = await api.post('/tags', { name: 'VIP' });
  assert.equal(created.status, 201);
  assert.match(created.body.id, /^tag_/);
  assert.equal(created.body.color, '#e53935');
  const other = await api.post('/tags', { name: 'Churn risk', color: '#1E88E5' });
  assert.equal(other.body.color, '#1e88e5');

  assert.deepEqual((await api.get(`/tags/${created.body.id}`)).body, created.body);
  const list = await api.get('/tags?search=vi');
  assert.deepEqual(
    list.body.map((x: any) => x.name),
    ['VIP'],
  );
  assert.equal((await api.get('/tags')).body.length, 2);

  const patched = await api.patch(`/tags/${created.body.id}`, { name: 'Very important' });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.name, 'Very important');

  assert.equal((await api.delete(`/tags/${created.body.id}`)).status, 204);
  assert.equal((await api.get(`/tags/${created.body.id}`)).status, 404);
  assert.equal((await api.delete(`/tags/${created.body.id}`)).status, 404);
});

test('tags: names are unique per tenant, case-insensitively; other tenants are unaffected', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  assert.equal((await a.api.post('/tags', { name: 'Hot' })).status, 201);
  const dup = await a.api.post('/tags', { name: '  hOT ' });
  assert.equal(dup.status, 409);
  assert.equal(dup.body.error, 'duplicate_name');
  assert.equal((await b.api.post('/tags', { name: 'hot' })).status, 201);
  const x = await a.api.post('/tags', { name: 'Cold' });
  const rename = await a.api.patch(`/tags/${x.body.id}`, { name: 'HOT' });
  assert.equal(rename.status, 409);
});

test('tags: validation', async () => {
  const { api } = await newTenant(t);
  for (const body of [
    {},
    { name: '' },
    { name: '   ' },
    { name: 42 },
    { name: 'x', color: 'red' },
    { name: 'x', color: '#12345' },
    { name: 'x', extra: 1 },
    { name: 'x', id: 'tag_1' },
  ]) {
    const r = await api.post('/tags', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed');
    assert.ok(Array.isArray(r.body.details) && r.body.details.length > 0);
  }
  const r = await api.post('/tags', { name: 'x', extra: 1 });
  assert.deepEqual(r.body.details, [{ field: 'extra', message: 'is not a known field' }]);
  assert.equal((await api.get('/tags')).body.length, 0);
});

test('tags: tenant isolation', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const tag = (await a.api.post('/tags', { name: 'Secret' })).body;
  assert.equal((await b.api.get(`/tags/${tag.id}`)).status, 404);
  assert.equal((await b.api.patch(`/tags/${tag.id}`, { name: 'Mine' })).status, 404);
  assert.equal((await b.api.delete(`/tags/${tag.id}`)).status, 404);
  assert.equal((await b.api.get('/tags')).body.length, 0);
  assert.equal((await a.api.get(`/tags/${tag.id}`)).body.name, 'Secret');
});

test('tags: deleting a tag removes it from records, moves their updatedAt and raises contact.updated for tagged contacts', async () => {
  const { api, tenantId } = await newTenant(t);
  const tag = (await api.post('/tags', { name: 'VIP' })).body;
  const tagged = (await api.post('/contacts', { firstName: 'Tagged', tags: [tag.id] })).body;
  const plain = (await api.post('/contacts', { firstName: 'Plain' })).body;
  const company = (await api.post('/companies', { name: 'Acme', tags: [tag.id] })).body;
  await new Promise((r) => setTimeout(r, 5));
  assert.equal((await api.delete(`/tags/${tag.id}`)).status, 204);

  const after = (await api.get(`/contacts/${tagged.id}`)).body;
  assert.deepEqual(after.tags, []);
  assert.ok(after.updatedAt > tagged.updatedAt, 'updatedAt moves so updatedAfter sync sees it');
  const co = (await api.get(`/companies/${company.id}`)).body;
  assert.deepEqual(co.tags, []);
  assert.ok(co.updatedAt > company.updatedAt);
  assert.equal((await api.get(`/contacts/${plain.id}`)).body.updatedAt, plain.updatedAt, 'untagged records are untouched');

  const events = await t.database.db
    .selectFrom('events')
    .select(['type', 'payload'])
    .where('tenant_id', '=', tenantId)
    .where('type', '=', 'contact.updated')
    .execute();
  assert.equal(events.length, 1);
  const payload = JSON.parse(events[0].payload);
  assert.equal(payload.data.contact.id, tagged.id);
  assert.deepEqual(payload.data.contact.tags, []);
});

test("tags: every page of contacts and companies (list, search, cursor, includeDeleted) carries each record's tags as its single read does", async () => {
  const { api } = await newTenant(t);
  const ids = [];
  for (const name of ['Zeta', 'alpha', 'Mid']) ids.push((await api.post('/tags', { name })).body.id as string);
  const sets = [[ids[0], ids[1], ids[2]], [], [ids[2]], [ids[1], ids[0]]];
  for (const [i, tags] of sets.entries()) {
    assert.equal((await api.post('/contacts', { firstName: `C${i}`, tags })).status, 201);
    assert.equal((await api.post('/companies', { name: `Co${i}`, tags })).status, 201);
  }
  const gone = (await api.post('/contacts', { firstName: 'Gone', tags: [ids[2], ids[0]] })).body;
  assert.equal((await api.delete(`/contacts/${gone.id}`)).status, 204);

  for (const [path, single] of [
    ['/contacts?pageSize=10', '/contacts'],
    ['/contacts?pageSize=10&includeDeleted=true', '/contacts'],
    ['/contacts?limit=2', '/contacts'],
    ['/companies?pageSize=10', '/companies'],
    ['/companies?pageSize=10&includeDeleted=true', '/companies'],
  ] as const) {
    const page = await api.get(path);
    assert.equal(page.status, 200, path);
    assert.ok(page.body.data.length >= 2, path);
    for (const record of page.body.data) {
      const want: unknown = record.id === gone.id ? [ids[0], ids[2]].sort() : (await api.get(`${single}/${record.id}`)).body.tags;
      assert.deepEqual(record.tags, want, `${path} ${record.id}`);
    }
  }
  // A cursor page and a search answer the same rows with the same tags.
  const first = await api.get('/contacts?pageSize=2');
  const byCursor = await api.get(`/contacts?pageSize=2&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
  assert.equal(byCursor.status, 200);
  assert.equal(byCursor.body.pagination.page, null);
  assert.equal(byCursor.body.data.length, 2);
  const search = await api.post('/contacts/search', { filters: { operator: 'AND', conditions: [{ field: 'tags', operator: 'exists' }] }, pageSize: 10 });
  assert.equal(search.status, 200);
  assert.equal(search.body.data.length, 3);
  for (const record of [...byCursor.body.data, ...search.body.data])
    assert.deepEqual(record.tags, (await api.get(`/contacts/${record.id}`)).body.tags, record.id);
  assert.deepEqual(search.body.data.find((c: { firstName: string }) => c.firstName === 'C0').tags, [...ids].sort());
});

test('tags: deals in pages, in batch reads and expanded, and the contacts and companies they expand, carry their tags as their single reads do', async () => {
  const { api, refs } = await newTenant(t);
  const ids = [];
  for (const name of ['Zeta', 'alpha', 'Mid']) ids.push((await api.post('/tags', { name })).body.id as string);
  const contact = (await api.post('/contacts', { firstName: 'Tagged', tags: [ids[2], ids[0]] })).body;
  const company = (await api.post('/companies', { name: 'Tagged Co', tags: [ids[1]] })).body;
  const sets = [[ids[0], ids[1], ids[2]], [], [ids[2]], [ids[1], ids[0]]];
  const deals = [];
  for (const [i, tags] of sets.entries()) {
    const r = await api.post('/deals', { title: `D${i}`, pipelineId: refs.sales, stageId: refs.lead, contactId: contact.id, companyId: company.id, tags });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    deals.push(r.body);
  }
  const gone = (await api.post('/deals', { title: 'Gone', pipelineId: refs.sales, stageId: refs.lead, tags: [ids[2], ids[0]] })).body;
  assert.equal((await api.delete(`/deals/${gone.id}`)).status, 204);

  const singles = new Map<string, Record<string, unknown>>();
  for (const d of deals) singles.set(d.id, (await api.get(`/deals/${d.id}`)).body);
  const contactSingle = (await api.get(`/contacts/${contact.id}`)).body;
  const companySingle = (await api.get(`/companies/${company.id}`)).body;
  assert.deepEqual(contactSingle.tags, [ids[0], ids[2]].sort());
  for (const path of ['/deals?pageSize=10', `/deals?pageSize=10&pipelineId=${refs.sales}&isWon=false`, '/deals?pageSize=10&includeDeleted=true']) {
    const page = await api.get(path);
    assert.equal(page.status, 200, path);
    for (const d of page.body.data) {
      if (d.id === gone.id) {
        assert.deepEqual(d.tags, [ids[0], ids[2]].sort(), path);
        continue;
      }
      const single = singles.get(d.id);
      assert.ok(single, `${path} ${d.id}: one of the deals read one by one`);
      assert.deepEqual(d, path.includes('includeDeleted') ? { ...single, deletedAt: null } : single, `${path} ${d.id}`);
      assert.deepEqual(d.contact, contactSingle, path);
      assert.deepEqual(d.company, companySingle, path);
    }
  }
  const read = await api.post('/deals/batch/read', { ids: deals.map((d) => d.id) });
  assert.equal(read.status, 200);
  for (const d of read.body.results) assert.deepEqual(d, singles.get(d.id), `batch read ${d.id}`);
});
