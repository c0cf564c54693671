// The row copies every write makes (db/search-text.ts, util/objects.ts): a new row with its search column, and
// the SET of an update with the column recomputed when a searched field changes. The repos write exactly what
// these return, so what they mean is what the stored column holds (CONTRACT C.5: search ignores case and
// accents). They are built with `extended`, which must mean what `{ ...base, ...more }` means.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SEARCH_SEPARATOR, setWithSearchText, withSearchText } from '../../src/db/search-text.js';
import { extended } from '../../src/util/objects.js';
import type { ContactChanges } from '../../src/modules/contacts/contacts.repo.js';

const row = (i: number) => ({
  tenant_id: 'ten_1',
  id: `con_${i}`,
  first_name: 'Carga',
  last_name: `Teste ${i}`,
  email: `load-${i}@bench.test`,
  phone: null,
  company_id: null,
  owner_id: null,
  score: i % 100,
  custom_properties: '{}',
  created_at: '2026-11-28T12:00:00.000Z',
  updated_at: '2026-11-28T12:00:00.000Z',
  deleted_at: null,
});

test('extended is the spread: a new object with the fields of both, in order, the second winning; the base untouched', () => {
  const base = { a: 1, b: 2 };
  const copy = extended(base, { b: 3, c: 4 });
  assert.deepEqual(copy, { ...base, ...{ b: 3, c: 4 } });
  assert.deepEqual(Object.keys(copy), ['a', 'b', 'c'], 'key order, which the JSON of an answer follows');
  assert.notEqual(copy, base);
  assert.deepEqual(base, { a: 1, b: 2 }, 'the base is not changed');
});

test('a new row keeps its fields and gains its search column: each searched field folded, joined by the separator', () => {
  const before = row(1);
  const written = withSearchText('contacts', before);
  assert.equal(written.search_text, `carga teste 1${SEARCH_SEPARATOR}load-1@bench.test`);
  assert.deepEqual(written, { ...row(1), search_text: written.search_text });
  assert.deepEqual(Object.keys(written), [...Object.keys(row(1)), 'search_text']);
  assert.deepEqual(before, row(1), 'the row given is not changed');
  // Case and accents are folded away; a missing field is an empty one.
  assert.equal(withSearchText('contacts', { first_name: 'JOÃO', last_name: null, email: null }).search_text, `joao ${SEARCH_SEPARATOR}`);
  assert.equal(
    withSearchText('companies', { name: 'Ângela Ltda', cnpj: '11222333000181', website: null, domain: 'acme.com.br' }).search_text,
    ['angela ltda', '11222333000181', '', 'acme.com.br'].join(SEARCH_SEPARATOR),
  );
  assert.equal(withSearchText('deals', { title: 'Zoë Deal' }).search_text, 'zoe deal');
});

test('an update recomputes the search column only when a searched field changes, from the new values over the row before', () => {
  const current = row(1);
  // Nothing searched changes: the SET is written as it is, without the column.
  const scoreOnly: ContactChanges = { score: 7 };
  assert.equal(setWithSearchText('contacts', scoreOnly, current), scoreOnly);
  const noneGiven: ContactChanges = { last_name: undefined, score: 7 };
  assert.deepEqual(setWithSearchText('contacts', noneGiven, current), { last_name: undefined, score: 7 });
  // One searched field changes: the column comes from it and from the fields the row already holds.
  const set: ContactChanges = { last_name: 'Novo 1', score: 7 };
  const written = setWithSearchText('contacts', set, current);
  assert.deepEqual(written, { last_name: 'Novo 1', score: 7, search_text: `carga novo 1${SEARCH_SEPARATOR}load-1@bench.test` });
  assert.deepEqual(set, { last_name: 'Novo 1', score: 7 }, 'the SET given is not changed');
  assert.deepEqual(current, row(1), 'nor the row before');
  // A field cleared (null) is cleared in the column too.
  assert.equal(setWithSearchText('contacts', { email: null }, current).search_text, `carga teste 1${SEARCH_SEPARATOR}`);
});
