// CONTRACT C.5: `pageSize` is accepted wherever the spec says `limit`, and `limit` wherever it says
// `pageSize`; both given and different is 400 naming the alias; same range as the original.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';

const t = await testApp();

/** A tenant with at least 5 records behind every paginated endpoint; returns the endpoints' URLs. */
async function seeded(): Promise<{ ten: Tenant; urls: { url: string; canonical: 'pageSize' | 'limit' }[] }> {
  const ten = await newTenant(t);
  const { api, refs } = ten;
  const contactIds: string[] = [];
  for (let i = 0; i < 5; i++) {
    contactIds.push((await api.post('/contacts', { firstName: `Paging ${i}` })).body.id);
    assert.equal((await api.post('/companies', { name: `Company ${i}` })).status, 201);
    assert.equal((await api.post('/deals', { title: `Deal ${i}`, pipelineId: refs.sales, stageId: refs.lead })).status, 201);
    assert.equal((await api.post('/proposals', { subject: `Proposal ${i}` })).status, 201);
  }
  const list = (await api.post('/lists', { name: 'Static', objectType: 'contact', kind: 'static' })).body;
  assert.equal((await api.post(`/lists/${list.id}/members`, { objectIds: contactIds })).status, 200);
  const embed = new URL((await api.get(`/forms/${refs.contact_us}`)).body.embedUrl).pathname;
  for (let i = 0; i < 5; i++) assert.equal((await api.post(embed, { email: `f${i}@paging.test`, name: `F ${i}` })).status, 201);
  return {
    ten,
    urls: [
      { url: '/contacts', canonical: 'pageSize' },
      { url: '/companies', canonical: 'pageSize' },
      { url: '/deals', canonical: 'pageSize' },
      { url: `/lists/${list.id}/members`, canonical: 'pageSize' },
      { url: '/proposals', canonical: 'limit' },
      { url: `/forms/${refs.contact_us}/submissions`, canonical: 'limit' },
    ],
  };
}

const ids = (r: { body: any }) => r.body.data.map((x: any) => x.id);
const sep = (url: string) => (url.includes('?') ? '&' : '?');

test('paging aliases: each list takes the other name for its page size, with the same answer', async () => {
  const { ten, urls } = await seeded();
  for (const { url, canonical } of urls) {
    const alias = canonical === 'pageSize' ? 'limit' : 'pageSize';
    const a = await ten.api.get(`${url}${sep(url)}${canonical}=2`);
    const b = await ten.api.get(`${url}${sep(url)}${alias}=2`);
    assert.equal(a.status, 200, `${url} ${JSON.stringify(a.body)}`);
    assert.equal(b.status, 200, `${url} ${alias}: ${JSON.stringify(b.body)}`);
    assert.equal(b.body.pagination.pageSize, 2, url);
    assert.equal(b.body.pagination.totalPages, Math.ceil(a.body.pagination.total / 2), url);
    assert.deepEqual(ids(b), ids(a), url);
    // Both with the same value is fine; page 2 by the alias continues page 1.
    const both = await ten.api.get(`${url}${sep(url)}${canonical}=2&${alias}=2&page=2`);
    assert.equal(both.status, 200, url);
    assert.equal(both.body.pagination.page, 2);
    assert.equal(
      ids(both).some((id: string) => ids(a).includes(id)),
      false,
      url,
    );
    // Without either: the default, 50.
    assert.equal((await ten.api.get(url)).body.pagination.pageSize, 50, url);
  }
});

