import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.js';
import { newTenant, testApp } from '../helpers/app.js';

const t = await testApp();

test('malformed JSON is 400 invalid_json and changes nothing', async () => {
  const { api } = await newTenant(t);
  for (const body of ['{"name": "x"', '{name: x}', 'nul', '[1,]']) {
    const r = await api.post('/tags', body);
    assert.equal(r.status, 400, body);
    assert.equal(r.body.error, 'invalid_json');
    assert.equal(typeof r.body.message, 'string');
  }
  assert.equal((await api.get('/tags')).body.length, 0);
});

test('a body over 1 MiB is 413 payload_too_large', async () => {
  const { api } = await newTenant(t);
  const r = await api.post('/tags', { name: 'x'.repeat(1024 * 1024 + 10) });
  assert.equal(r.status, 413);
  assert.equal(r.body.error, 'payload_too_large');
});

test('a body that is not JSON is 415 unsupported_media_type', async () => {
  const { api } = await newTenant(t);
  for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
    const r = await api.post('/tags', 'name=x', { 'content-type': ct });
    assert.equal(r.status, 415, ct);
    assert.equal(r.body.error, 'unsupported_media_type');
  }
  // JSON with a charset parameter is JSON.
  assert.equal((await api.post('/tags', JSON.stringify({ name: 'ok' }), { 'content-type': 'application/json; charset=utf-8' })).status, 201);
});

test('unknown and read-only body fields are 400 validation_failed naming them; values are never coerced', async () => {
  const { api } = await newTenant(t);
  const r = await api.post('/tags', { name: 'x', createdAt: '2026-01-01T00:00:00.000Z', colour: '#ffffff' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'validation_failed');
  assert.deepEqual(r.body.details.map((d: any) => d.field).sort(), ['colour', 'createdAt']);
  assert.equal(r.body.details.find((d: any) => d.field === 'createdAt').message, 'is read-only');
  const coerced = await api.post('/tags', { name: 12345 });
  assert.equal(coerced.status, 400);
  assert.deepEqual(coerced.body.details, [{ field: 'name', message: 'must be a string' }]);
  const arr = await api.post('/tags', [{ name: 'x' }]);
  assert.equal(arr.status, 400);
  assert.equal(arr.body.error, 'validation_failed');
  assert.equal((await api.get('/tags')).body.length, 0);
});

test('unknown routes are 404 not_found; ids of any odd shape are 404, never 400', async () => {
  const { api } = await newTenant(t);
  const r = await api.get('/nothing-here');
  assert.equal(r.status, 404);
  assert.equal(r.body.error, 'not_found');
  for (const id of ['x', "1' or '1'='1", '%00', '..%2F..%2Fetc', 'a'.repeat(2000), '😀']) {
    const g = await api.get(`/tags/${encodeURIComponent(id)}`);
    assert.equal(g.status, 404, id);
    assert.equal(g.body.error, 'not_found');
  }
});

test('an unexpected failure is 500 internal_error with the request id and no internals', async () => {
  const app = await buildApp({ config: t.config, database: t.database, logger: false });
  app.get('/api/v1/boom', { config: { scopes: ['tags:read'] } }, async () => {
    throw new Error('SELECT secret FROM api_keys -- at /work/main/src/x.ts:1');
  });
  await app.ready();
  const { apiKeys } = await newTenant(t);
  const r = await app.inject({ method: 'GET', url: '/api/v1/boom', headers: { 'x-api-key': apiKeys.full } });
  assert.equal(r.statusCode, 500);
  const body = r.json();
  assert.deepEqual(Object.keys(body).sort(), ['docUrl', 'error', 'message', 'requestId']);
  assert.equal(body.error, 'internal_error');
  assert.equal(body.docUrl, '/docs#description/internal_error');
  assert.equal(body.requestId, r.headers['x-request-id']);
  assert.ok(!r.body.includes('SELECT') && !r.body.includes('/work/'));
  await app.close();
});

test('health, readiness, OpenAPI document and docs page need no key', async () => {
  const h = await t.app.inject({ method: 'GET', url: '/healthz' });
  assert.deepEqual(h.json(), { status: 'ok' });
  const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200);
  const doc = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(doc.statusCode, 200);
  const spec = doc.json();
  assert.equal(spec.openapi, '3.1.0');
  assert.ok(spec.paths['/api/v1/tags'].post, 'every endpoint is documented');
  assert.ok(spec.paths['/api/v1/tags'].post.responses['201']);
  assert.ok(spec.paths['/api/v1/tags'].post.responses['401'], 'error responses are documented');
  assert.ok(spec.components.securitySchemes.ApiKey);
  const docs = await t.app.inject({ method: 'GET', url: '/docs/' });
  assert.equal(docs.statusCode, 200);
  assert.match(docs.headers['content-type'] as string, /html/);
});

test('readiness is 503 when the database does not answer', async () => {
  const fake = {
    ...t.database,
    ping: async () => {
      throw new Error('down');
    },
  };
  const app = await buildApp({ config: t.config, database: fake, logger: false });
  await app.ready();
  const r = await app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(r.statusCode, 503);
  await app.close();
});

