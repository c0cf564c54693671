// CONTRACT B.2: a NUL character (U+0000, which PostgreSQL text cannot hold) is refused once, at the edge (app.ts):
// in a path parameter with the 404 of an id that names nothing, in a query value or anywhere in a JSON body (batches
// included) with 400 `validation_failed` naming the field. The services hold no NUL checks of their own: each case
// below reaches a service function that used to test for a NUL itself, and pins the answer the edge gives instead
// (a path's 404 says "Not found", the edge's message, not the service's "Company not found").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, newTenant, testApp } from '../helpers/app.js';

const t = await testApp();
const pub = client(t.app, undefined);

const notFound = { error: 'not_found', message: 'Not found', docUrl: '/docs#description/not_found' };
/** The 400 of a query value: the message names the parameter with a colon (errors.field). */
const badQuery = (field: string) => ({
  error: 'validation_failed',
  message: `${field}: must not contain NUL characters`,
  details: [{ field, message: 'must not contain NUL characters' }],
  docUrl: '/docs#description/validation_failed',
});
/** The 400 of a JSON body: reported by the body's validator (http/validation.ts), which words it without the colon. */
const badBody = (field: string, more: { field: string; message: string }[] = []) => ({
  error: 'validation_failed',
  message: `${field} must not contain NUL characters`,
  details: [{ field, message: 'must not contain NUL characters' }, ...more],
  docUrl: '/docs#description/validation_failed',
});

test('edge NUL: a NUL in a path parameter is the 404 of the edge, before any service reads the id', async () => {
  const { api, refs } = await newTenant(t);
  const contact = (await api.post('/contacts', { firstName: 'Nul' })).body;
  const list = (await api.post('/lists', { name: 'Nul list', objectType: 'contact', kind: 'static' })).body;
  const calls = {
    'GET /companies/%00': api.get('/companies/%00'),
    'GET /companies/a%00b': api.get('/companies/a%00b'),
    'PATCH /companies/%00': api.patch('/companies/%00', { name: 'x' }),
    'DELETE /companies/%00': api.delete('/companies/%00'),
    'GET /pipelines/%00': api.get(`/pipelines/${refs.sales}%00`),
    'GET /lists/%00': api.get('/lists/%00'),
    'PATCH /lists/%00': api.patch('/lists/%00', { name: 'x' }),
    'DELETE /lists/%00': api.delete('/lists/%00'),
    'GET /lists/%00/members': api.get('/lists/%00/members'),
    'POST /lists/%00/members': api.post('/lists/%00/members', { objectIds: [contact.id] }),
    'DELETE /lists/:id/members/%00': api.delete(`/lists/${list.id}/members/${contact.id}%00`),
    'GET /proposals/%00': api.get('/proposals/%00'),
    'PATCH /proposals/%00': api.patch('/proposals/%00', { status: 'sent' }),
    'DELETE /proposals/%00': api.delete('/proposals/%00'),
  };
  for (const [name, call] of Object.entries(calls)) {
    const r = await call;
    assert.equal(r.status, 404, name);
    assert.deepEqual(r.body, notFound, name);
  }
  assert.equal((await api.get(`/lists/${list.id}`)).body.memberCount, 0);
});

test('edge NUL: a NUL in a query value is 400 naming the parameter (listing filters and searches)', async () => {
  const { api } = await newTenant(t);
  const calls: [string, string][] = [
    ['/companies?search=a%00', 'search'],
    ['/companies?ownerId=%00', 'ownerId'],
    ['/proposals?search=%00', 'search'],
    ['/proposals?contactId=%00', 'contactId'],
    ['/proposals?clientId=%00', 'clientId'],
    ['/proposals?dealId=x%00', 'dealId'],
  ];
  for (const [url, field] of calls) {
    const r = await api.get(url);
    assert.equal(r.status, 400, url);
    assert.deepEqual(r.body, badQuery(field), url);
  }
});

