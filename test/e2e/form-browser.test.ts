// The public form in a real browser (CONTRACT A.4): the compiled server, a tenant from `crm setup apply`,
// headless Chromium filling in and submitting the embedUrl, then the API showing the contact.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { launchChromium } from '../helpers/browser.js';
import { cli, processEnv, startServer, tmpDataDir, type RunningServer } from '../helpers/server.js';

const OPTIONS = [
  { value: 'smb', label: 'SMB' },
  { value: 'ent', label: 'Enterprise' },
];

function setupFile(slug: string): Record<string, unknown> {
  return {
    tenant: { name: 'Browser Ltda', slug },
    users: [{ ref: 'ana', name: 'Ana Souza', email: 'ana@acme.test' }],
    apiKeys: [{ ref: 'full', name: 'Integration', user: 'ana', scopes: ['*'], rateLimit: 1000 }],
    properties: [
      { ref: 'segment', objectType: 'contact', internalName: 'segment', label: 'Segment', type: 'select', options: OPTIONS },
      { ref: 'topics', objectType: 'contact', internalName: 'topics', label: 'Topics', type: 'multi_select', options: OPTIONS },
    ],
    forms: [
      {
        ref: 'contact_us',
        name: 'Talk to sales',
        slug: 'contact-us',
        fields: [
          { name: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
          { name: 'name', label: 'Name', type: 'text', required: true, mapsTo: 'firstName' },
          { name: 'surname', label: 'Last name', type: 'text', required: false, mapsTo: 'lastName' },
          { name: 'phone', label: 'Phone', type: 'phone', required: false, mapsTo: 'phone' },
          { name: 'seats', label: 'Seats', type: 'number', required: false, validations: { min: 1 } },
          { name: 'plan', label: 'Plan', type: 'select', required: false, options: OPTIONS, mapsTo: 'customProperties.segment' },
          { name: 'interests', label: 'Interests', type: 'multi_select', required: false, options: OPTIONS, mapsTo: 'customProperties.topics' },
          { name: 'call', label: 'Call me at', type: 'datetime', required: false },
          { name: 'news', label: 'Send me news', type: 'boolean', required: false },
          { name: 'message', label: 'Message', type: 'textarea', required: false },
        ],
      },
    ],
  };
}

test('a visitor fills in and submits the public form in Chromium; the contact appears in the API', { timeout: 180_000 }, async (t) => {
  const browser = await launchChromium(t, { env: { ...process.env, TZ: 'America/Sao_Paulo' } as Record<string, string> });
  if (!browser) return;
  const dataDir = tmpDataDir();
  let server: RunningServer | undefined;
  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  // WORKERS=false: on the PostgreSQL pass the database is shared with other test files' deliveries.
  const env = processEnv(dataDir, { WORKERS: 'false' });
  const slug = `browser-${process.pid}-${Date.now().toString(36)}`;
  const file = path.join(dataDir, 'setup.json');
  writeFileSync(file, JSON.stringify(setupFile(slug)));
  // The data dir must exist with the database before serve; setup apply migrates it.
  const applied = cli(['setup', 'apply', file], env);
  assert.equal(applied.status, 0, applied.stdout + applied.stderr);
  const key: string = applied.json.apiKeys.full;
  const formId: string = applied.json.refs.contact_us;
  server = await startServer(env);
  const api = async (p: string) => {
    const r = await fetch(`${server!.url}/api/v1${p}`, { headers: { 'x-api-key': key } });
    assert.equal(r.status, 200, p);
    return r.json() as Promise<any>;
  };

  const form = await api(`/forms/${formId}`);
  assert.equal(form.embedUrl, `${server.url}/f/${slug}/contact-us`);

  const page = await browser.newPage();
  const opened = await page.goto(form.embedUrl);
  assert.equal(opened?.status(), 200);
  assert.equal(await page.title(), 'Talk to sales');
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Talk to sales');

  // First attempt: a phone the server refuses (type=tel has no browser-side check) → the form again, with the error.
  await page.getByRole('textbox', { name: 'E-mail', exact: true }).fill('Maria.Silva@Example.com');
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Maria');
  await page.getByLabel('Last name').fill('Silva');
  await page.getByLabel('Phone').fill('123');
  const [rejected] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Submit' }).click()]);
  assert.equal(rejected.status(), 400);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match((await alert.textContent()) ?? '', /Phone: must be a valid phone number/);
  assert.equal(await page.getByRole('textbox', { name: 'E-mail', exact: true }).inputValue(), 'Maria.Silva@Example.com');
  assert.equal(await page.getByLabel('Phone').getAttribute('aria-invalid'), 'true');

  // Corrected and completed.
  await page.getByLabel('Phone').fill('(11) 98765-4321');
  await page.getByLabel('Seats').fill('25');
  await page.getByLabel('Plan').selectOption('ent');
  await page.getByRole('group', { name: 'Interests' }).getByLabel('SMB').check();
  await page.getByRole('group', { name: 'Interests' }).getByLabel('Enterprise').check();
  await page.getByLabel('Call me at').fill('2026-11-22T10:00');
  await page.getByLabel('Send me news').check();
  await page.getByLabel('Message').fill('Hello,\nwe would like a demo.');
  const [accepted] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Submit' }).click()]);
  assert.equal(accepted.status(), 200);
  await page.getByRole('heading', { name: 'Thank you!' }).waitFor();
  assert.match((await page.getByRole('status').textContent()) ?? '', /Talk to sales/);

  // The API shows the submission and the contact.
  assert.equal((await api(`/forms/${formId}`)).submissionsCount, 1);
  const subs = await api(`/forms/${formId}/submissions`);
  assert.equal(subs.pagination.total, 1);
  const sub = subs.data[0];
  assert.deepEqual(sub.values, {
    email: 'maria.silva@example.com',
    name: 'Maria',
    surname: 'Silva',
    phone: '+5511987654321',
    seats: 25,
    plan: 'ent',
    interests: ['smb', 'ent'],
    // The page sends the visitor's wall-clock time with its offset (São Paulo, UTC−3).
    call: '2026-11-22T13:00:00.000Z',
    news: true,
    message: 'Hello,\r\nwe would like a demo.',
  });
  assert.equal(sub.metadata.ipAddress, '127.0.0.1');
  assert.match(sub.metadata.userAgent, /Chrome/);
  assert.equal(sub.metadata.referrer, form.embedUrl);
  const contact = await api(`/contacts/${sub.contactId}`);
  assert.equal(contact.firstName, 'Maria');
  assert.equal(contact.lastName, 'Silva');
  assert.equal(contact.email, 'maria.silva@example.com');
  assert.equal(contact.phone, '+5511987654321');
  assert.deepEqual(contact.customProperties, { [applied.json.refs.segment]: 'ent', [applied.json.refs.topics]: ['smb', 'ent'] });
  const found = await api(`/contacts?search=${encodeURIComponent('maria.silva')}`);
  assert.deepEqual(
    found.data.map((c: any) => c.id),
    [sub.contactId],
  );
});
