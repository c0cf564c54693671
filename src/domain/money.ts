import Big from 'big.js';
import { DomainError } from './errors.js';
import { ISO_4217_CODES } from './currencies.js';

/** Largest accepted absolute amount (in major units). Keeps cents far below 2^53. */
export const MAX_AMOUNT = 1e13;

/**
 * Decimal value of a JS number as written by the client. `Big(n)` reads
 * `String(n)`, the shortest round-trip form, so `0.3` is exactly 0.3 and
 * `0.1 + 0.2` is 0.30000000000000004 — never a rounded guess.
 */
function decimal(n: number, what = 'value'): Big {
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new DomainError(`${what} must be a finite number`);
  return new Big(n);
}

/** Rejects an amount with more than 2 fraction digits or beyond ±MAX_AMOUNT. */
function amount(n: number, what = 'amount'): Big {
  const d = decimal(n, what);
  if (d.abs().gt(MAX_AMOUNT)) throw new DomainError(`${what} must be at most ${MAX_AMOUNT} in absolute value`);
  if (!d.times(100).mod(1).eq(0)) throw new DomainError(`${what} must have at most 2 decimal places`);
  return d;
}

function toNumber(d: Big): number {
  return withoutNegativeZero(Number(d.toString()));
}

/** No -0 in JSON-facing values. */
function withoutNegativeZero(n: number): number {
  return n === 0 ? 0 : n;
}

/** Decimal amount → integer minor units: `19.99` → `1999`. */
export function toCents(n: number): number {
  return toNumber(amount(n).times(100));
}

/**
 * Integer minor units → decimal amount: `30` → `0.3` (the double closest to the decimal). IEEE 754 division
 * is correctly rounded and both operands are exact, so `c / 100` is that double: the same as reading the
 * exact decimal (`Big(c).div(100)`, test/domain/money.test.ts compares them), without Big's allocations
 * (~1 KB a call; a page of deals formats one value per deal).
 */
export function fromCents(c: number): number {
  if (!Number.isSafeInteger(c)) throw new DomainError('must be an integer number of cents');
  return withoutNegativeZero(c / 100);
}

export interface ProposalItemInput {
  qty: number;
  rate: number;
  discountPct: number;
  taxPct: number;
}

/**
 * CONTRACT B.8: qty × rate, less discountPct %, plus taxPct % of the discounted
 * amount, rounded half-up to 2 decimals. Only multiplications are used, so the
 * intermediate value is exact before the single final rounding.
 * Rules: qty ≥ 0, rate is a money amount ≥ 0 (≤ 2 decimals), 0 ≤ discountPct ≤ 100, taxPct ≥ 0.
 */
export function itemTotal(item: ProposalItemInput): number {
  const qty = decimal(item.qty, 'qty');
  const rate = amount(item.rate, 'rate');
  const discountPct = decimal(item.discountPct, 'discountPct');
  const taxPct = decimal(item.taxPct, 'taxPct');
  if (qty.lt(0)) throw new DomainError('qty must not be negative');
  if (rate.lt(0)) throw new DomainError('rate must not be negative');
  if (discountPct.lt(0) || discountPct.gt(100)) throw new DomainError('discountPct must be between 0 and 100');
  if (taxPct.lt(0)) throw new DomainError('taxPct must not be negative');
  const exact = qty.times(rate).times(new Big(100).minus(discountPct)).times(new Big(100).plus(taxPct)).times('0.0001');
  return toNumber(exact.round(2, Big.roundHalfUp));
}

export interface ProposalTotals {
  items: number[];
  subtotal: number;
  total: number;
}

/**
 * Item totals, subtotal = Σ item totals, total = subtotal − discount + adjustment.
 * Sums run on the already-rounded item totals, in decimal, so the numbers a
 * reader sees on the proposal always add up. `discount` ≥ 0; `adjustment` may be negative.
 */
export function proposalTotals(items: ProposalItemInput[], discount: number, adjustment: number): ProposalTotals {
  const discountD = amount(discount, 'discount');
  const adjustmentD = amount(adjustment, 'adjustment');
  if (discountD.lt(0)) throw new DomainError('discount must not be negative');
  const totals = items.map(itemTotal);
  const subtotal = totals.reduce((sum, t) => sum.plus(t), new Big(0));
  const total = subtotal.minus(discountD).plus(adjustmentD);
  return { items: totals, subtotal: toNumber(subtotal), total: toNumber(total) };
}

/** True for an active ISO 4217 alphabetic code (upper-case, exact). */
export function isIsoCurrency(code: string): boolean {
  return typeof code === 'string' && ISO_4217_CODES.has(code);
}
