// CONTRACT C.5: the setup file's `tenant.locale` (`en` or `pt-BR`, default `en`) sets the public form
// pages' `lang` and fixed texts: button, required-field note, error summary, thank-you page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, newTenant, testApp, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { applySetup } from '../../src/admin/setup.js';
import { AdminError } from '../../src/admin/keys.js';

const t = await testApp();
const pub = client(t.app, undefined);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function tenantIn(locale?: string): Promise<Tenant> {
  const s = STANDARD_SETUP();
  if (locale !== undefined) s.tenant.locale = locale;
  return newTenant(t, s);
}

async function pathOf(ten: Tenant): Promise<string> {
  return new URL((await ten.api.get(`/forms/${ten.refs.contact_us}`)).body.embedUrl).pathname;
}

const EXPECTED = {
  en: {
    lang: '<html lang="en">',
    button: '<button type="submit">Submit</button>',
    note: 'Required fields are marked with an asterisk (<span class="req">*</span>).',
    choose: '<option value="">Choose…</option>',
    summary: '<h2 id="crm-errors-title">Please correct the following</h2>',
    errorTitle: '<title>Error: Contact us</title>',
    thanks: '<h1>Thank you!</h1>\n<p>Your answers to “Contact us” were received.</p>',
    thanksTitle: '<title>Thank you — Contact us</title>',
  },
  'pt-BR': {
    lang: '<html lang="pt-BR">',
    button: '<button type="submit">Enviar</button>',
    note: 'Os campos obrigatórios estão marcados com um asterisco (<span class="req">*</span>).',
    choose: '<option value="">Selecione…</option>',
    summary: '<h2 id="crm-errors-title">Corrija os itens a seguir</h2>',
    errorTitle: '<title>Erro: Contact us</title>',
    thanks: '<h1>Obrigado!</h1>\n<p>Suas respostas a “Contact us” foram recebidas.</p>',
    thanksTitle: '<title>Obrigado — Contact us</title>',
  },
} as const;

for (const [locale, given] of [
  ['en', undefined],
  ['en', 'en'],
  ['pt-BR', 'pt-BR'],
] as const) {
  test(`form pages in ${locale} (setup locale: ${given ?? 'absent'}): page, error summary, thank-you`, async () => {
    const ten = await tenantIn(given);
    const x = EXPECTED[locale];
    const path = await pathOf(ten);

    const page = await pub.get(path);
    assert.equal(page.status, 200);
    for (const s of [x.lang, x.button, x.note, x.choose]) assert.ok(page.body.includes(s), `${s}\n${page.body}`);

    const bad = await pub.post(path, 'email=not-an-email', FORM);
    assert.equal(bad.status, 400);
    for (const s of [x.lang, x.summary, x.errorTitle, x.button]) assert.ok(bad.body.includes(s), `${s}\n${bad.body}`);

    const ok = await pub.post(path, `email=${locale.toLowerCase()}@locale.test&name=Ana`, FORM);
    assert.equal(ok.status, 200);
    for (const s of [x.lang, x.thanks, x.thanksTitle]) assert.ok(ok.body.includes(s), `${s}\n${ok.body}`);

    // The other language's texts never leak in.
    const other = EXPECTED[locale === 'en' ? 'pt-BR' : 'en'];
    for (const body of [page.body, bad.body, ok.body]) assert.ok(!body.includes(other.button) && !body.includes(other.lang));
    // JSON clients get the API's JSON errors whatever the locale.
    const json = await pub.post(path, { email: 'nope' });
    assert.equal(json.status, 400);
    assert.equal(json.body.error, 'validation_failed');
  });
}

test("form pages: a pt-BR tenant's 429 page is in Portuguese too; an unknown address (no tenant known) stays English", async () => {
  const ten = await tenantIn('pt-BR');
  const path = await pathOf(ten);
  // Invalid posts count against the intake limit too (20 a minute per IP and form), and write nothing.
  for (let i = 0; i < 20; i++) assert.equal((await pub.post(path, 'email=x', FORM)).status, 400);
  const limited = await pub.post(path, 'email=x', FORM);
  assert.equal(limited.status, 429);
  assert.match(limited.body, /<html lang="pt-BR">/);
  assert.match(limited.body, /<h1>Envios demais<\/h1>/);
  const missing = await pub.get(`${path}-nope`);
  assert.equal(missing.status, 404);
  assert.match(missing.body, /<html lang="en">/);
  assert.match(missing.body, /Form not found/);
});

test('setup: tenant.locale is stored (default en); any other value is rejected naming tenant.locale and the allowed values', async () => {
  const db = t.database.db;
  const locale = async (tenantId: string) => (await db.selectFrom('tenants').select('locale').where('id', '=', tenantId).executeTakeFirstOrThrow()).locale;
  assert.equal(await locale((await tenantIn()).tenantId), 'en');
  assert.equal(await locale((await tenantIn('pt-BR')).tenantId), 'pt-BR');
  for (const bad of ['pt', 'pt-br', 'PT-BR', 'fr', '', 42, null]) {
    const s = STANDARD_SETUP();
    s.tenant.locale = bad;
    const err = await applySetup(db, s).then(
      () => assert.fail(`accepted ${String(bad)}`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof AdminError, String(err));
    assert.equal(err.code, 'validation_failed');
    assert.equal(err.path, 'tenant.locale', err.message);
    if (typeof bad === 'string') assert.match(err.message, /must be one of en, pt-BR/);
    assert.deepEqual(await db.selectFrom('tenants').select('id').where('name', '=', s.tenant.name).execute(), [], 'nothing written');
  }
});