test('NUL characters are refused at the edge on both dialects: 400 in bodies and query strings, 404 in path ids', async () => {
  const { api } = await newTenant(t);
  const body = await api.post('/tags', { name: 'a\u0000b' });
  assert.equal(body.status, 400);
  assert.equal(body.body.error, 'validation_failed');
  assert.deepEqual(body.body.details, [{ field: 'name', message: 'must not contain NUL characters' }]);
  const query = await api.get('/tags?search=%00');
  assert.equal(query.status, 400);
  assert.equal(query.body.details[0].field, 'search');
  assert.equal((await api.get('/tags/%00')).status, 404);
  assert.equal((await api.get('/tags')).body.length, 0);
});

test('C.5: a validation message names the allowed values of a union of literals, for every bad field', async () => {
  const { api } = await newTenant(t);
  const r = await api.get('/contacts?sortKey=nope&sortOrder=up');
  assert.equal(r.status, 400);
  assert.deepEqual(r.body.details, [
    { field: 'sortKey', message: 'must be one of createdAt, updatedAt, firstName, lastName, email, score' },
    { field: 'sortOrder', message: 'must be one of asc, desc' },
  ]);
  assert.equal(r.body.message, 'query parameter sortKey must be one of createdAt, updatedAt, firstName, lastName, email, score');
});

test('C.5: every operation of the OpenAPI document has a stable, readable, unique operationId', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const ids: string[] = [];
  const missing: string[] = [];
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      if (typeof op?.operationId === 'string') ids.push(op.operationId);
      else missing.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.deepEqual(missing, []);
  assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  for (const id of ids) assert.match(id, /^[a-z][A-Za-z]+$/);
  for (const id of ['listContacts', 'getContact', 'createContact', 'searchContacts', 'createContactsBatch', 'upsertCompaniesBatch', 'listWebhookDeliveries']) {
    assert.ok(ids.includes(id), id);
  }
});

test('C.5: every invalid field of a body is reported in details, not only the first, and nothing is written', async () => {
  const { api, refs } = await newTenant(t);
  const fields = (r: { body: any }) => r.body.details.map((d: { field: string }) => d.field);

  const contact = await api.post('/contacts', { firstName: ' ', email: 'bad@', phone: 'abc', customProperties: { [refs.contact_number]: 'x', nope: 1 } });
  assert.equal(contact.status, 400);
  assert.equal(contact.body.error, 'validation_failed');
  assert.deepEqual(fields(contact), ['firstName', 'email', 'phone', `customProperties.${refs.contact_number}`, 'customProperties.nope']);
  assert.match(contact.body.message, /^firstName: must not be blank \(and 4 more\)$/);
  assert.equal((await api.get('/contacts')).body.data.length, 0);

  const ok = await api.post('/contacts', { firstName: 'Ana' });
  const patch = await api.patch(`/contacts/${ok.body.id}`, { firstName: ' ', email: 'x', customProperties: { [refs.contact_number]: 'x' } });
  assert.equal(patch.status, 400);
  assert.deepEqual(fields(patch), ['firstName', 'email', `customProperties.${refs.contact_number}`]);
  assert.equal((await api.get(`/contacts/${ok.body.id}`)).body.firstName, 'Ana');

  const company = await api.post('/companies', { name: ' ', cnpj: '123', website: 'nope', domain: 'x y', customProperties: { [refs.company_boolean]: 'yes' } });
  assert.deepEqual(fields(company), ['name', 'cnpj', 'website', 'domain', `customProperties.${refs.company_boolean}`]);

  const deal = await api.post('/deals', {
    title: ' ',
    pipelineId: refs.sales,
    stageId: refs.lead,
    currency: 'XX1',
    expectedCloseDate: '2026-13-45',
    closedAt: 'yesterday',
    customProperties: { [refs.deal_select]: 'nope' },
  });
  assert.equal(deal.status, 400);
  assert.deepEqual(fields(deal), ['title', 'currency', 'expectedCloseDate', 'closedAt', `customProperties.${refs.deal_select}`]);

  const dealOk = await api.post('/deals', { title: 'D', pipelineId: refs.sales, stageId: refs.lead });
  const activity = await api.post('/activities', { type: 'call', title: ' ', dueDate: 'x', completedAt: 'y', dealIds: [dealOk.body.id] });
  assert.equal(activity.body.error, 'validation_failed');
  assert.deepEqual(fields(activity), ['title', 'dueDate', 'completedAt']);
  // Only malformed dates: the spec's invalid_format, still naming both.
  const dates = await api.post('/activities', { type: 'call', title: 'Call', dueDate: 'x', completedAt: 'y', dealIds: [dealOk.body.id] });
  assert.equal(dates.status, 400);
  assert.equal(dates.body.error, 'invalid_format');
  assert.deepEqual(fields(dates), ['dueDate', 'completedAt']);

  const proposal = await api.post('/proposals', {
    dealId: dealOk.body.id,
    subject: ' ',
    recipientEmail: 'nope',
    items: [{ name: 'A', rate: 1.234 }, { name: ' ' }],
    discount: -1,
  });
  assert.equal(proposal.status, 400);
  assert.deepEqual(fields(proposal), ['subject', 'recipientEmail', 'items[0].rate', 'items[1].name', 'discount']);

  const webhook = await api.post('/webhooks', { name: ' ', url: 'https://example.com/h', events: ['contact.created'], headers: { 'Content-Length': '1' } });
  assert.equal(webhook.status, 400);
  assert.deepEqual(fields(webhook), ['name', 'headers.Content-Length']);

  assert.equal((await api.get('/deals')).body.data.length, 1);
  assert.deepEqual((await api.get(`/activities?relatedType=deal&relatedId=${dealOk.body.id}`)).body, []);
  assert.equal((await api.get('/proposals')).body.data.length, 0);
});

