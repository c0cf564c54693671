// The reference page's document (issue 50, scope 3): the introduction split into the guides an integrator
// reads first, in the project's own words (no internal references, no server settings); the Errors guide
// explains every code of the catalogue under a heading of its own; every resource's operations in the order
// List, Create, Get, Update, Delete; a real example answer for every operation; nothing in "Test Request"
// pre-filled that would narrow a list; a key of the right shape in the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.js';
import { ERROR_CODES } from '../../src/errors.js';
import { ERROR_EXPLANATIONS, errorTitle } from '../../src/plugins/openapi.js';

const t = await testApp();
const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const operations = (): [string, string, any][] =>
  Object.entries(doc.paths as Record<string, any>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => [path, m, item[m]] as [string, string, any]),
  );

export const GUIDES = [
  'Introduction',
  'Authentication',
  'Errors',
  'Pagination and sync',
  'Rate limits',
  'Idempotency',
  'Webhooks and the event log',
  'Versioning',
];

test("the introduction is the integrator's guides, one `##` section each, in order, starting with a heading", () => {
  const description: string = doc.info.description;
  assert.ok(description.startsWith('## Introduction\n'), 'a description that starts with a heading gets one sidebar entry per section');
  const headings = [...description.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(headings, GUIDES);
});

test('the document names no internal reference and no server setting', () => {
  const text = JSON.stringify(doc);
  assert.doesNotMatch(text, /CONTRACT/);
  const description: string = doc.info.description;
  assert.doesNotMatch(description, /\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/, 'no environment variable in the introduction');
  assert.doesNotMatch(description, /\bspec \d|\bissue \d/i);
  // The answers every operation shares (503) name no setting either.
  assert.doesNotMatch(JSON.stringify(doc.paths['/api/v1/contacts'].get.responses), /QUERY_TIMEOUT_MS|QUERY_QUEUE_PER_TENANT/);
  // Nor does any operation, parameter or schema: no environment variable of the server, no section of the spec.
  const settings = [...text.matchAll(/\b(?:EVENT|IDEMPOTENCY|WEBHOOK|QUERY|DATABASE|REDIS|RETENTION|RESTORE|AUDIT)_[A-Z0-9_]+\b/g)].map((m) => m[0]);
  assert.deepEqual([...new Set(settings)], [], 'server settings named in the document');
  assert.doesNotMatch(text, /\bspec \d/i);
});

test('the Errors guide explains every code of the catalogue under a heading of its own', () => {
  const description: string = doc.info.description;
  const errorsGuide = description.slice(description.indexOf('## Errors\n'), description.indexOf('\n## Pagination and sync'));
  const titles = [...errorsGuide.matchAll(/^### (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(titles, Object.keys(ERROR_CODES).map(errorTitle));
  for (const [code, status] of Object.entries(ERROR_CODES)) {
    assert.ok(ERROR_EXPLANATIONS[code]?.length > 10, `an explanation of ${code}`);
    assert.ok(errorsGuide.includes(`### ${errorTitle(code)}\n\n\`${code}\` · **${status}** — ${ERROR_EXPLANATIONS[code]}`), code);
    // The heading's anchor is the code with hyphens (Scalar's slug of the title): no underscore pairs in it,
    // which Scalar's sidebar would read as emphasis.
    assert.equal(errorTitle(code).toLowerCase().replace(/ /g, '-'), code.replace(/_/g, '-'));
  }
  assert.equal(errorTitle('invalid_api_key'), 'Invalid API key');
});

test('each resource lists its operations as List, Create, Get, Update, Delete, then the rest', () => {
  const byTag = new Map<string, string[]>();
  for (const [path, method, op] of operations()) {
    const tag = op.tags?.[0];
    if (!byTag.has(tag)) byTag.set(tag, []);
    byTag.get(tag)!.push(`${method.toUpperCase()} ${path}`);
  }
  const crud = (base: string) => [`GET ${base}`, `POST ${base}`, `GET ${base}/{id}`, `PATCH ${base}/{id}`, `DELETE ${base}/{id}`];
  for (const [tag, base] of [
    ['Contacts', '/api/v1/contacts'],
    ['Companies', '/api/v1/companies'],
    ['Deals', '/api/v1/deals'],
    ['Tags', '/api/v1/tags'],
    ['Lists', '/api/v1/lists'],
    ['Webhooks', '/api/v1/webhooks'],
  ]) {
    const ops = byTag.get(tag)!;
    const present = crud(base).filter((o) => ops.includes(o));
    assert.ok(present.length >= 4, `${tag}: ${ops.join(', ')}`);
    assert.deepEqual(ops.slice(0, present.length), present, tag);
  }
  assert.equal(byTag.get('Contacts')![5], 'GET /api/v1/contacts/{id}/deals', 'the rest follow, in their order');
});

/** Every leaf of a JSON value, with its key. */
function* leaves(value: unknown, key = ''): Generator<[string, unknown]> {
  if (Array.isArray(value)) for (const v of value) yield* leaves(v, key);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield* leaves(v, k);
  else yield [key, value];
}

test('every 2xx JSON answer has a real example: no "string" placeholders', () => {
  let checked = 0;
  for (const [path, method, op] of operations()) {
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      const media = response.content?.['application/json'];
      if (!/^2/.test(status) || !media) continue;
      const example = media.example ?? media.examples?.[Object.keys(media.examples)[0]]?.value;
      assert.notEqual(example, undefined, `${method} ${path} ${status} has an example`);
      for (const [key, value] of leaves(example)) {
        assert.ok(value !== 'string' && value !== 'Example', `${method} ${path} ${status}: ${key} = ${value}`);
        // `requestId` is the request's X-Request-Id (a UUID unless the client sent its own), not a record's id.
        if (key === 'id' || (key.endsWith('Id') && !key.endsWith('requestId')))
          assert.match(String(value ?? 'null'), /^(null|[a-z]+_[A-Za-z0-9]+…?)$/, `${method} ${path} ${status}: ${key} = ${value}`);
      }
      checked++;
    }
  }
  assert.ok(checked > 60, `${checked} answers checked`);
  // The one the issue found: the deals of a contact.
  const deals = doc.paths['/api/v1/contacts/{id}/deals'].get.responses['200'].content['application/json'].example;
  assert.match(deals[0].id, /^deal_/);
  assert.equal(typeof deals[0].title, 'string');
});

test('"Test Request" pre-fills no optional query parameter (an example filter would narrow the answer)', () => {
  let optional = 0;
  for (const [path, method, op] of operations()) {
    for (const p of (op.parameters ?? []) as any[]) {
      if (p.in !== 'query' || p.required) continue;
      optional++;
      const prefill = p.example ?? p.examples ?? p.schema?.example ?? p.schema?.examples;
      assert.equal(prefill, undefined, `${method} ${path} ?${p.name}`);
    }
  }
  assert.ok(optional > 30);
  // The descriptions stay.
  const search = doc.paths['/api/v1/contacts'].get.parameters.find((p: any) => p.name === 'search');
  assert.match(search.description ?? search.schema.description, /Substring/);
  // A required one keeps its example: the SDK sample uses it.
  const related = doc.paths['/api/v1/activities'].get.parameters.find((p: any) => p.name === 'relatedId');
  assert.ok(related?.required);
});

test("the page shows an API key of the shape crm_live_…, never Scalar's own placeholder", async () => {
  const page = await t.app.inject({ method: 'GET', url: '/docs/' });
  assert.equal(page.statusCode, 200);
  assert.ok(page.body.includes('crm_live_…'), 'the configuration carries our placeholder');
  const scripts = [...page.body.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1]);
  assert.ok(scripts.length > 0);
  for (const src of scripts) {
    const url = new URL(src, 'http://x/docs/').pathname;
    const js = await t.app.inject({ method: 'GET', url });
    assert.equal(js.statusCode, 200, url);
    assert.ok(!js.body.includes('QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT'), `${url} has no default key placeholder`);
    assert.equal(Number(js.headers['content-length'] ?? js.rawPayload.length), js.rawPayload.length);
  }
  assert.match(doc.components.securitySchemes.ApiKey.description, /crm_live_…/);
});
