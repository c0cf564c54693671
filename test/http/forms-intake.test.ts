import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, newTenant, testApp, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();
const pub = client(t.app, undefined);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const OPTIONS = [
  { value: 'smb', label: 'SMB' },
  { value: 'ent', label: 'Enterprise' },
];

/** A form with a field of every type (and mappings to the standard contact properties). */
function everythingSetup(): Record<string, any> {
  const s = STANDARD_SETUP();
  s.forms.push({
    ref: 'everything',
    name: 'Everything',
    slug: 'everything',
    fields: [
      { name: 'email', label: 'E-mail', type: 'email', required: false, mapsTo: 'email' },
      { name: 'first', label: 'First name', type: 'text', required: false, mapsTo: 'firstName', validations: { maxLength: 50 } },
      { name: 'last', label: 'Last name', type: 'text', required: false, mapsTo: 'lastName' },
      { name: 'phone', label: 'Phone', type: 'phone', required: false, mapsTo: 'phone' },
      { name: 'site', label: 'Website', type: 'url', required: false },
      {
        name: 'employees',
        label: 'Employees',
        type: 'number',
        required: false,
        validations: { min: 1, max: 100000 },
        mapsTo: 'customProperties.contact_number',
      },
      { name: 'start', label: 'Start date', type: 'date', required: false, mapsTo: 'customProperties.contact_date' },
      { name: 'call', label: 'Call me at', type: 'datetime', required: false },
      { name: 'plan', label: 'Plan', type: 'select', required: false, options: OPTIONS, mapsTo: 'customProperties.contact_select' },
      { name: 'interests', label: 'Interests', type: 'multi_select', required: false, options: OPTIONS, mapsTo: 'customProperties.contact_multi_select' },
      { name: 'newsletter', label: 'Send me news', type: 'boolean', required: false, mapsTo: 'customProperties.contact_boolean' },
      { name: 'message', label: 'Message', type: 'textarea', required: false, validations: { minLength: 5 } },
      { name: 'zip', label: 'ZIP', type: 'text', required: false, validations: { pattern: '\\d{5}-?\\d{3}' } },
    ],
  });
  return s;
}

async function pathOf(api: Tenant['api'], slug = 'contact-us'): Promise<string> {
  const form = (await api.get('/forms')).body.find((f: any) => f.slug === slug);
  return new URL(form.embedUrl).pathname;
}

async function counts(tenant: Tenant, formRef = 'contact_us') {
  const db = t.database.db;
  const contacts = await db.selectFrom('contacts').select('id').where('tenant_id', '=', tenant.tenantId).where('deleted_at', 'is', null).execute();
  const subs = await db.selectFrom('form_submissions').select('id').where('tenant_id', '=', tenant.tenantId).execute();
  const events = await db.selectFrom('events').select('type').where('tenant_id', '=', tenant.tenantId).orderBy('created_at').execute();
  const form = await tenant.api.get(`/forms/${tenant.refs[formRef]}`);
  // Sorted: events of one transaction may share a millisecond.
  return { contacts: contacts.length, submissions: subs.length, events: events.map((e) => e.type).sort(), submissionsCount: form.body.submissionsCount };
}

const urlencoded = (pairs: [string, string][]) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

