import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../src/domain/errors.js';
import { mergeCustomProperties, normalizeCustomProperties, normalizePropertyValue, type PropertyDef, type PropertyType } from '../../src/domain/properties.js';

const options = [
  { value: 'gold', label: 'Gold' },
  { value: 'silver', label: 'Silver' },
  { value: 'bronze', label: 'Bronze' },
];
const def = (type: PropertyType, id: string = type): PropertyDef => ({
  id,
  type,
  options: type === 'select' || type === 'multi_select' ? options : null,
});
const ok = (type: PropertyType, value: unknown) => normalizePropertyValue(def(type), value);
const rejects = (type: PropertyType, values: unknown[]) => {
  for (const v of values) assert.throws(() => ok(type, v), DomainError, `${type}: ${JSON.stringify(v)}`);
};

test('text: single line of at most 1000 characters', () => {
  assert.equal(ok('text', 'hello'), 'hello');
  assert.equal(ok('text', ''), '');
  assert.equal(ok('text', 'a'.repeat(1000)), 'a'.repeat(1000));
  assert.equal(ok('text', '😀'.repeat(1000)), '😀'.repeat(1000)); // counted in characters, not UTF-16 units
  rejects('text', ['a\nb', 'a\r\nb', 'a'.repeat(1001), 42, true, null, ['a'], { a: 1 }]);
});

test('textarea: multi-line string of at most 65535 characters', () => {
  assert.equal(ok('textarea', 'line 1\nline 2'), 'line 1\nline 2');
  assert.equal(ok('textarea', 'x'.repeat(65535)), 'x'.repeat(65535));
  rejects('textarea', ['x'.repeat(65536), 1, false]);
});

test('email: normalized', () => {
  assert.equal(ok('email', ' Ana@Example.COM '), 'ana@example.com');
  rejects('email', ['not-an-email', '', 1]);
});

test('phone: normalized to E.164', () => {
  assert.equal(ok('phone', '(11) 98765-4321'), '+5511987654321');
  assert.equal(ok('phone', '+1 202 555 0123'), '+12025550123');
  rejects('phone', ['abc', '123', 11987654321]);
});

test('url: full http(s) URL', () => {
  assert.equal(ok('url', 'https://acme.com/x'), 'https://acme.com/x');
  rejects('url', ['acme.com', 'javascript:alert(1)', 'ftp://acme.com', 1]);
});

test('number: finite JSON number only, never a numeric string', () => {
  assert.equal(ok('number', 42), 42);
  assert.equal(ok('number', -3.75), -3.75);
  assert.equal(ok('number', 0), 0);
  assert.ok(Object.is(ok('number', -0), 0));
  rejects('number', ['42', '', NaN, Infinity, -Infinity, true, null, [1]]);
});

test('date: YYYY-MM-DD', () => {
  assert.equal(ok('date', '2026-11-22'), '2026-11-22');
  rejects('date', ['2026-02-30', '2026-11-22T10:00:00Z', '22/11/2026', 20261122]);
});

test('datetime: normalized to UTC with milliseconds', () => {
  assert.equal(ok('datetime', '2026-11-22T10:00:00.123+03:00'), '2026-11-22T07:00:00.123Z');
  assert.equal(ok('datetime', '2026-11-22'), '2026-11-22T00:00:00.000Z');
  rejects('datetime', ['2026-11-22T10:00:00', 'tomorrow', 1795849200000]);
});

test('select: one option value', () => {
  assert.equal(ok('select', 'gold'), 'gold');
  rejects('select', ['Gold', 'platinum', '', ['gold'], 1]);
  assert.throws(() => normalizePropertyValue({ id: 's', type: 'select', options: null }, 'gold'), DomainError);
  assert.throws(() => normalizePropertyValue({ id: 's', type: 'select' }, 'gold'), DomainError);
});

test('multi_select: array of distinct option values, empty allowed, order kept', () => {
  assert.deepEqual(ok('multi_select', ['silver', 'gold']), ['silver', 'gold']);
  assert.deepEqual(ok('multi_select', []), []);
  rejects('multi_select', ['gold', ['gold', 'gold'], ['gold', 'platinum'], ['gold', 1], [null], { 0: 'gold' }]);
});

