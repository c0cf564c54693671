import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emailDomain, normalizeEmail } from '../../src/domain/email.js';
import { DomainError } from '../../src/domain/errors.js';

test('normalizeEmail trims and lower-cases', () => {
  assert.equal(normalizeEmail('  John.Doe@Example.COM '), 'john.doe@example.com');
  assert.equal(normalizeEmail('a@b.co'), 'a@b.co');
});

test('normalizeEmail accepts common real-world shapes', () => {
  for (const e of [
    'first.last+tag@sub.domain.com.br',
    "o'brien@example.ie",
    'user_name-1@my-company.io',
    'x@xn--bcher-kva.example',
    'a@b.xn--p1ai',
    `${'a'.repeat(64)}@example.com`,
  ]) {
    assert.equal(normalizeEmail(e), e.toLowerCase(), e);
  }
});

test('normalizeEmail rejects invalid addresses with DomainError', () => {
  for (const e of [
    '',
    '   ',
    'plainaddress',
    '@example.com',
    'user@',
    'user@localhost',
    'user@example',
    'user@example.c',
    'user@example.123',
    'user@1.2.3.4',
    'us er@example.com',
    'user@exa mple.com',
    'user@@example.com',
    'a@b@example.com',
    '.user@example.com',
    'user.@example.com',
    'us..er@example.com',
    'user@-example.com',
    'user@example-.com',
    'user@exa_mple.com',
    'user@example..com',
    'user@.example.com',
    'user@example.com.',
    'josé@example.com',
    '"quoted"@example.com',
    `${'a'.repeat(65)}@example.com`,
    `a@${'b'.repeat(64)}.com`,
    `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`, // 260 chars > 254
  ]) {
    assert.throws(() => normalizeEmail(e), DomainError, e);
  }
});

test('normalizeEmail rejects non-strings', () => {
  assert.throws(() => normalizeEmail(42 as unknown as string), DomainError);
});

test('normalizeEmail error message is short and human', () => {
  assert.throws(() => normalizeEmail('nope'), { message: 'must be a valid e-mail address' });
});

test('emailDomain returns the normalized domain part', () => {
  assert.equal(emailDomain(' Ana@ACME.com.br '), 'acme.com.br');
  assert.throws(() => emailDomain('not-an-email'), DomainError);
});