test('intake GET: an accessible HTML form with an input per field type', async () => {
  const tenant = await newTenant(t, everythingSetup());
  const path = await pathOf(tenant.api, 'everything');
  const r = await pub.get(path);
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/html; charset=utf-8/);
  assert.match(String(r.headers['content-security-policy']), /default-src 'none'/);
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
  const html: string = r.body;
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /<html lang="en">/);
  assert.match(html, /<title>Everything<\/title>/);
  // No action: the form posts back to the page's own URL (also behind a path-prefixing proxy).
  assert.ok(html.includes('<form id="crm-form" method="post" accept-charset="utf-8">'));
  const input = (name: string) => new RegExp(`<input type="([a-z-]+)" id="f-${name}" name="${name}"`).exec(html)?.[1];
  assert.equal(input('email'), 'email');
  assert.equal(input('first'), 'text');
  assert.equal(input('phone'), 'tel');
  assert.equal(input('site'), 'url');
  assert.equal(input('employees'), 'number');
  assert.equal(input('start'), 'date');
  assert.equal(input('call'), 'datetime-local');
  assert.equal(input('newsletter'), 'checkbox');
  assert.match(html, /<textarea id="f-message" name="message" minlength="5" rows="5"><\/textarea>/);
  assert.match(
    html,
    /<select id="f-plan" name="plan"><option value="">Choose…<\/option><option value="smb">SMB<\/option><option value="ent">Enterprise<\/option><\/select>/,
  );
  // multi_select: a group of checkboxes sharing the field name.
  assert.match(html, /<fieldset class="field" id="f-interests">\n<legend>Interests<\/legend>/);
  assert.equal(html.match(/<input type="checkbox" id="f-interests-\d" name="interests"/g)?.length, 2);
  // Every control has a label.
  for (const name of [
    'email',
    'first',
    'last',
    'phone',
    'site',
    'employees',
    'start',
    'call',
    'plan',
    'newsletter',
    'message',
    'zip',
    'interests-0',
    'interests-1',
  ]) {
    assert.ok(html.includes(`<label for="f-${name}">`), name);
  }
  assert.match(html, /id="f-employees" name="employees" min="1" max="100000" step="any"/);
  assert.match(html, /id="f-zip" name="zip" pattern="\\d\{5\}-\?\\d\{3\}"/);
  assert.match(html, /id="f-email" name="email" autocomplete="email"/);
  // Required fields carry the attribute and a visible marker.
  const std = (await pub.get(await pathOf(tenant.api))).body as string;
  assert.match(std, /<input type="email" id="f-email" name="email" required/);
  assert.match(std, /<label for="f-email">E-mail<span class="req" aria-hidden="true"> \*<\/span><\/label>/);
  assert.match(std, /<button type="submit">Submit<\/button>/);
});

test('intake GET: unknown tenant or form is a 404 HTML page; tenants may share form slugs', async () => {
  const a = await newTenant(t);
  const setupB = STANDARD_SETUP();
  setupB.forms[0].name = 'Fale conosco';
  const b = await newTenant(t, setupB);
  const pathA = await pathOf(a.api);
  const pathB = await pathOf(b.api);
  assert.notEqual(pathA, pathB);
  assert.match((await pub.get(pathA)).body, /<h1>Contact us<\/h1>/);
  assert.match((await pub.get(pathB)).body, /<h1>Fale conosco<\/h1>/);
  const tenantSlugA = pathA.split('/')[2];
  for (const p of [`/f/${tenantSlugA}/nope`, '/f/no-such-tenant/contact-us', `/f/${tenantSlugA}/${'x'.repeat(500)}`]) {
    const r = await pub.get(p);
    assert.equal(r.status, 404, p);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.match(r.body, /Form not found/);
    const post = await pub.post(p, { email: 'a@b.test', name: 'A' });
    assert.equal(post.status, 404);
    assert.equal(post.body.error, 'not_found');
  }
  // A submission lands in the tenant of the URL only.
  assert.equal((await pub.post(pathB, { email: 'b@b.test', name: 'B' })).status, 201);
  assert.equal((await counts(a)).submissions, 0);
  assert.equal((await counts(b)).submissions, 1);
});

