// CONTRACT C.5: `GET /` answers a short JSON pointer to the docs and the OpenAPI document, without a key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.js';

const t = await testApp();

test('GET / (no key) points to /docs and the OpenAPI document, and both answer', async () => {
  const r = await t.app.inject({ method: 'GET', url: '/' });
  assert.equal(r.statusCode, 200);
  assert.match(String(r.headers['content-type']), /application\/json/);
  assert.ok(r.headers['x-request-id']);
  const body = r.json();
  assert.deepEqual(body, { name: 'CRM Public API', version: '1.0.0', docs: '/docs', openapi: '/api/v1/openapi.json' });
  assert.equal((await t.app.inject({ method: 'GET', url: body.openapi })).statusCode, 200);
  assert.equal((await t.app.inject({ method: 'GET', url: body.docs })).statusCode < 400, true);
  // A key is not needed, and a bad one changes nothing.
  assert.equal((await t.app.inject({ method: 'GET', url: '/', headers: { 'x-api-key': 'crm_live_nope' } })).statusCode, 200);
});

test('GET / is in the OpenAPI document, with no security and the version of the document', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const op = doc.paths['/'].get;
  assert.equal(op.operationId, 'getApiRoot');
  assert.deepEqual(op.security, []);
  assert.ok(op.responses['200']);
  assert.equal(doc.info.version, '1.0.0');
});
