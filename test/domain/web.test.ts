import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../src/domain/errors.js';
import { normalizeDomain, normalizeWebsite } from '../../src/domain/web.js';

test('normalizeDomain strips scheme, www, port, path, query, fragment and trailing dot', () => {
  const cases: [string, string][] = [
    ['acme.com', 'acme.com'],
    ['ACME.COM', 'acme.com'],
    ['  acme.com.br  ', 'acme.com.br'],
    ['https://www.acme.com/about?x=1#top', 'acme.com'],
    ['http://acme.com:8080', 'acme.com'],
    ['www.acme.com', 'acme.com'],
    ['WWW.Acme.Com.', 'acme.com'],
    ['//acme.com/path', 'acme.com'],
    ['acme.com/contact', 'acme.com'],
    ['sub.acme.co.uk', 'sub.acme.co.uk'],
    ['my-company.io', 'my-company.io'],
    ['www.com', 'www.com'], // stripping www. would leave a bare TLD
    ['x.xn--p1ai', 'x.xn--p1ai'],
  ];
  for (const [input, expected] of cases) assert.equal(normalizeDomain(input), expected, input);
});

test('normalizeDomain converts IDN hosts to punycode', () => {
  assert.equal(normalizeDomain('bücher.de'), 'xn--bcher-kva.de');
  assert.equal(normalizeDomain('https://www.Bücher.de/x'), 'xn--bcher-kva.de');
});

test('normalizeDomain rejects invalid host names', () => {
  for (const s of [
    '',
    'localhost',
    'https://',
    'acme',
    'acme.',
    '.acme.com',
    'acme..com',
    '-acme.com',
    'acme-.com',
    'ac_me.com',
    'acme.c',
    'acme.123',
    '192.168.0.1',
    '[::1]',
    'user@acme.com',
    'https://user:pw@acme.com',
    'acme com.br',
    `${'a'.repeat(64)}.com`,
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`, // > 253
  ]) {
    assert.throws(() => normalizeDomain(s), DomainError, s);
  }
});

test('normalizeWebsite accepts full http(s) URLs and returns the trimmed input', () => {
  for (const u of ['https://acme.com', 'http://www.acme.com.br/', 'https://acme.com:8443/path?q=1#frag', 'HTTPS://ACME.COM/About', 'https://bücher.de']) {
    assert.equal(normalizeWebsite(`  ${u} `), u);
  }
});

test('normalizeWebsite rejects anything that is not a full http(s) URL', () => {
  for (const u of [
    '',
    'acme.com',
    'www.acme.com',
    '//acme.com',
    'ftp://acme.com',
    'javascript:alert(1)',
    'mailto:a@acme.com',
    'http:acme.com',
    'https://',
    'https://localhost',
    'https://127.0.0.1',
    'https://acme',
    'https://user:pw@acme.com',
    'https://acme .com',
    'https://acme.com/a b',
    `https://acme.com/${'a'.repeat(2048)}`,
  ]) {
    assert.throws(() => normalizeWebsite(u), DomainError, u);
  }
});
