// CONTRACT D.3: the keys of the duplicate rules (src/domain/duplicate-keys.mjs), and their SQL functions agreeing
// with them on both databases (SQLite runs the JavaScript itself; PostgreSQL its translation from migration 022).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { companyNameKey, emailDomainKey, emailKey, personKey, registrableDomain } from '../../src/domain/duplicate-keys.mjs';
import { DIALECT, testApp } from '../helpers/app.js';

/** Text of several scripts (test/domain/fold.test.ts has more): the folds of both databases must agree on each. */
const FOLD_SAMPLES = ['JOÃO', 'Ærøskøbing', 'Łódź', 'Straße', 'ΟΔΥΣΣΕΥΣ', 'Жанна', 'ﬁnance', 'Ｊｏａｏ', 'İstanbul', 'שָׁלוֹם', '東京 株式会社', '😀 ÉMOJI'];

const EMAILS = [
  'ana+crm@gmail.com',
  'a.na@gmail.com',
  'A.Na+x+y@GoogleMail.com',
  'j.doe+1@acme.com',
  'j.doe@acme.com',
  '+tag@acme.com',
  'x@y@z.com',
  'no-at-sign',
  'first.last@sub.gmail.com',
  'a+@b.co',
];
const NAMES: [string | null, string | null][] = [
  ['Ana  Lúcia', 'SILVA'],
  ['ana lucia', 'silva'],
  ['João', null],
  [null, 'Gonçalves'],
  ['  ', ' '],
  ['Ana\tMaria', 'Souza\n'],
  ...FOLD_SAMPLES.map((s): [string, string] => [s, s]),
];
const COMPANIES = [
  'Acme Ltda',
  'ACME S.A.',
  'Acme SA',
  'Acme, Inc.',
  'Acme LLC',
  'Acme GmbH',
  'Acme Ltd.',
  'Açaí Comércio Ltda - ME',
  'Padaria S/A',
  'S.A.',
  'Ltda EPP',
  'Acme EIRELI',
  'Mesa Ltda',
  'Acme (Brasil) Ltda.',
  'Café & Cia',
  '...',
  ...FOLD_SAMPLES,
];
const DOMAINS = [
  'sales.acme.com',
  'acme.com',
  'acme.com.br',
  'loja.acme.com.br',
  'com.br',
  'acme.co.uk',
  'a.b.acme.io',
  'localhost',
  'xn--caf-dma.com.br',
  'ACME.COM',
];

test('keys: e-mail without +tag (and Gmail dots), folded names, company names without legal suffixes, registrable domains', () => {
  assert.equal(emailKey('ana+crm@gmail.com'), 'ana@gmail.com');
  assert.equal(emailKey('a.na@gmail.com'), 'ana@gmail.com');
  assert.equal(emailKey('a.na@googlemail.com'), 'ana@gmail.com');
  assert.equal(emailKey('j.doe+1@acme.com'), 'j.doe@acme.com', 'dots stay outside Gmail');
  assert.equal(emailKey('+tag@acme.com'), '+tag@acme.com', 'a local part that is only a tag keeps it');
  assert.equal(emailDomainKey('Ana@Acme.COM'), 'acme.com');
  assert.equal(personKey('Ana  Lúcia', 'SILVA'), 'ana lucia silva');
  assert.equal(personKey('João', null), 'joao');
  assert.equal(personKey(' ', ''), null);
  for (const n of ['Acme Ltda', 'ACME S.A.', 'Acme, Inc.', 'acme llc', 'Acme GmbH', 'Acme Ltd.', 'Acme S/A', 'Acme Ltda ME'])
    assert.equal(companyNameKey(n), 'acme', n);
  assert.equal(companyNameKey('Mesa Ltda'), 'mesa', 'a suffix inside a word stays');
  assert.equal(companyNameKey('S.A.'), 'sa', 'a name that is only a suffix keeps it');
  assert.equal(companyNameKey('...'), null);
  assert.equal(registrableDomain('sales.acme.com'), 'acme.com');
  assert.equal(registrableDomain('loja.acme.com.br'), 'acme.com.br');
  assert.equal(registrableDomain('acme.com.br'), 'acme.com.br');
  assert.notEqual(registrableDomain('beta.com.br'), registrableDomain('delta.com.br'));
  assert.equal(registrableDomain('acme.co.uk'), 'acme.co.uk');
});

test(`the SQL key functions give the JavaScript keys (${DIALECT}), on the main connection and the read processes`, async () => {
  const { database } = await testApp();
  const one = async (q: ReturnType<typeof sql<{ k: string | null }>>) => (await q.execute(database.db)).rows[0].k;
  for (const e of EMAILS) {
    assert.equal(await one(sql`select crm_dup_email(${e}) as k`), emailKey(e), `crm_dup_email(${e})`);
    assert.equal(await one(sql`select crm_dup_email_domain(${e}) as k`), emailDomainKey(e), `crm_dup_email_domain(${e})`);
  }
  for (const [f, l] of NAMES) assert.equal(await one(sql`select crm_dup_person(${f}, ${l}) as k`), personKey(f, l), `crm_dup_person(${f}, ${l})`);
  for (const n of COMPANIES) assert.equal(await one(sql`select crm_dup_company_name(${n}) as k`), companyNameKey(n), `crm_dup_company_name(${n})`);
  for (const d of DOMAINS) assert.equal(await one(sql`select crm_dup_domain(${d}) as k`), registrableDomain(d), `crm_dup_domain(${d})`);
  for (const fn of ['crm_dup_email', 'crm_dup_email_domain', 'crm_dup_company_name', 'crm_dup_domain']) {
    assert.equal(await one(sql`select ${sql.raw(fn)}(null) as k`), null, fn);
  }
  assert.equal(await one(sql`select crm_dup_person(null, null) as k`), null);
  const reads = database.readsFor('dup-keys-test');
  assert.equal((await reads.first(sql<{ k: string }>`select crm_dup_email(${'a.na+x@gmail.com'}) as k`))?.k, 'ana@gmail.com');
});
