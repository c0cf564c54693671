import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createKey, revokeKey } from '../../src/admin/keys.js';
import { client, newTenant, testApp } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();
let ipSeq = 0;
const freshIp = () => `10.9.${Math.floor(++ipSeq / 250)}.${ipSeq % 250}`;

async function inject(headers: Record<string, string>, url = '/api/v1/tags', remoteAddress = freshIp()) {
  const r = await t.app.inject({ method: 'GET', url, headers, remoteAddress });
  return { status: r.statusCode, body: r.json(), headers: r.headers };
}

test('a missing key is 401 missing_api_key; malformed, unknown keys are 401 invalid_api_key; messages never echo the key', async () => {
  const missing = await inject({});
  assert.equal(missing.status, 401);
  assert.equal(missing.body.error, 'missing_api_key');
  for (const key of ['nope', 'crm_live_short', 'crm_live_' + 'A'.repeat(40), 'Bearer crm_live_' + 'x'.repeat(40), 'crm_live_' + 'é'.repeat(40)]) {
    const r = await inject({ 'x-api-key': key });
    assert.equal(r.status, 401, key);
    assert.equal(r.body.error, 'invalid_api_key');
    assert.ok(!JSON.stringify(r.body).includes(key), 'message must not echo the key');
    assert.equal(r.headers['x-ratelimit-limit'], undefined, 'unauthenticated responses carry no rate-limit headers');
  }
});

