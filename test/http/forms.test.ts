import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, newTenant, testApp, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();
const pub = client(t.app, undefined);

let n = 0;
const uniqueSlug = () => `t-${process.pid}-${Date.now().toString(36)}-${++n}`;

/** The standard form's public path, from its embedUrl. */
async function standardForm(api: Tenant['api']) {
  const list = await api.get('/forms');
  assert.equal(list.status, 200);
  const form = list.body.find((f: any) => f.slug === 'contact-us');
  return { form, path: new URL(form.embedUrl).pathname };
}

test('forms: list shape, embedUrl scheme /f/<tenantSlug>/<formSlug> and no internal mapping', async () => {
  const slug = uniqueSlug();
  const tenant = await newTenant(t, { ...STANDARD_SETUP(), tenant: { name: 'Slugged', slug } });
  const list = await tenant.api.get('/forms');
  assert.equal(list.status, 200);
  assert.equal(list.body.length, 1);
  const form = list.body[0];
  assert.deepEqual(Object.keys(form).sort(), ['createdAt', 'embedUrl', 'fields', 'id', 'name', 'slug', 'submissionsCount']);
  assert.equal(form.id, tenant.refs.contact_us);
  assert.equal(form.name, 'Contact us');
  assert.equal(form.slug, 'contact-us');
  assert.equal(form.submissionsCount, 0);
  assert.match(form.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  // Derived from the request when PUBLIC_BASE_URL is unset (inject's Host is localhost:80).
  assert.equal(form.embedUrl, `http://localhost:80/f/${slug}/contact-us`);
  assert.deepEqual(form.fields, [
    { name: 'email', label: 'E-mail', type: 'email', required: true },
    { name: 'name', label: 'Name', type: 'text', required: true },
    { name: 'phone', label: 'Phone', type: 'phone', required: false },
    { name: 'plan', label: 'Plan', type: 'select', required: false },
  ]);
  // The embedUrl works.
  const page = await pub.get(new URL(form.embedUrl).pathname);
  assert.equal(page.status, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  // The Host of the request decides the base.
  const other = await t.app.inject({ method: 'GET', url: '/api/v1/forms', headers: { 'x-api-key': tenant.api.key, host: 'crm.acme.test:8443' } });
  assert.equal(JSON.parse(other.body)[0].embedUrl, `http://crm.acme.test:8443/f/${slug}/contact-us`);
});

test('forms: PUBLIC_BASE_URL sets the embedUrl base', async () => {
  const t2 = await testApp({ PUBLIC_BASE_URL: 'https://crm.example.com/' });
  const slug = uniqueSlug();
  const tenant = await newTenant(t2, { ...STANDARD_SETUP(), tenant: { name: 'Based', slug } });
  const list = await tenant.api.get('/forms');
  assert.equal(list.body[0].embedUrl, `https://crm.example.com/f/${slug}/contact-us`);
  const one = await tenant.api.get(`/forms/${tenant.refs.contact_us}`);
  assert.equal(one.body.embedUrl, `https://crm.example.com/f/${slug}/contact-us`);
});

test('forms: single read carries options and validations, never mapsTo', async () => {
  const setup = STANDARD_SETUP();
  setup.forms.push({
    ref: 'signup',
    name: 'Sign up',
    slug: 'sign-up',
    fields: [
      { name: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
      { name: 'zip', label: 'ZIP', type: 'text', required: false, validations: { pattern: '\\d{5}-?\\d{3}', minLength: 8, maxLength: 9 } },
      { name: 'seats', label: 'Seats', type: 'number', required: false, validations: { min: 1, max: 500 } },
      {
        name: 'topics',
        label: 'Topics',
        type: 'multi_select',
        required: false,
        options: [
          { value: 'a', label: 'A' },
          { value: 'b', label: 'B' },
        ],
      },
    ],
  });
  const { api, refs } = await newTenant(t, setup);
  const one = await api.get(`/forms/${refs.signup}`);
  assert.equal(one.status, 200);
  assert.equal(one.body.name, 'Sign up');
  assert.equal(one.body.submissionsCount, 0);
  assert.deepEqual(one.body.fields, [
    { name: 'email', label: 'E-mail', type: 'email', required: true },
    { name: 'zip', label: 'ZIP', type: 'text', required: false, validations: { pattern: '\\d{5}-?\\d{3}', minLength: 8, maxLength: 9 } },
    { name: 'seats', label: 'Seats', type: 'number', required: false, validations: { min: 1, max: 500 } },
    {
      name: 'topics',
      label: 'Topics',
      type: 'multi_select',
      required: false,
      options: [
        { value: 'a', label: 'A' },
        { value: 'b', label: 'B' },
      ],
    },
  ]);
  const std = await api.get(`/forms/${refs.contact_us}`);
  assert.deepEqual(std.body.fields[3], {
    name: 'plan',
    label: 'Plan',
    type: 'select',
    required: false,
    options: [
      { value: 'smb', label: 'SMB' },
      { value: 'ent', label: 'Enterprise' },
    ],
  });
  // The list stays the short shape.
  const list = await api.get('/forms');
  const signup = list.body.find((f: any) => f.id === refs.signup);
  assert.deepEqual(signup.fields[3], { name: 'topics', label: 'Topics', type: 'multi_select', required: false });
  assert.equal(JSON.stringify(list.body).includes('mapsTo'), false);
  assert.equal(JSON.stringify(one.body).includes('mapsTo'), false);
});

test('forms: scopes — forms:read reads forms, forms:submissions:read reads submissions', async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push(
    { ref: 'forms', name: 'Forms only', user: 'ana', scopes: ['forms:read'] },
    { ref: 'subs', name: 'Submissions only', user: 'ana', scopes: ['forms:submissions:read'] },
  );
  const { as, refs } = await newTenant(t, setup);
  const formsKey = as('forms');
  const subsKey = as('subs');
  const id = refs.contact_us;

  assert.equal((await formsKey.get('/forms')).status, 200);
  assert.equal((await formsKey.get(`/forms/${id}`)).status, 200);
  const denied = await formsKey.get(`/forms/${id}/submissions`);
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error, 'insufficient_scope');
  assert.deepEqual(denied.body.required, ['forms:submissions:read']);

  assert.equal((await subsKey.get(`/forms/${id}/submissions`)).status, 200);
  assert.equal((await subsKey.get('/forms')).status, 403);
  assert.equal((await subsKey.get(`/forms/${id}`)).status, 403);

  for (const url of ['/forms', `/forms/${id}`, `/forms/${id}/submissions`]) {
    assert.equal((await as('ro').get(url)).status, 403, url);
    assert.equal((await pub.get(url)).status, 401, url);
  }
});

test("forms: tenant isolation — another tenant's form ids are 404", async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const { path } = await standardForm(a.api);
  assert.equal((await pub.post(path, { email: 'x@acme.test', name: 'X' })).status, 201);
  const id = a.refs.contact_us;
  for (const url of [`/forms/${id}`, `/forms/${id}/submissions`]) {
    const r = await b.api.get(url);
    assert.equal(r.status, 404, url);
    assert.equal(r.body.error, 'not_found');
  }
  const bList = await b.api.get('/forms');
  assert.deepEqual(
    bList.body.map((f: any) => f.id),
    [b.refs.contact_us],
  );
  assert.equal(bList.body[0].submissionsCount, 0);
  assert.equal((await b.api.get(`/forms/${b.refs.contact_us}/submissions`)).body.pagination.total, 0);
  for (const odd of ['nope', 'frm_x', '%20', 'a'.repeat(300)]) {
    assert.equal((await a.api.get(`/forms/${odd}`)).status, 404, odd);
    assert.equal((await a.api.get(`/forms/${odd}/submissions`)).status, 404, odd);
  }
});