test('multi_select returns a copy, not the caller array', () => {
  const input = ['gold'];
  const out = ok('multi_select', input);
  assert.notEqual(out, input);
});

test('boolean: true/false only', () => {
  assert.equal(ok('boolean', true), true);
  assert.equal(ok('boolean', false), false);
  rejects('boolean', ['true', 'false', 0, 1, null]);
});

test('unknown property type in a definition is refused', () => {
  assert.throws(() => normalizePropertyValue({ id: 'x', type: 'color' as PropertyType }, 'red'), DomainError);
});

const defs = new Map<string, PropertyDef>(
  [def('text', 'p_text'), def('phone', 'p_phone'), def('number', 'p_num'), def('multi_select', 'p_tags'), def('datetime', 'p_when')].map((d) => [d.id, d]),
);

test('normalizeCustomProperties normalizes values and keeps null as "clear"', () => {
  const r = normalizeCustomProperties({ p_text: 'hi', p_phone: '11 98765-4321', p_num: 3, p_tags: ['gold'], p_when: '2026-11-22T10:00:00Z' }, defs);
  assert.deepEqual(r.issues, []);
  assert.deepEqual(r.values, {
    p_text: 'hi',
    p_phone: '+5511987654321',
    p_num: 3,
    p_tags: ['gold'],
    p_when: '2026-11-22T10:00:00.000Z',
  });
  assert.deepEqual(normalizeCustomProperties({ p_text: null }, defs), { values: { p_text: null }, issues: [] });
  assert.deepEqual(normalizeCustomProperties({}, defs), { values: {}, issues: [] });
});

test('normalizeCustomProperties reports every issue with its field path', () => {
  const r = normalizeCustomProperties({ p_text: 'ok', p_num: '3', nope: 1, p_phone: 'abc', p_tags: ['x'] }, defs);
  assert.deepEqual(r.values, { p_text: 'ok' });
  assert.deepEqual(r.issues, [
    { field: 'customProperties.p_num', message: 'must be a number' },
    { field: 'customProperties.nope', message: 'unknown property for this object type' },
    { field: 'customProperties.p_phone', message: 'must be a valid phone number' },
    { field: 'customProperties.p_tags', message: 'must contain only property option values' },
  ]);
});

test('normalizeCustomProperties treats inherited names as unknown ids', () => {
  const input = JSON.parse('{"__proto__": {"polluted": 1}, "constructor": 1, "toString": "x"}') as Record<string, unknown>;
  const r = normalizeCustomProperties(input, defs);
  assert.deepEqual(
    r.issues.map((i) => i.field),
    ['customProperties.__proto__', 'customProperties.constructor', 'customProperties.toString'],
  );
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('normalizeCustomProperties rejects a non-object input', () => {
  for (const bad of [null, [], 'x', 1]) {
    const r = normalizeCustomProperties(bad as unknown as Record<string, unknown>, defs);
    assert.deepEqual(r.issues, [{ field: 'customProperties', message: 'must be an object' }]);
  }
});

test('mergeCustomProperties merges key by key; null removes the key', () => {
  const existing = { a: 1, b: 'x', c: ['gold'] };
  const merged = mergeCustomProperties(existing, { b: 'y', c: null, d: true });
  assert.deepEqual(merged, { a: 1, b: 'y', d: true });
  assert.deepEqual(existing, { a: 1, b: 'x', c: ['gold'] }, 'existing is not mutated');
  assert.deepEqual(mergeCustomProperties({ a: 1 }, {}), { a: 1 });
  assert.deepEqual(mergeCustomProperties({ a: 1 }, { missing: null }), { a: 1 });
});

test('mergeCustomProperties onto {} drops nulls (create) and never keeps stored nulls', () => {
  assert.deepEqual(mergeCustomProperties({}, { a: null, b: 2 }), { b: 2 });
  assert.deepEqual(mergeCustomProperties({ a: null, b: 1 }, {}), { b: 1 });
});

test('mergeCustomProperties stores a "__proto__" key as data, not as the prototype', () => {
  const patch = JSON.parse('{"__proto__": 5}') as Record<string, unknown>;
  const merged = mergeCustomProperties({}, patch);
  assert.equal(Object.getPrototypeOf(merged), Object.prototype);
  assert.deepEqual(Object.keys(merged), ['__proto__']);
});