test('intake JSON: creates the contact, then updates the same one matched by e-mail; events and counter follow', async () => {
  const tenant = await newTenant(t);
  const { api, refs } = tenant;
  const path = await pathOf(api);
  const first = await pub.post(path, { email: '  Maria@Example.COM ', name: 'Maria', plan: 'smb' });
  assert.equal(first.status, 201);
  assert.deepEqual(Object.keys(first.body).sort(), ['contactId', 'submissionId']);
  assert.match(first.body.submissionId, /^sub_/);
  const contact = await api.get(`/contacts/${first.body.contactId}`);
  assert.equal(contact.status, 200);
  assert.equal(contact.body.firstName, 'Maria');
  assert.equal(contact.body.email, 'maria@example.com');
  assert.deepEqual(contact.body.customProperties, { [refs.contact_select]: 'smb' });
  let c = await counts(tenant);
  assert.deepEqual(c, { contacts: 1, submissions: 1, events: ['contact.created', 'form.submitted'], submissionsCount: 1 });

  const second = await pub.post(path, { email: 'maria@example.com', name: 'Maria Clara', phone: '(11) 98765-4321', plan: 'ent' });
  assert.equal(second.status, 201);
  assert.equal(second.body.contactId, first.body.contactId);
  assert.notEqual(second.body.submissionId, first.body.submissionId);
  const updated = (await api.get(`/contacts/${first.body.contactId}`)).body;
  assert.equal(updated.firstName, 'Maria Clara');
  assert.equal(updated.phone, '+5511987654321');
  assert.deepEqual(updated.customProperties, { [refs.contact_select]: 'ent' });
  c = await counts(tenant);
  assert.deepEqual(c, { contacts: 1, submissions: 2, events: ['contact.created', 'contact.updated', 'form.submitted', 'form.submitted'], submissionsCount: 2 });

  // The submission links the contact and keeps the normalized values.
  const subs = (await api.get(`/forms/${refs.contact_us}/submissions`)).body.data;
  assert.deepEqual(subs[0].values, { email: 'maria@example.com', name: 'Maria Clara', phone: '+5511987654321', plan: 'ent' });
  assert.deepEqual(
    subs.map((s: any) => s.contactId),
    [first.body.contactId, first.body.contactId],
  );
  // The event carries the contact as a single read returns it.
  const ev = await t.database.db
    .selectFrom('events')
    .select(['type', 'payload'])
    .where('tenant_id', '=', tenant.tenantId)
    .where('type', '=', 'contact.updated')
    .executeTakeFirstOrThrow();
  const payload = JSON.parse(ev.payload);
  assert.equal(payload.data.contact.id, first.body.contactId);
  assert.equal(payload.data.contact.firstName, 'Maria Clara');
});

test('intake: matches by phone when the e-mail is unknown or absent; never moves a phone between contacts', async () => {
  const tenant = await newTenant(t, everythingSetup());
  const { api } = tenant;
  const path = await pathOf(api, 'everything');
  const a = await pub.post(path, { email: 'ana@acme.test', first: 'Ana', phone: '+55 11 98765-4321' });
  assert.equal(a.status, 201);
  // Phone only → same contact, updated.
  const byPhone = await pub.post(path, { phone: '11987654321', last: 'Souza' });
  assert.equal(byPhone.status, 201);
  assert.equal(byPhone.body.contactId, a.body.contactId);
  assert.equal((await api.get(`/contacts/${a.body.contactId}`)).body.lastName, 'Souza');
  // A new e-mail with a known phone → the phone's contact, which takes the new e-mail.
  const newEmail = await pub.post(path, { email: 'ana.souza@acme.test', phone: '(11) 98765-4321' });
  assert.equal(newEmail.body.contactId, a.body.contactId);
  assert.equal((await api.get(`/contacts/${a.body.contactId}`)).body.email, 'ana.souza@acme.test');

  // Another contact; then a submission with B's e-mail and A's phone updates B and leaves the phone with A.
  const b = await pub.post(path, { email: 'bruno@acme.test', first: 'Bruno', phone: '+55 21 99876-5432' });
  assert.notEqual(b.body.contactId, a.body.contactId);
  const mixed = await pub.post(path, { email: 'bruno@acme.test', first: 'Bruno L', phone: '+5511987654321' });
  assert.equal(mixed.status, 201);
  assert.equal(mixed.body.contactId, b.body.contactId);
  const bRead = (await api.get(`/contacts/${b.body.contactId}`)).body;
  assert.equal(bRead.firstName, 'Bruno L');
  assert.equal(bRead.phone, '+5521998765432');
  assert.equal((await api.get(`/contacts/${a.body.contactId}`)).body.phone, '+5511987654321');
  const c = await counts(tenant, 'everything');
  assert.equal(c.contacts, 2);
  assert.equal(c.submissionsCount, 5);
  assert.deepEqual(
    c.events.filter((e) => e !== 'form.submitted'),
    ['contact.created', 'contact.created', 'contact.updated', 'contact.updated', 'contact.updated'],
  );
  assert.equal(c.events.filter((e) => e === 'form.submitted').length, 5);
});