test('paging aliases: both given and different → 400 validation_failed naming the alias; same range as the original', async () => {
  const { ten, urls } = await seeded();
  for (const { url, canonical } of urls) {
    const alias = canonical === 'pageSize' ? 'limit' : 'pageSize';
    const r = await ten.api.get(`${url}${sep(url)}${canonical}=2&${alias}=3`);
    assert.equal(r.status, 400, url);
    assert.equal(r.body.error, 'validation_failed');
    assert.deepEqual(
      r.body.details.map((d: any) => d.field),
      [alias],
      url,
    );
    assert.match(r.body.details[0].message, new RegExp(`alias of \`${canonical}\``));
    for (const q of [`${alias}=101`, `${alias}=0`, `${alias}=abc`, `${canonical}=101`]) {
      const bad = await ten.api.get(`${url}${sep(url)}${q}`);
      assert.equal(bad.status, 400, `${url} ${q}`);
      assert.equal(bad.body.error, 'validation_failed', `${url} ${q}`);
    }
    assert.equal((await ten.api.get(`${url}${sep(url)}${alias}=100`)).status, 200, url);
  }
});

test('paging aliases: a cursor walk with limit=2 on every page; the page size is not bound into the cursor', async () => {
  const { ten, urls } = await seeded();
  for (const { url } of urls) {
    const walk = async (first: string, next: (cursor: string) => string) => {
      const seen: string[] = [];
      let r = await ten.api.get(first);
      for (let i = 0; i < 10; i++) {
        assert.equal(r.status, 200, `${url}: ${JSON.stringify(r.body)}`);
        seen.push(...ids(r));
        if (!r.body.pagination.nextCursor) break;
        r = await ten.api.get(next(encodeURIComponent(r.body.pagination.nextCursor)));
      }
      return seen;
    };
    const all = ids(await ten.api.get(`${url}${sep(url)}limit=100`));
    assert.ok(all.length >= 5, url);
    assert.deepEqual(await walk(`${url}${sep(url)}limit=2`, (c) => `${url}${sep(url)}limit=2&cursor=${c}`), all, url);
    // As before C.5 for pageSize: the size may change between pages, under either name.
    assert.deepEqual(await walk(`${url}${sep(url)}limit=2`, (c) => `${url}${sep(url)}pageSize=3&cursor=${c}`), all, url);
  }
});

test('paging aliases: POST /contacts/search takes `limit` in the body too', async () => {
  const { ten } = await seeded();
  const api: Client = ten.api;
  const a = await api.post('/contacts/search', { pageSize: 2 });
  const b = await api.post('/contacts/search', { limit: 2 });
  assert.equal(b.status, 200, JSON.stringify(b.body));
  assert.equal(b.body.pagination.pageSize, 2);
  assert.deepEqual(ids(b), ids(a));
  assert.equal((await api.post('/contacts/search', { limit: 2, pageSize: 2, page: 2 })).body.pagination.page, 2);
  const r = await api.post('/contacts/search', { limit: 2, pageSize: 4 });
  assert.equal(r.status, 400);
  assert.equal(r.body.details[0].field, 'limit');
  for (const limit of [0, 101, '2']) assert.equal((await api.post('/contacts/search', { limit })).status, 400, String(limit));
  const next = await api.post('/contacts/search', { limit: 2, cursor: a.body.pagination.nextCursor });
  assert.equal(next.status, 200);
  assert.equal(
    ids(next).some((id: string) => ids(a).includes(id)),
    false,
  );
});

test('paging aliases: documented in OpenAPI on every list, without a default that would clash', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  for (const p of [
    '/api/v1/contacts',
    '/api/v1/companies',
    '/api/v1/deals',
    '/api/v1/lists/{id}/members',
    '/api/v1/proposals',
    '/api/v1/forms/{id}/submissions',
    '/api/v1/webhooks/{id}/deliveries',
  ]) {
    const params = doc.paths[p].get.parameters.filter((x: any) => x.in === 'query');
    for (const name of ['pageSize', 'limit']) {
      const param = params.find((x: any) => x.name === name);
      assert.ok(param, `${p} ${name}`);
      assert.equal(param.schema.maximum, 100);
      assert.equal(param.schema.default, undefined, `${p} ${name}`);
    }
  }
  const body = doc.paths['/api/v1/contacts/search'].post.requestBody.content['application/json'].schema;
  const props = body.properties ?? doc.components.schemas[body.$ref?.split('/').pop()]?.properties;
  assert.ok(props.limit && props.pageSize);
});