test('edge NUL: a NUL in a JSON body is 400 naming the field, values, references and ids alike', async () => {
  const { api, refs } = await newTenant(t);
  const company = (await api.post('/companies', { name: 'Nul Co' })).body;
  const contact = (await api.post('/contacts', { firstName: 'Nul' })).body;
  const deal = (await api.post('/deals', { title: 'Nul deal', pipelineId: refs.sales, stageId: refs.lead })).body;
  const list = (await api.post('/lists', { name: 'Nul list', objectType: 'contact', kind: 'static' })).body;
  const cases: [string, Promise<any>, object][] = [
    ['company name', api.post('/companies', { name: 'a\u0000b' }), badBody('name')],
    ['company industry', api.post('/companies', { name: 'x', industry: '\u0000' }), badBody('industry')],
    ['company cnpj', api.post('/companies', { name: 'x', cnpj: '\u0000' }), badBody('cnpj')],
    ['company domain', api.post('/companies', { name: 'x', domain: 'a\u0000.com' }), badBody('domain')],
    ['company website', api.post('/companies', { name: 'x', website: 'https://a\u0000.com' }), badBody('website')],
    ['company phone', api.post('/companies', { name: 'x', phone: '\u0000' }), badBody('phone')],
    ['company ownerId', api.post('/companies', { name: 'x', ownerId: '\u0000' }), badBody('ownerId')],
    ['company tags', api.post('/companies', { name: 'x', tags: ['ok', '\u0000'] }), badBody('tags[1]')],
    ['company update name', api.patch(`/companies/${company.id}`, { name: 'x\u0000' }), badBody('name')],
    ['company update ownerId', api.patch(`/companies/${company.id}`, { ownerId: 'u\u0000' }), badBody('ownerId')],
    ['deal stageId', api.post('/deals', { title: 'd', pipelineId: refs.sales, stageId: `${refs.lead}\u0000` }), badBody('stageId')],
    ['deal update stageId', api.patch(`/deals/${deal.id}`, { stageId: '\u0000' }), badBody('stageId')],
    ['list members', api.post(`/lists/${list.id}/members`, { objectIds: [contact.id, 'x\u0000'] }), badBody('objectIds[1]')],
    ['proposal dealId', api.post('/proposals', { dealId: '\u0000', contactId: contact.id, subject: 'S' }), badBody('dealId')],
  ];
  for (const [name, call, expected] of cases) {
    const r = await call;
    assert.equal(r.status, 400, name);
    assert.deepEqual(r.body, expected, `${name}: ${JSON.stringify(r.body)}`);
  }
  // Nothing was written: the company is unchanged and the list has no member.
  assert.deepEqual((await api.get(`/companies/${company.id}`)).body, company);
  assert.equal((await api.get(`/lists/${list.id}`)).body.memberCount, 0);
});

test('edge NUL: one NUL anywhere in a batch refuses the whole batch (400, no 207), before any input is applied', async () => {
  const { api } = await newTenant(t);
  const company = (await api.post('/companies', { name: 'Nul batch Co' })).body;
  const cases: [string, Promise<any>, object][] = [
    ['create', api.post('/companies/batch/create', { inputs: [{ name: 'Applied?' }, { name: 'a\u0000' }] }), badBody('inputs[1].name')],
    ['update', api.post('/companies/batch/update', { inputs: [{ id: `${company.id}\u0000`, name: 'y' }] }), badBody('inputs[0].id')],
    ['upsert', api.post('/companies/batch/upsert', { idProperty: 'domain', inputs: [{ name: 'z', domain: 'nul\u0000.test' }] }), badBody('inputs[0].domain')],
    ['read', api.post('/companies/batch/read', { ids: [company.id, '\u0000'] }), badBody('ids[1]')],
    ['delete', api.post('/companies/batch/delete', { ids: ['\u0000'] }), badBody('ids[0]')],
  ];
  for (const [name, call, expected] of cases) {
    const r = await call;
    assert.equal(r.status, 400, name);
    assert.deepEqual(r.body, expected, `${name}: ${JSON.stringify(r.body)}`);
  }
  const names = (await api.get('/companies')).body.data.map((c: any) => c.name);
  assert.deepEqual(names, ['Nul batch Co']);
});

test('edge NUL: a JSON post to a public form is refused at the edge like any JSON body', async () => {
  const { api } = await newTenant(t);
  const form = (await api.get('/forms')).body[0];
  const r = await pub.post(new URL(form.embedUrl).pathname, { email: 'nul@edge.test', name: 'a\u0000b' });
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, badBody('name'));
});

// A urlencoded post to a public form (@fastify/formbody) is judged by the same value rules: a NUL there was stored on
// SQLite and failed the insert on PostgreSQL (500) while the edge judged JSON bodies only.
test('edge NUL: a urlencoded post to a public form with a NUL is 400, like its JSON twin', async () => {
  const { api } = await newTenant(t);
  const form = (await api.get('/forms')).body[0];
  const r = await pub.post(new URL(form.embedUrl).pathname, 'email=nul%40form.test&name=a%00b', { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(r.status, 400);
});
