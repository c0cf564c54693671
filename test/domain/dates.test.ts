import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isIsoDate, normalizeIsoDate, normalizeIsoDateTime } from '../../src/domain/dates.js';
import { DomainError } from '../../src/domain/errors.js';

test('isIsoDate accepts real calendar days in strict YYYY-MM-DD', () => {
  for (const s of ['2026-11-22', '2024-02-29', '2000-02-29', '1999-12-31', '0001-01-01', '9999-12-31', '2026-04-30']) {
    assert.equal(isIsoDate(s), true, s);
  }
});

test('isIsoDate rejects impossible days and other formats', () => {
  for (const s of [
    '2026-02-30',
    '2026-02-29',
    '1900-02-29',
    '2026-04-31',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
    '0000-01-01',
    '2026-1-5',
    '26-11-22',
    '2026/11/22',
    '22-11-2026',
    '2026-11-22T00:00:00Z',
    ' 2026-11-22',
    '2026-11-22\n',
    '',
    '+002026-11-22',
    '２０２６-11-22',
  ]) {
    assert.equal(isIsoDate(s), false, s);
  }
  assert.equal(isIsoDate(20261122 as unknown as string), false);
});

test('normalizeIsoDate returns the date or throws DomainError', () => {
  assert.equal(normalizeIsoDate('2026-11-22'), '2026-11-22');
  assert.throws(() => normalizeIsoDate('2026-02-30'), DomainError);
});

test('normalizeIsoDateTime converts to UTC with milliseconds', () => {
  const cases: [string, string][] = [
    ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T10:00:00.123+03:00', '2026-11-22T07:00:00.123Z'],
    ['2026-11-22T10:00:00-03:00', '2026-11-22T13:00:00.000Z'],
    ['2026-11-22T10:00Z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T10:00:00.5Z', '2026-11-22T10:00:00.500Z'],
    ['2026-11-22T10:00:00.123456789Z', '2026-11-22T10:00:00.123Z'], // truncated, not rounded
    ['2026-11-22T10:00:00.999999Z', '2026-11-22T10:00:00.999Z'],
    ['2026-11-22T23:30:00-01:00', '2026-11-23T00:30:00.000Z'], // crosses midnight
    ['2026-01-01T01:00:00+05:30', '2025-12-31T19:30:00.000Z'], // crosses the year
    ['2024-02-29T12:00:00+00:00', '2024-02-29T12:00:00.000Z'],
    ['2026-11-22T10:00:00-00:00', '2026-11-22T10:00:00.000Z'],
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'], // no 1900+ mapping of 2-digit years
    ['2026-11-22', '2026-11-22T00:00:00.000Z'], // bare date = midnight UTC
  ];
  for (const [input, expected] of cases) assert.equal(normalizeIsoDateTime(input), expected, input);
});

test('normalizeIsoDateTime rejects everything else', () => {
  for (const s of [
    '',
    'yesterday',
    '2026-11-22T10:00:00', // no zone
    '2026-11-22 10:00:00Z',
    '2026-11-22t10:00:00z',
    '2026-11-22T10:00:00+0300',
    '2026-11-22T10:00:00+03',
    '2026-11-22T10Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T10:60:00Z',
    '2026-11-22T10:00:60Z',
    '2026-11-22T10:00:00.Z',
    '2026-11-22T10:00:00.1234567890Z',
    '2026-11-22T10:00:00+24:00',
    '2026-11-22T10:00:00+03:60',
    '2026-02-30T10:00:00Z',
    '2026-02-30',
    '2026-11-22T10:00:00ZZ',
    ' 2026-11-22T10:00:00Z',
    'Sun, 22 Nov 2026 10:00:00 GMT',
    '1795849200000',
    '9999-12-31T23:00:00-02:00', // lands in year 10000
    '0001-01-01T00:00:00+01:00', // lands in year 0
  ]) {
    assert.throws(() => normalizeIsoDateTime(s), DomainError, s);
  }
  assert.throws(() => normalizeIsoDateTime(Date.now() as unknown as string), DomainError);
});
