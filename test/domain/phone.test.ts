import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../src/domain/errors.js';
import { normalizePhone, phoneDigits } from '../../src/domain/phone.js';

test('normalizePhone reads numbers without + as Brazilian', () => {
  assert.equal(normalizePhone('(11) 98765-4321'), '+5511987654321');
  assert.equal(normalizePhone('11987654321'), '+5511987654321');
  assert.equal(normalizePhone('11 3456-7890'), '+551134567890'); // landline
  assert.equal(normalizePhone('021 11 98765 4321'), '+5511987654321'); // carrier prefix
  assert.equal(normalizePhone('55 11 98765-4321'), '+5511987654321'); // country code without +
});

test('normalizePhone keeps the country of numbers with +', () => {
  assert.equal(normalizePhone('+55 11 98765-4321'), '+5511987654321');
  assert.equal(normalizePhone('+1 (202) 555-0123'), '+12025550123');
  assert.equal(normalizePhone('+44 20 7946 0958'), '+442079460958');
  assert.equal(normalizePhone(' +447911123456 '), '+447911123456');
});

test('normalizePhone honours another default region', () => {
  assert.equal(normalizePhone('(202) 555-0123', 'US'), '+12025550123');
  assert.equal(normalizePhone('020 7946 0958', 'GB'), '+442079460958');
});

test('different spellings of one number normalize to the same E.164 (uniqueness)', () => {
  const forms = ['+55 (11) 98765-4321', '11 98765 4321', '+5511987654321', '(11)98765-4321'];
  assert.deepEqual(new Set(forms.map((f) => normalizePhone(f))), new Set(['+5511987654321']));
});

test('normalizePhone rejects unparseable or invalid numbers', () => {
  for (const s of [
    '',
    '   ',
    'abc',
    '123',
    '+',
    '+1 555 555 5555', // not a valid US number
    '11 8765-4321', // BR mobile missing the leading 9
    '+551198765432', // same, with +
    '+55 11 1111-1111',
    '9'.repeat(30),
    `+55 11 98765-4321 ${'x'.repeat(80)}`,
  ]) {
    assert.throws(() => normalizePhone(s), DomainError, s);
  }
});

test('normalizePhone rejects extensions instead of silently dropping them', () => {
  assert.throws(() => normalizePhone('+55 11 3456-7890 ext. 12'), /extension/);
});

test('normalizePhone rejects non-strings', () => {
  assert.throws(() => normalizePhone(11987654321 as unknown as string), DomainError);
});

test('phoneDigits keeps only digits', () => {
  assert.equal(phoneDigits('+55 (11) 98765-4321'), '5511987654321');
  assert.equal(phoneDigits('abc'), '');
});

test('phoneSearchDigits: digits only for phone-like terms (digits, + ( ) - . and spaces, ≥ 3 digits) — C.5', async () => {
  const { phoneSearchDigits } = await import('../../src/domain/phone.js');
  assert.equal(phoneSearchDigits('(11) 9'), '119');
  assert.equal(phoneSearchDigits('+55 (11) 98765-4321'), '5511987654321');
  assert.equal(phoneSearchDigits('912.345'), '912345');
  assert.equal(phoneSearchDigits('98765'), '98765');
  assert.equal(phoneSearchDigits('sort1a2b3'), undefined, 'letters: not a phone');
  assert.equal(phoneSearchDigits('ana123'), undefined);
  assert.equal(phoneSearchDigits('123#'), undefined);
  assert.equal(phoneSearchDigits('1/2/3'), undefined);
  assert.equal(phoneSearchDigits('(11)'), undefined, 'fewer than 3 digits');
  assert.equal(phoneSearchDigits('+-()'), undefined);
  assert.equal(phoneSearchDigits(''), undefined);
});
