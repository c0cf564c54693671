// CONTRACT C.5: read-only reference lists (`GET /users`, `GET /loss-reasons`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();

test("GET /users: the tenant's users as { id, name, email }, by name (case-insensitive) then id", async () => {
  const setup = STANDARD_SETUP();
  setup.users.push({ ref: 'carla', name: 'carla Dias', email: 'Carla@Acme.test' });
  const ten = await newTenant(t, setup);
  const r = await ten.api.get('/users');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, [
    { id: ten.refs.ana, name: 'Ana Souza', email: 'ana@acme.test' },
    { id: ten.refs.bruno, name: 'Bruno Lima', email: 'bruno@acme.test' },
    { id: ten.refs.carla, name: 'carla Dias', email: 'carla@acme.test' },
  ]);
});

test("GET /loss-reasons: the tenant's loss reasons as { id, name }, by name", async () => {
  const ten = await newTenant(t);
  const r = await ten.api.get('/loss-reasons');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, [
    { id: ten.refs.timing, name: 'Bad timing' },
    { id: ten.refs.price, name: 'Price too high' },
  ]);
  // The ids fill a deal's lossReasonId.
  const deal = await ten.api.post('/deals', { title: 'D', pipelineId: ten.refs.sales, stageId: ten.refs.lead, isLost: true, lossReasonId: r.body[0].id });
  assert.equal(deal.status, 201, JSON.stringify(deal.body));
});

test("reference lists: another tenant's users and loss reasons never appear; an empty tenant answers []", async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const users = (await a.api.get('/users')).body.map((u: any) => u.id);
  assert.deepEqual(users, [a.refs.ana, a.refs.bruno]);
  for (const id of [b.refs.ana, b.refs.bruno]) assert.ok(!users.includes(id));
  const reasons = (await a.api.get('/loss-reasons')).body.map((x: any) => x.id);
  assert.deepEqual(reasons.sort(), [a.refs.price, a.refs.timing].sort());

  const bare = await newTenant(t, { tenant: { name: 'Bare' }, apiKeys: [{ ref: 'full', name: 'Full', scopes: ['*'] }] });
  assert.deepEqual((await bare.api.get('/users')).body, []);
  assert.deepEqual((await bare.api.get('/loss-reasons')).body, []);
});

test('reference lists: scopes users:read and deals:read (`*` covers both); read-only', async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push(
    { ref: 'users', name: 'Users', user: 'ana', scopes: ['users:read'] },
    { ref: 'deals', name: 'Deals', user: 'ana', scopes: ['deals:read'] },
  );
  const ten = await newTenant(t, setup);
  assert.equal((await ten.as('users').get('/users')).status, 200);
  assert.equal((await ten.as('deals').get('/loss-reasons')).status, 200);
  for (const [key, url, scope] of [
    ['deals', '/users', 'users:read'],
    ['users', '/loss-reasons', 'deals:read'],
    ['ro', '/users', 'users:read'],
  ] as const) {
    const r = await ten.as(key).get(url);
    assert.equal(r.status, 403, `${key} ${url}`);
    assert.equal(r.body.error, 'insufficient_scope');
    assert.deepEqual(r.body.required, [scope]);
  }
  assert.equal((await ten.api.post('/users', { name: 'X', email: 'x@x.test' })).status, 404);
  assert.equal((await ten.api.post('/loss-reasons', { name: 'X' })).status, 404);
  assert.equal((await ten.api.get('/users?pageSize=10')).status, 400, 'unknown query parameters are refused');
});

test('reference lists: documented in OpenAPI with their scopes; users:read is in the scope catalogue', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const users = doc.paths['/api/v1/users'].get;
  const reasons = doc.paths['/api/v1/loss-reasons'].get;
  assert.deepEqual(users['x-scopes'], ['users:read']);
  assert.deepEqual(reasons['x-scopes'], ['deals:read']);
  assert.equal(users.operationId, 'listUsers');
  assert.equal(reasons.operationId, 'listLossReasons');
  assert.ok(users.responses['200'] && users.responses['403']);
  assert.ok(doc.components.schemas.User.examples?.length);
  assert.match(doc.info.description, /`users:read`/);
});