test('intake: a new contact without a mapped first name takes the e-mail local part, else "Unknown"', async () => {
  const tenant = await newTenant(t, everythingSetup());
  const path = await pathOf(tenant.api, 'everything');
  const byEmail = await pub.post(path, { email: 'joao.silva@acme.test' });
  assert.equal(byEmail.status, 201);
  assert.equal((await tenant.api.get(`/contacts/${byEmail.body.contactId}`)).body.firstName, 'joao.silva');
  const byPhone = await pub.post(path, { phone: '+55 31 98888-7777' });
  assert.equal(byPhone.status, 201);
  assert.equal((await tenant.api.get(`/contacts/${byPhone.body.contactId}`)).body.firstName, 'Unknown');
  // A form with nothing to match always creates a new contact.
  const nothing = await pub.post(path, { message: 'Hello there' });
  assert.equal(nothing.status, 201);
  assert.notEqual(nothing.body.contactId, byPhone.body.contactId);
  assert.equal((await counts(tenant, 'everything')).contacts, 3);
});

test('intake urlencoded: every type converted from text; 200 thank-you page', async () => {
  const tenant = await newTenant(t, everythingSetup());
  const { api, refs } = tenant;
  const path = await pathOf(api, 'everything');
  const body = urlencoded([
    ['email', 'Lia@Acme.test'],
    ['first', ' Lia '],
    ['last', 'Costa'],
    ['phone', '(21) 99876-5432'],
    ['site', 'https://lia.example.com'],
    ['employees', '12.5'],
    ['start', '2026-12-01'],
    ['call', '2026-12-02T09:30'],
    ['plan', 'ent'],
    ['interests', 'smb'],
    ['interests', 'ent'],
    ['newsletter', 'on'],
    ['message', 'Line one\r\nLine two'],
    ['zip', '01310-100'],
  ]);
  const r = await pub.post(path, body, FORM);
  assert.equal(r.status, 200, r.body);
  assert.match(String(r.headers['content-type']), /^text\/html/);
  assert.match(r.body, /<h1>Thank you!<\/h1>/);
  assert.match(r.body, /Everything/);
  const sub = (await api.get(`/forms/${refs.everything}/submissions`)).body.data[0];
  assert.deepEqual(sub.values, {
    email: 'lia@acme.test',
    first: 'Lia',
    last: 'Costa',
    phone: '+5521998765432',
    site: 'https://lia.example.com',
    employees: 12.5,
    start: '2026-12-01',
    call: '2026-12-02T09:30:00.000Z',
    plan: 'ent',
    interests: ['smb', 'ent'],
    newsletter: true,
    message: 'Line one\r\nLine two',
    zip: '01310-100',
  });
  const contact = (await api.get(`/contacts/${sub.contactId}`)).body;
  assert.equal(contact.firstName, 'Lia');
  assert.equal(contact.lastName, 'Costa');
  assert.deepEqual(contact.customProperties, {
    [refs.contact_number]: 12.5,
    [refs.contact_date]: '2026-12-01',
    [refs.contact_select]: 'ent',
    [refs.contact_multi_select]: ['smb', 'ent'],
    [refs.contact_boolean]: true,
  });

  // An unchecked box sends nothing: false; one interest is a one-element array; an offset datetime is kept.
  const r2 = await pub.post(
    path,
    urlencoded([
      ['email', 'lia@acme.test'],
      ['interests', 'smb'],
      ['call', '2026-12-02T09:30:00-03:00'],
      ['employees', '7'],
    ]),
    FORM,
  );
  assert.equal(r2.status, 200);
  const sub2 = (await api.get(`/forms/${refs.everything}/submissions`)).body.data[0];
  assert.deepEqual(sub2.values, { email: 'lia@acme.test', employees: 7, call: '2026-12-02T12:30:00.000Z', interests: ['smb'], newsletter: false });
  assert.equal(sub2.contactId, sub.contactId);
  // Empty optional inputs (as a browser sends them) are no value.
  const r3 = await pub.post(
    path,
    urlencoded([
      ['email', 'lia@acme.test'],
      ['first', ''],
      ['employees', ''],
      ['plan', ''],
      ['zip', ''],
    ]),
    FORM,
  );
  assert.equal(r3.status, 200);
  assert.deepEqual((await api.get(`/forms/${refs.everything}/submissions`)).body.data[0].values, { email: 'lia@acme.test', newsletter: false });
  assert.equal((await api.get(`/contacts/${sub.contactId}`)).body.firstName, 'Lia');
});

