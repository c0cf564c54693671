import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../src/domain/errors.js';
import Big from 'big.js';
import { fromCents, isIsoCurrency, itemTotal, MAX_AMOUNT, proposalTotals, toCents } from '../../src/domain/money.js';
import { ISO_4217_CODES } from '../../src/domain/currencies.js';

const item = (qty: number, rate: number, discountPct = 0, taxPct = 0) => ({ qty, rate, discountPct, taxPct });

test('toCents converts amounts with up to 2 decimals exactly', () => {
  assert.equal(toCents(19.99), 1999);
  assert.equal(toCents(0.3), 30);
  assert.equal(toCents(1.1), 110);
  assert.equal(toCents(4.35), 435); // 4.35 * 100 is 434.99999999999994 as a float
  assert.equal(toCents(0), 0);
  assert.ok(Object.is(toCents(-0), 0));
  assert.equal(toCents(-12.5), -1250);
  assert.equal(toCents(MAX_AMOUNT), 1e15);
  assert.equal(toCents(-9999999999999.99), -999999999999999);
});

test('toCents rejects more than 2 decimals, float drift, non-finite and huge values', () => {
  for (const n of [0.1 + 0.2, 1.005, 0.001, 19.999, 1e-7, NaN, Infinity, -Infinity, MAX_AMOUNT + 1, -1e14]) {
    assert.throws(() => toCents(n), DomainError, String(n));
  }
  assert.throws(() => toCents('1.5' as unknown as number), DomainError);
  assert.throws(() => toCents(1.234), { message: 'amount must have at most 2 decimal places' });
});

test('fromCents gives back the decimal amount', () => {
  assert.equal(fromCents(30), 0.3);
  assert.equal(fromCents(1999), 19.99);
  assert.equal(fromCents(-1250), -12.5);
  assert.equal(fromCents(0), 0);
  assert.equal(fromCents(1e15), 1e13);
  for (const n of [0.3, 19.99, 4.35, 1234567.89, -0.01]) assert.equal(fromCents(toCents(n)), n);
  for (const c of [1.5, NaN, 2 ** 53]) assert.throws(() => fromCents(c), DomainError, String(c));
  assert.ok(Object.is(fromCents(-0), 0), 'no -0');
});

test('fromCents is the double closest to the exact decimal, for any safe integer of cents', () => {
  const exact = (c: number) => Number(new Big(c).div(100).toString());
  // Edges, every cent of a few units around zero, and random values across the whole safe range.
  const cents = [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e15, -1e15, 2 ** 52 + 1, 99, 101, 10_01, 123_456_789_01];
  for (let c = -2_000; c <= 2_000; c++) cents.push(c);
  let seed = 7;
  const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (let i = 0; i < 20_000; i++) cents.push(Math.round((rand() - 0.5) * 2 * Number.MAX_SAFE_INTEGER * rand() ** 4));
  for (const c of cents) assert.equal(fromCents(c), exact(c) === 0 ? 0 : exact(c), String(c));
});

test('itemTotal: qty × rate, less discount %, plus tax % of the discounted amount, half-up', () => {
  // 3 × 19.99 = 59.97; −10% = 53.973; +5% = 56.67165 → 56.67
  assert.equal(itemTotal(item(3, 19.99, 10, 5)), 56.67);
  assert.equal(itemTotal(item(1, 100)), 100);
  assert.equal(itemTotal(item(2, 0.1)), 0.2);
  assert.equal(itemTotal(item(0, 99.99, 0, 10)), 0);
  assert.equal(itemTotal(item(5, 10, 100, 20)), 0);
  assert.equal(itemTotal(item(1.5, 10)), 15); // fractional quantities (hours, kg)
  assert.equal(itemTotal(item(1, 10, 12.5)), 8.75);
});

test('itemTotal rounds half-up from the exact decimal, not the float', () => {
  // 1.005 as a float is 1.00499999999999989…, which would round down.
  assert.equal(itemTotal(item(0.5, 2.01)), 1.01); // exactly 1.005
  assert.equal(itemTotal(item(1, 1, 0, 0.5)), 1.01); // 1 × 1.005 = 1.005
  assert.equal(itemTotal(item(1, 0.01, 50)), 0.01); // 0.005 → 0.01
  assert.equal(itemTotal(item(1, 0.01, 60)), 0); // 0.004 → 0
  assert.equal(itemTotal(item(3, 33.33, 0, 0.15)), 100.14); // 99.99 × 1.0015 = 100.139985
});