test('forms: submissions envelope, newest first, limit as pageSize, metadata', async () => {
  const { api, refs } = await newTenant(t);
  const { path } = await standardForm(api);
  const empty = await api.get(`/forms/${refs.contact_us}/submissions`);
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body, { data: [], pagination: { page: 1, pageSize: 50, total: 0, totalPages: 0, hasNext: false, hasPrev: false, nextCursor: null } });

  const ids: string[] = [];
  for (const i of [1, 2, 3]) {
    const r = await t.app.inject({
      method: 'POST',
      url: path,
      payload: { email: `p${i}@acme.test`, name: `P${i}`, plan: 'ent' },
      headers: { 'user-agent': `agent-${i}`, referer: 'https://www.acme.test/contact' },
      remoteAddress: `203.0.113.${i}`,
    });
    assert.equal(r.statusCode, 201, r.body);
    ids.push(JSON.parse(r.body).submissionId);
  }
  const page1 = await api.get(`/forms/${refs.contact_us}/submissions?limit=2`);
  assert.equal(page1.status, 200);
  assert.deepEqual(page1.body.pagination, {
    page: 1,
    pageSize: 2,
    total: 3,
    totalPages: 2,
    hasNext: true,
    hasPrev: false,
    nextCursor: page1.body.pagination.nextCursor,
  });
  assert.match(page1.body.pagination.nextCursor, /^[\w-]+\.[\w-]+$/, 'a next page has a cursor');
  assert.deepEqual(
    page1.body.data.map((s: any) => s.id),
    [ids[2], ids[1]],
  );
  const s = page1.body.data[0];
  assert.deepEqual(Object.keys(s).sort(), ['contactId', 'createdAt', 'formId', 'id', 'metadata', 'values']);
  assert.equal(s.formId, refs.contact_us);
  assert.match(s.contactId, /^con_/);
  assert.deepEqual(s.values, { email: 'p3@acme.test', name: 'P3', plan: 'ent' });
  assert.deepEqual(s.metadata, { ipAddress: '203.0.113.3', userAgent: 'agent-3', referrer: 'https://www.acme.test/contact' });
  assert.match(s.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

  const page2 = await api.get(`/forms/${refs.contact_us}/submissions?limit=2&page=2`);
  assert.deepEqual(page2.body.pagination, { page: 2, pageSize: 2, total: 3, totalPages: 2, hasNext: false, hasPrev: true, nextCursor: null });
  assert.deepEqual(
    page2.body.data.map((x: any) => x.id),
    [ids[0]],
  );
  const beyond = await api.get(`/forms/${refs.contact_us}/submissions?page=5`);
  assert.deepEqual(beyond.body.data, []);
  assert.equal(beyond.body.pagination.total, 3);
  const all = await api.get(`/forms/${refs.contact_us}/submissions`);
  assert.equal(all.body.pagination.pageSize, 50);
  assert.deepEqual(
    all.body.data.map((x: any) => x.id),
    [...ids].reverse(),
  );
  assert.equal((await api.get(`/forms/${refs.contact_us}/submissions?limit=100`)).status, 200);

  for (const q of ['limit=101', 'limit=0', 'page=0', 'limit=abc', 'page=-1', 'pageSize=101']) {
    const r = await api.get(`/forms/${refs.contact_us}/submissions?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed', q);
  }
  assert.equal((await api.get(`/forms/${refs.contact_us}`)).body.submissionsCount, 3);
});

test('forms: the OpenAPI document describes the forms API and the public intake', async () => {
  const doc = JSON.parse((await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body);
  assert.ok(doc.paths['/api/v1/forms']);
  assert.ok(doc.paths['/api/v1/forms/{id}']);
  assert.ok(doc.paths['/api/v1/forms/{id}/submissions']);
  const intake = doc.paths['/f/{tenantSlug}/{slug}'];
  assert.ok(intake?.post && intake?.get);
  assert.deepEqual(intake.post.security, []);
  assert.deepEqual(Object.keys(intake.post.requestBody.content).sort(), ['application/json', 'application/x-www-form-urlencoded']);
  assert.ok(intake.post.responses['201'] && intake.post.responses['429']);
});

test('a page far past the end is an empty page, not an error', async () => {
  const { api, refs } = await newTenant(t);
  const r = await api.get(`/forms/${refs.contact_us}/submissions?page=100000000000000000000`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.data, []);
});