test('intake JSON: values are not coerced', async () => {
  const tenant = await newTenant(t, everythingSetup());
  const path = await pathOf(tenant.api, 'everything');
  const cases: [Record<string, unknown>, string][] = [
    [{ employees: '12' }, 'employees'],
    [{ newsletter: 'true' }, 'newsletter'],
    [{ newsletter: 'on' }, 'newsletter'],
    [{ interests: 'smb' }, 'interests'],
    [{ first: 42 }, 'first'],
    [{ call: '2026-12-02T09:30' }, 'call'],
    [{ email: ['a@acme.test'] }, 'email'],
  ];
  for (const [body, field] of cases) {
    const r = await pub.post(path, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed');
    assert.deepEqual(
      r.body.details.map((d: any) => d.field),
      [field],
      JSON.stringify(body),
    );
  }
  const ok = await pub.post(path, { employees: 12, newsletter: false, interests: ['ent'], call: '2026-12-02T09:30:00Z', email: null, first: '' });
  assert.equal(ok.status, 201);
  const values = (await tenant.api.get(`/forms/${tenant.refs.everything}/submissions`)).body.data[0].values;
  assert.deepEqual(values, { employees: 12, call: '2026-12-02T09:30:00.000Z', interests: ['ent'], newsletter: false });
});

test('intake: validation errors name every bad field and change nothing', async () => {
  const tenant = await newTenant(t, everythingSetup());
  const std = await pathOf(tenant.api);
  const path = await pathOf(tenant.api, 'everything');
  const before = await counts(tenant, 'everything');
  const bad: [string, Record<string, unknown>, { field: string; message?: RegExp }[]][] = [
    [
      std,
      {},
      [
        { field: 'email', message: /required/ },
        { field: 'name', message: /required/ },
      ],
    ],
    [std, { email: 'not-an-email', name: 'X' }, [{ field: 'email', message: /e-mail/ }]],
    [std, { email: 'a@acme.test', name: '   ' }, [{ field: 'name', message: /required/ }]],
    [std, { email: 'a@acme.test', name: 'X', plan: 'gold' }, [{ field: 'plan' }]],
    [std, { email: 'a@acme.test', name: 'X', phone: '123' }, [{ field: 'phone', message: /phone/ }]],
    [std, { email: 'a@acme.test', name: 'X', nickname: 'x' }, [{ field: 'nickname', message: /not a field/ }]],
    [std, { email: 'a@acme.test', name: 'X', __proto__x: 1, constructor: 'y' }, [{ field: '__proto__x' }, { field: 'constructor' }]],
    [std, { email: 'a@acme.test', name: 'Line\nbreak' }, [{ field: 'name' }]],
    [path, { employees: 0 }, [{ field: 'employees', message: /at least 1/ }]],
    [path, { employees: 100001 }, [{ field: 'employees', message: /at most 100000/ }]],
    [path, { message: 'Hey' }, [{ field: 'message', message: /at least 5/ }]],
    [path, { first: 'x'.repeat(51) }, [{ field: 'first', message: /at most 50/ }]],
    [path, { zip: '1234' }, [{ field: 'zip', message: /format/ }]],
    [path, { zip: 'a01310-100' }, [{ field: 'zip' }]],
    [path, { site: 'javascript:alert(1)' }, [{ field: 'site' }]],
    [path, { start: '2026-02-30' }, [{ field: 'start' }]],
    [path, { interests: ['smb', 'smb'] }, [{ field: 'interests' }]],
    [path, { interests: ['gold'] }, [{ field: 'interests' }]],
    [path, { last: 'y'.repeat(201) }, [{ field: 'last', message: /at most 200/ }]],
  ];
  for (const [p, body, expected] of bad) {
    const r = await pub.post(p, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(typeof r.body.message, 'string');
    assert.deepEqual(r.body.details.map((d: any) => d.field).sort(), expected.map((e) => e.field).sort(), JSON.stringify(body));
    for (const e of expected) if (e.message) assert.match(r.body.details.find((d: any) => d.field === e.field).message, e.message);
  }
  // Not an object at all.
  for (const payload of ['[]', '"x"', '42', 'null']) {
    const r = await pub.post(std, payload, { 'content-type': 'application/json' });
    assert.equal(r.status, 400, payload);
  }
  assert.equal((await pub.post(std, '{"email":', { 'content-type': 'application/json' })).body.error, 'invalid_json');
  // urlencoded: a number that is not one, a repeated single-value key, a required box left empty.
  for (const body of ['employees=12abc', 'employees=1%2C5', 'first=a&first=b', 'newsletter=maybe']) {
    const r = await pub.post(path, body, FORM);
    assert.equal(r.status, 400, body);
  }
  assert.deepEqual(await counts(tenant, 'everything'), before);
  assert.deepEqual(before, { contacts: 0, submissions: 0, events: [], submissionsCount: 0 });
  assert.equal((await tenant.api.get(`/forms/${tenant.refs.contact_us}`)).body.submissionsCount, 0);
});

test('intake: a required checkbox must be checked', async () => {
  const s = STANDARD_SETUP();
  s.forms.push({
    ref: 'consent',
    name: 'Consent',
    slug: 'consent',
    fields: [
      { name: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
      { name: 'agree', label: 'I agree', type: 'boolean', required: true },
    ],
  });
  const tenant = await newTenant(t, s);
  const path = await pathOf(tenant.api, 'consent');
  assert.deepEqual((await pub.post(path, { email: 'a@acme.test', agree: false })).body.details, [{ field: 'agree', message: 'must be checked' }]);
  assert.deepEqual((await pub.post(path, { email: 'a@acme.test' })).body.details, [{ field: 'agree', message: 'is required' }]);
  assert.equal((await pub.post(path, 'email=a%40acme.test', FORM)).status, 400);
  assert.equal((await pub.post(path, 'email=a%40acme.test&agree=on', FORM)).status, 200);
  assert.equal((await pub.post(path, { email: 'a@acme.test', agree: true })).status, 201);
});

test('intake browser post: errors come back as the form with messages and the entered values (400 HTML)', async () => {
  const tenant = await newTenant(t);
  const path = await pathOf(tenant.api);
  const r = await pub.post(
    path,
    urlencoded([
      ['email', 'bad"><script>alert(1)</script>'],
      ['name', ''],
      ['plan', 'ent'],
    ]),
    FORM,
  );
  assert.equal(r.status, 400);
  assert.match(String(r.headers['content-type']), /^text\/html/);
  const html: string = r.body;
  assert.match(html, /<title>Error: Contact us<\/title>/);
  assert.match(html, /role="alert"/);
  assert.match(html, /<a href="#f-email">E-mail: must be a valid e-mail address<\/a>/);
  assert.match(html, /<a href="#f-name">Name: is required<\/a>/);
  assert.match(html, /id="f-email" name="email" required aria-invalid="true" aria-describedby="f-email-error"/);
  assert.match(html, /<p class="error" id="f-name-error">is required<\/p>/);
  // The visitor's entry is shown again, escaped.
  assert.ok(html.includes('value="bad&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"'));
  assert.equal(html.includes('<script>alert(1)'), false);
  assert.match(html, /<option value="ent" selected>Enterprise<\/option>/);
  assert.equal((await counts(tenant)).submissions, 0);
  // Unknown field from a hand-made post.
  const extra = await pub.post(path, 'email=a%40acme.test&name=A&evil=1', FORM);
  assert.equal(extra.status, 400);
  assert.match(extra.body, /evil: is not a field of this form/);
});

test('intake: names, labels and options from the setup file are escaped', async () => {
  const s = STANDARD_SETUP();
  s.forms.push({
    ref: 'evil',
    name: '<b>"Evil" & \'Co\'</b>',
    slug: 'evil',
    fields: [
      { name: 'email', label: '<script>alert("label")</script>', type: 'email', required: true, mapsTo: 'email' },
      {
        name: 'plan',
        label: "Plan' onmouseover='x",
        type: 'select',
        required: false,
        options: [{ value: '"><img src=x onerror=alert(1)>', label: '<img src=x onerror=alert(2)>' }],
      },
      { name: 'zip', label: 'ZIP', type: 'text', required: false, validations: { pattern: '"[0-9]+' } },
    ],
  });
  const tenant = await newTenant(t, s);
  const path = await pathOf(tenant.api, 'evil');
  const html: string = (await pub.get(path)).body;
  assert.equal(html.includes('<script>alert'), false);
  assert.equal(html.includes('<img'), false);
  assert.equal(html.includes('<b>'), false);
  assert.ok(html.includes('<title>&lt;b&gt;&quot;Evil&quot; &amp; &#39;Co&#39;&lt;/b&gt;</title>'));
  assert.ok(html.includes('&lt;script&gt;alert(&quot;label&quot;)&lt;/script&gt;'));
  assert.ok(html.includes('Plan&#39; onmouseover=&#39;x'));
  assert.ok(html.includes('<option value="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&lt;img src=x onerror=alert(2)&gt;</option>'));
  assert.ok(html.includes('pattern="&quot;[0-9]+"'));
  // The only scripts and styles are the page's own, bound to the CSP nonce.
  const nonce = /script-src 'nonce-([^']+)'/.exec(String((await pub.get(path)).headers['content-security-policy']))?.[1];
  assert.ok(nonce);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  // Thank-you page escapes the form name too; the option value is accepted as sent.
  const thanks = await pub.post(
    path,
    urlencoded([
      ['email', 'x@acme.test'],
      ['plan', '"><img src=x onerror=alert(1)>'],
    ]),
    FORM,
  );
  assert.equal(thanks.status, 200);
  assert.equal(thanks.body.includes('<b>'), false);
  assert.ok(thanks.body.includes('&lt;b&gt;&quot;Evil&quot;'));
});

test('intake: rate limit of 20 submissions a minute per client IP and form', async () => {
  const tenant = await newTenant(t);
  const { api, refs } = tenant;
  const path = await pathOf(api);
  const post = (payload: unknown, ip: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: path, payload: payload as any, remoteAddress: ip, headers });
  for (let i = 0; i < 20; i++) {
    // Invalid submissions count too: the limit is about traffic, not outcomes.
    const r = await post(i === 5 ? { email: 'bad' } : { email: `r${i}@acme.test`, name: `R${i}` }, '198.51.100.7');
    assert.equal(r.statusCode, i === 5 ? 400 : 201, `#${i + 1}`);
  }
  const limited = await post({ email: 'r21@acme.test', name: 'R21' }, '198.51.100.7');
  assert.equal(limited.statusCode, 429);
  const body = JSON.parse(limited.body);
  assert.equal(body.error, 'rate_limit_exceeded');
  assert.equal(body.limit, 20);
  const retry = Number(limited.headers['retry-after']);
  assert.ok(retry >= 1 && retry <= 60, String(retry));
  assert.equal(body.retryAfterSeconds, retry);
  // A browser gets a page.
  const html = await post('email=r22%40acme.test&name=R22', '198.51.100.7', FORM);
  assert.equal(html.statusCode, 429);
  assert.match(String(html.headers['content-type']), /^text\/html/);
  assert.ok(html.headers['retry-after']);
  // Nothing recorded beyond the limit.
  assert.equal((await api.get(`/forms/${refs.contact_us}`)).body.submissionsCount, 19);
  // Another client, or another form, is not limited.
  assert.equal((await post({ email: 'other@acme.test', name: 'O' }, '198.51.100.8')).statusCode, 201);
  const other = await newTenant(t);
  const otherPath = await pathOf(other.api);
  const r = await t.app.inject({ method: 'POST', url: otherPath, payload: { email: 'x@acme.test', name: 'X' }, remoteAddress: '198.51.100.7' });
  assert.equal(r.statusCode, 201);
  // The form page itself is not limited.
  assert.equal((await t.app.inject({ method: 'GET', url: path, remoteAddress: '198.51.100.7' })).statusCode, 200);
});