test('a valid key reaches the endpoint with 200 and rate-limit headers; X-Request-Id on every response', async () => {
  const { apiKeys } = await newTenant(t);
  const ok = await inject({ 'x-api-key': apiKeys.full });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers['x-ratelimit-limit'], '1000');
  assert.equal(ok.headers['x-ratelimit-remaining'], '999');
  assert.match(String(ok.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  const echoed = await inject({ 'x-api-key': apiKeys.full, 'x-request-id': 'trace-123' });
  assert.equal(echoed.headers['x-request-id'], 'trace-123');
  const unauth = await inject({});
  assert.ok(unauth.headers['x-request-id']);
  const notFound = await t.app.inject({ method: 'GET', url: '/nowhere' });
  assert.equal(notFound.statusCode, 404);
  assert.equal(notFound.json().error, 'not_found');
  assert.ok(notFound.headers['x-request-id']);
});

test('revoked and expired keys are refused within 5 seconds', async () => {
  const { tenantId, refs } = await newTenant(t);
  const k = await createKey(t.database.db, { tenantId, name: 'temp', scopes: ['*'], userId: refs.ana });
  const ip = freshIp();
  assert.equal((await inject({ 'x-api-key': k.key }, '/api/v1/tags', ip)).status, 200);
  await revokeKey(t.database.db, k.id);
  const started = Date.now();
  let status = 200;
  while (Date.now() - started < 5000) {
    status = (await inject({ 'x-api-key': k.key }, '/api/v1/tags', freshIp())).status;
    if (status === 401) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(status, 401, 'revoked key still accepted after 5 s');

  const past = await createKey(t.database.db, { tenantId, name: 'expired', scopes: ['*'], expiresAt: '2020-01-01T00:00:00Z' });
  assert.equal((await inject({ 'x-api-key': past.key })).body.error, 'invalid_api_key');
  const soon = await createKey(t.database.db, { tenantId, name: 'soon', scopes: ['*'], expiresAt: new Date(Date.now() + 1500).toISOString() });
  assert.equal((await inject({ 'x-api-key': soon.key })).status, 200);
  await new Promise((r) => setTimeout(r, 1600));
  assert.equal((await inject({ 'x-api-key': soon.key })).status, 401, 'expiry takes effect at once, even when cached');
});

test('failed authentications are limited per client IP: the 21st within a minute is 429', async () => {
  const ip = freshIp();
  for (let i = 1; i <= 20; i++) assert.equal((await inject({ 'x-api-key': 'crm_live_' + 'Z'.repeat(40) }, '/api/v1/tags', ip)).status, 401, `attempt ${i}`);
  const r = await inject({}, '/api/v1/tags', ip);
  assert.equal(r.status, 429);
  assert.equal(r.body.error, 'rate_limit_exceeded');
  assert.ok(Number(r.headers['retry-after']) > 0);
  // Another address is unaffected, and a valid key from the blocked address still works.
  assert.equal((await inject({}, '/api/v1/tags', freshIp())).status, 401);
  const { apiKeys } = await newTenant(t);
  assert.equal((await inject({ 'x-api-key': apiKeys.full }, '/api/v1/tags', ip)).status, 200);
});

test('scopes: 403 insufficient_scope names the missing scope with required and have; * allows all; write does not imply read', async () => {
  const tenant = await newTenant(t);
  const ro = tenant.as('ro'); // contacts:read
  const denied = await ro.get('/tags');
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error, 'insufficient_scope');
  assert.deepEqual(denied.body.required, ['tags:read']);
  assert.deepEqual(denied.body.have, ['contacts:read']);
  assert.match(denied.body.message, /tags:read/);
  const k = await createKey(t.database.db, { tenantId: tenant.tenantId, name: 'tags writer', scopes: ['tags:write'] });
  const writer = client(t.app, k.key);
  assert.equal((await writer.post('/tags', { name: 'x' })).status, 201);
  const read = await writer.get('/tags');
  assert.equal(read.status, 403, 'tags:write must not imply tags:read');
  assert.deepEqual(read.body.required, ['tags:read']);
  assert.equal((await tenant.api.get('/tags')).status, 200);
});

test('rate limit: per key, headers on every authenticated answer, 429 with Retry-After and the documented body', async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push({ ref: 'five', name: 'Five', scopes: ['tags:read'], rateLimit: 5 });
  setup.apiKeys.push({ ref: 'other', name: 'Other', scopes: ['tags:read'], rateLimit: 5 });
  const tenant = await newTenant(t, setup);
  const five = tenant.as('five');
  const first = await five.get('/tags');
  assert.equal(first.headers['x-ratelimit-limit'], '5');
  assert.equal(first.headers['x-ratelimit-remaining'], '4');
  const reset = Number(first.headers['x-ratelimit-reset']);
  const nowS = Date.now() / 1000;
  assert.ok(reset > nowS + 55 && reset <= Math.ceil(nowS + 60) + 1, `reset ${reset} should be ~60 s ahead`);
  // Every authenticated call counts whatever its status: a 404 and a 403 use up the budget too.
  const miss = await five.get('/tags/tag_missing');
  assert.equal(miss.status, 404);
  assert.equal(miss.headers['x-ratelimit-remaining'], '3');
  const forbidden = await five.post('/tags', { name: 'x' });
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.headers['x-ratelimit-remaining'], '2');
  await five.get('/tags');
  const last = await five.get('/tags');
  assert.equal(last.status, 200);
  assert.equal(last.headers['x-ratelimit-remaining'], '0');
  assert.equal(Number(last.headers['x-ratelimit-reset']), reset, 'the window is fixed from the first call');
  const limited = await five.get('/tags');
  assert.equal(limited.status, 429);
  assert.deepEqual(Object.keys(limited.body).sort(), ['docUrl', 'error', 'limit', 'message', 'retryAfterSeconds']);
  assert.equal(limited.body.error, 'rate_limit_exceeded');
  assert.equal(limited.body.docUrl, '/docs#description/rate_limit_exceeded');
  assert.equal(limited.body.limit, 5);
  assert.ok(limited.body.retryAfterSeconds > 0 && limited.body.retryAfterSeconds <= 60);
  assert.equal(limited.headers['retry-after'], String(limited.body.retryAfterSeconds));
  assert.equal(limited.headers['x-ratelimit-remaining'], '0');
  assert.equal(limited.headers['x-ratelimit-limit'], '5');
  // The check order is key → rate limit → scope: an over-limit call to a forbidden endpoint is 429.
  assert.equal((await five.post('/tags', { name: 'y' })).status, 429);
  // Limits are per key, not per tenant or IP.
  assert.equal((await tenant.as('other').get('/tags')).status, 200);
});

test('an /api/v1 endpoint that declares no scope is refused to API keys with 403 forbidden', async () => {
  const { buildApp } = await import('../../src/app.js');
  const app = await buildApp({ config: t.config, database: t.database });
  app.get('/api/v1/ui-only', async () => ({ secret: true }));
  await app.ready();
  const { apiKeys } = await newTenant(t);
  const r = await app.inject({ method: 'GET', url: '/api/v1/ui-only', headers: { 'x-api-key': apiKeys.full } });
  assert.equal(r.statusCode, 403);
  assert.equal(r.json().error, 'forbidden');
  await app.close();
});
