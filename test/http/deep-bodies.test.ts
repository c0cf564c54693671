// Hostile bodies never reach a recursive walk: a deeply nested JSON body answers 400 on the API and on
// the public form route, never 500 (a stack overflow in a recursive scan would be one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, newTenant, testApp, type Tenant } from '../helpers/app.js';

const t = await testApp();
const pub = client(t.app, undefined);

const DEPTH = 5_000;
/** `{"a":{"a":…"leaf"…}}` and `[[[…"leaf"…]]]`, each about 10 KB, with and without a NUL inside. */
function deepBodies(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, leaf] of [
    ['plain', '"x"'],
    ['nul', '"a\\u0000b"'],
  ] as const) {
    out[`object-${name}`] = '{"a":'.repeat(DEPTH) + leaf + '}'.repeat(DEPTH);
    out[`array-${name}`] = '['.repeat(DEPTH) + leaf + ']'.repeat(DEPTH);
    out[`field-${name}`] = '{"firstName":"A","email":"deep@x.test","customProperties":' + '{"a":'.repeat(DEPTH) + leaf + '}'.repeat(DEPTH) + '}';
    out[`key-${name}`] = '{"a\\u0000":' + '['.repeat(DEPTH) + leaf + ']'.repeat(DEPTH) + '}';
  }
  return out;
}

async function formPath(tenant: Tenant): Promise<string> {
  const form = (await tenant.api.get('/forms')).body.find((f: any) => f.slug === 'contact-us');
  return new URL(form.embedUrl).pathname;
}

test('a body nested 5,000 deep is 400 on an API route, never 500', async () => {
  const { api } = await newTenant(t);
  for (const [name, body] of Object.entries(deepBodies())) {
    for (const url of ['/contacts', '/tags', '/contacts/search']) {
      const r = await api.post(url, body);
      assert.equal(r.status, 400, `${name} ${url}: ${r.raw.body.slice(0, 300)}`);
      assert.ok(['validation_failed', 'invalid_json'].includes(r.body.error), `${name} ${url}: ${r.body.error}`);
      assert.equal(typeof r.body.message, 'string');
    }
  }
  assert.equal((await api.get('/contacts')).body.pagination.total, 0);
});

test('a body nested 5,000 deep is 400 on the public form route (JSON, no key), never 500', async () => {
  const tenant = await newTenant(t);
  const path = await formPath(tenant);
  for (const [name, body] of Object.entries(deepBodies())) {
    const r = await pub.post(path, body);
    assert.equal(r.status, 400, `${name}: ${r.raw.body.slice(0, 300)}`);
    assert.ok(['validation_failed', 'invalid_json'].includes(r.body.error), `${name}: ${r.body.error}`);
  }
  // A urlencoded post with deep bracket keys stays a 400 page too (never a 500).
  const deepKey = 'email' + '[a]'.repeat(DEPTH) + '=x';
  const r = await pub.post(path, deepKey, { 'content-type': 'application/x-www-form-urlencoded' });
  assert.ok(r.status === 400 || r.status === 200 || r.status === 201, `urlencoded: ${r.status}`);
  assert.notEqual(r.status, 500);
  const form = await tenant.api.get(`/forms/${tenant.refs.contact_us}`);
  assert.equal(form.body.submissionsCount, 0);
});

test('a NUL still names its path, at any depth within the limit', async () => {
  const { api } = await newTenant(t);
  const r = await api.post('/tags', { name: 'ok', x: [{ y: 'a\u0000b' }] });
  assert.equal(r.status, 400);
  assert.deepEqual(
    r.body.details.find((d: any) => d.message.includes('NUL')),
    { field: 'x[0].y', message: 'must not contain NUL characters' },
  );
});