test('intake: a value the mapped property cannot hold is kept in the submission, not copied to the contact', async () => {
  const s = STANDARD_SETUP();
  s.forms.push({
    ref: 'mismatch',
    name: 'Mismatch',
    slug: 'mismatch',
    fields: [
      { name: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
      {
        name: 'plan',
        label: 'Plan',
        type: 'select',
        required: true,
        options: [
          { value: 'pro', label: 'Pro' },
          { value: 'smb', label: 'SMB' },
        ],
        mapsTo: 'customProperties.contact_select',
      },
      { name: 'notes', label: 'Notes', type: 'text', required: false, mapsTo: 'customProperties.contact_number' },
    ],
  });
  const tenant = await newTenant(t, s);
  const path = await pathOf(tenant.api, 'mismatch');
  const r = await pub.post(path, { email: 'm@acme.test', plan: 'pro', notes: 'hello' });
  assert.equal(r.status, 201);
  assert.deepEqual((await tenant.api.get(`/contacts/${r.body.contactId}`)).body.customProperties, {});
  const sub = (await tenant.api.get(`/forms/${tenant.refs.mismatch}/submissions`)).body.data[0];
  assert.deepEqual(sub.values, { email: 'm@acme.test', plan: 'pro', notes: 'hello' });
  const ok = await pub.post(path, { email: 'm@acme.test', plan: 'smb' });
  assert.deepEqual((await tenant.api.get(`/contacts/${ok.body.contactId}`)).body.customProperties, { [tenant.refs.contact_select]: 'smb' });
});

test('intake: content types — /api/v1 still refuses urlencoded; the intake refuses others', async () => {
  const tenant = await newTenant(t);
  const api415 = await tenant.api.post('/tags', 'name=VIP', FORM);
  assert.equal(api415.status, 415);
  assert.equal(api415.body.error, 'unsupported_media_type');
  const path = await pathOf(tenant.api);
  const plain = await pub.post(path, 'email=a@acme.test', { 'content-type': 'text/plain' });
  assert.equal(plain.status, 415);
  assert.equal(plain.body.error, 'unsupported_media_type');
  const multipart = await pub.post(path, '--x\r\n', { 'content-type': 'multipart/form-data; boundary=x' });
  assert.equal(multipart.status, 415);
  const big = await pub.post(path, JSON.stringify({ email: 'a@acme.test', name: 'x'.repeat(1024 * 1024 + 10) }));
  assert.equal(big.status, 413);
  assert.equal(big.body.error, 'payload_too_large');
  const bigForm = await pub.post(path, `email=a%40acme.test&name=${'x'.repeat(1024 * 1024 + 10)}`, FORM);
  assert.equal(bigForm.status, 413);
  assert.match(String(bigForm.headers['content-type']), /^text\/html/);
  assert.equal((await counts(tenant)).submissions, 0);
});

test('intake: soft-deleted contacts are not matched', async () => {
  const tenant = await newTenant(t);
  const path = await pathOf(tenant.api);
  const first = await pub.post(path, { email: 'gone@acme.test', name: 'Gone' });
  assert.equal((await tenant.api.delete(`/contacts/${first.body.contactId}`)).status, 204);
  const again = await pub.post(path, { email: 'gone@acme.test', name: 'Back' });
  assert.equal(again.status, 201);
  assert.notEqual(again.body.contactId, first.body.contactId);
  assert.equal((await tenant.api.get(`/contacts/${again.body.contactId}`)).body.firstName, 'Back');
});