test('itemTotal validates its numbers', () => {
  const bad = [
    item(-1, 10),
    item(1, -10),
    item(1, 10.001),
    item(1, 10, -1),
    item(1, 10, 101),
    item(1, 10, 0, -5),
    item(NaN, 1),
    item(1, Infinity),
    { qty: 1, rate: 1, discountPct: '5', taxPct: 0 } as unknown as ReturnType<typeof item>,
  ];
  for (const b of bad) assert.throws(() => itemTotal(b), DomainError, JSON.stringify(b));
  assert.throws(() => itemTotal(item(1, 10, 150)), { message: 'discountPct must be between 0 and 100' });
});

test('proposalTotals sums exactly in decimal', () => {
  const r = proposalTotals([item(1, 0.1), item(1, 0.2)], 0, 0);
  assert.deepEqual(r, { items: [0.1, 0.2], subtotal: 0.3, total: 0.3 });
  assert.notEqual(0.1 + 0.2, 0.3); // the float trap the function avoids
});

test('proposalTotals applies discount and adjustment to the sum of rounded item totals', () => {
  const r = proposalTotals([item(3, 19.99, 10, 5), item(2, 50), item(0.5, 2.01)], 10.5, -0.17);
  assert.deepEqual(r.items, [56.67, 100, 1.01]);
  assert.equal(r.subtotal, 157.68);
  assert.equal(r.total, 147.01); // 157.68 − 10.5 − 0.17
  assert.deepEqual(proposalTotals([], 0, 0), { items: [], subtotal: 0, total: 0 });
  assert.equal(proposalTotals([item(1, 100)], 0, 25.25).total, 125.25);
  assert.equal(proposalTotals([item(1, 10)], 15, 0).total, -5); // not clamped: the figures stay honest
});

test('proposalTotals validates discount and adjustment', () => {
  assert.throws(() => proposalTotals([], -1, 0), { message: 'discount must not be negative' });
  assert.throws(() => proposalTotals([], 0.001, 0), DomainError);
  assert.throws(() => proposalTotals([], 0, NaN), DomainError);
  assert.throws(() => proposalTotals([item(1, 1, 200)], 0, 0), DomainError);
});

test('isIsoCurrency accepts active ISO 4217 codes', () => {
  for (const c of [
    'BRL',
    'USD',
    'EUR',
    'GBP',
    'JPY',
    'ARS',
    'CLP',
    'MXN',
    'CHF',
    'CNY',
    'UYU',
    'COP',
    'PEN',
    'XCG',
    'ZWG',
    'SLE',
    'VES',
    'CLF',
    'XAU',
    'XDR',
  ]) {
    assert.ok(isIsoCurrency(c), c);
  }
});

test('isIsoCurrency rejects withdrawn, placeholder, malformed and lower-case codes', () => {
  for (const c of ['', 'brl', 'Usd', 'BR', 'BRLL', 'XYZ', 'ABC', 'DEM', 'FRF', 'HRK', 'CUC', 'ZWL', 'VEF', 'XXX', 'XTS', ' BRL']) {
    assert.equal(isIsoCurrency(c), false, c);
  }
  assert.equal(isIsoCurrency(undefined as unknown as string), false);
});

test('embedded currency list is well-formed and covers every code ICU knows except withdrawn ones', () => {
  for (const c of ISO_4217_CODES) assert.match(c, /^[A-Z]{3}$/);
  // ICU (Intl) lags ISO: these are withdrawn but may still be listed by Node.
  const knownWithdrawn = new Set(['HRK', 'CUC', 'ZWL', 'SLL']);
  const missing = Intl.supportedValuesOf('currency').filter((c) => !ISO_4217_CODES.has(c) && !knownWithdrawn.has(c));
  assert.deepEqual(missing, [], 'a currency known to ICU is missing from ISO_4217_CODES');
});