test('C.5: a body whose shape is refused still names its invalid values, in the single call and in a batch input alike', async () => {
  const { api, refs } = await newTenant(t);
  const fields = (r: { body: any }) => r.body.details.map((d: { field: string }) => d.field);

  const contact = await api.post('/contacts', { firstName: 7, email: 'bad@', phone: 'abc', score: 'high' });
  assert.equal(contact.status, 400);
  assert.equal(contact.body.error, 'validation_failed');
  assert.deepEqual(fields(contact).sort(), ['email', 'firstName', 'phone', 'score']);
  // A field the schema already refused is named once.
  const once = await api.post('/contacts', { firstName: '', email: 'bad@' });
  assert.deepEqual(fields(once).sort(), ['email', 'firstName']);

  const batch = await api.post('/contacts/batch/create', { inputs: [{ firstName: 7, email: 'bad@', phone: 'abc', score: 'high' }] });
  assert.equal(batch.status, 207);
  assert.deepEqual(batch.body.results[0].error, contact.body);

  const deal = await api.post('/deals', { title: ' ', pipelineId: refs.sales, stageId: refs.lead, currency: 'XX1', isWon: 'yes' });
  assert.deepEqual(fields(deal).sort(), ['currency', 'isWon', 'title']);
  const company = await api.post('/companies', { name: ' ', cnpj: '123', employees: 3 });
  assert.deepEqual(fields(company).sort(), ['cnpj', 'employees', 'name']);
  const activity = await api.post('/activities', { type: 'nope', title: 'Call', dueDate: 'x' });
  assert.deepEqual(fields(activity).sort(), ['dueDate', 'type']);
  const tag = await api.post('/tags', { name: ' ', color: 'red' });
  assert.deepEqual(fields(tag).sort(), ['color', 'name']);
  const webhook = await api.post('/webhooks', { name: ' ', url: 'https://example.com/h', events: 'contact.created' });
  assert.deepEqual(fields(webhook).sort(), ['events', 'name']);
  // A list or an object that passed the schema still goes through its rules: a proposal's items, a webhook's headers.
  const proposal = await api.post('/proposals', { subject: 42, items: [{ name: 'a', rate: 1.234 }, { name: ' ' }] });
  assert.deepEqual(fields(proposal).sort(), ['items[0].rate', 'items[1].name', 'subject']);
  const hooked = await api.post('/webhooks', {
    name: '',
    url: 'https://example.com/h',
    events: ['contact.created'],
    headers: { 'Content-Type': 'text/plain' },
  });
  assert.deepEqual(fields(hooked).sort(), ['headers.Content-Type', 'name']);
  // Custom properties are checked against the tenant's definitions, in the single call and in a batch input.
  const props = await api.post('/contacts', { firstName: 7, customProperties: { [refs.contact_number]: 'x', nope: 1 } });
  assert.deepEqual(fields(props).sort(), [`customProperties.${refs.contact_number}`, 'customProperties.nope', 'firstName'].sort());
  const propsBatch = await api.post('/contacts/batch/create', { inputs: [{ firstName: 7, customProperties: { [refs.contact_number]: 'x', nope: 1 } }] });
  assert.deepEqual(propsBatch.body.results[0].error, props.body);
  const companyProps = await api.post('/companies', { name: 42, customProperties: { [refs.company_boolean]: 'yes' } });
  assert.deepEqual(fields(companyProps).sort(), [`customProperties.${refs.company_boolean}`, 'name'].sort());
  const dealProps = await api.post('/deals', { title: 42, pipelineId: refs.sales, stageId: refs.lead, customProperties: { [refs.deal_select]: 'nope' } });
  assert.deepEqual(fields(dealProps).sort(), [`customProperties.${refs.deal_select}`, 'title'].sort());
  const made = await api.post('/deals', { title: 'kept', pipelineId: refs.sales, stageId: refs.lead });
  const dealPatch = await api.patch(`/deals/${made.body.id}`, { value: 'high', customProperties: { [refs.deal_select]: 'nope' } });
  assert.deepEqual(fields(dealPatch).sort(), [`customProperties.${refs.deal_select}`, 'value'].sort());
  assert.equal((await api.delete(`/deals/${made.body.id}`)).status, 204);

  assert.equal((await api.get('/contacts')).body.data.length, 0);
  assert.equal((await api.get('/deals')).body.data.length, 0);
  assert.equal((await api.get('/companies')).body.data.length, 0);
});
