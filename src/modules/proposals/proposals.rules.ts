import { normalizeEmail } from '../../domain/email.js';
import { DomainError } from '../../domain/errors.js';
import { fromCents, itemTotal, proposalTotals, toCents } from '../../domain/money.js';
import { errors, fieldRule, type FieldChecks } from '../../errors.js';
import { newId } from '../../util/ids.js';
import { PROPOSAL_STATUSES, type ProposalItemInputT, type ProposalStatus } from './proposals.schema.js';

// The proposal rules that need no database: status moves, numbering, items and money (CONTRACT B.8).

/**
 * CONTRACT B.8 status moves (spec 3.2 leaves them open): draft→sent, sent→accepted|declined|expired,
 * declined|expired→draft; accepted is final.
 */
export const STATUS_MOVES: Record<ProposalStatus, readonly ProposalStatus[]> = {
  draft: ['sent'],
  sent: ['accepted', 'declined', 'expired'],
  accepted: [],
  declined: ['draft'],
  expired: ['draft'],
};

export const DEFAULT_UNIT = 'Unidade';

export function isStatus(s: string): s is ProposalStatus {
  return (PROPOSAL_STATUSES as readonly string[]).includes(s);
}

export function checkStatusValue(status: string): ProposalStatus {
  if (!isStatus(status)) throw errors.invalidStatus(`status "${status}" is not one of ${PROPOSAL_STATUSES.join(', ')}`);
  return status;
}

/** `PR-<year>-<seq>`, the sequence zero-padded to 4 digits (wider past 9999). */
export function formatNumber(year: number, seq: number): string {
  return `PR-${year}-${String(seq).padStart(4, '0')}`;
}

export function cleanSubject(subject: string): string {
  const s = subject.trim();
  if (!s) throw errors.field('subject', 'must not be blank');
  return s;
}

export interface PreparedItem {
  id: string;
  position: number;
  name: string;
  description: string | null;
  qty: number;
  unit: string;
  rate: number;
  discount_pct: number;
  tax_pct: number;
  total_cents: number;
}

/**
 * Applies item defaults (spec 2.7) and computes each total exactly (money.ts); every invalid item is
 * recorded in `checks` as `items[i].<field>`.
 */
export function prepareItems(input: ProposalItemInputT[], checks: FieldChecks): PreparedItem[] {
  return input.map((it, i) => checks.check(`items[${i}]`, () => prepareItem(it, i)));
}

function prepareItem(it: ProposalItemInputT, i: number): PreparedItem {
  const name = it.name.trim();
  if (!name) throw errors.field(`items[${i}].name`, 'must not be blank');
  const unit = it.unit === undefined ? DEFAULT_UNIT : it.unit.trim();
  if (!unit) throw errors.field(`items[${i}].unit`, 'must not be blank');
  const values = { qty: it.qty ?? 1, rate: it.rate ?? 0, discountPct: it.discountPct ?? 0, taxPct: it.taxPct ?? 0 };
  let total: number;
  try {
    total = itemTotal(values);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    // money.ts names the offending input first in its message ("rate must have at most 2 decimal places").
    const key = (['qty', 'rate', 'discountPct', 'taxPct'] as const).find((k) => err.message.startsWith(k)) ?? 'rate';
    throw errors.field(`items[${i}].${key}`, err.message.slice(key.length).trim() || err.message);
  }
  const totalCents = fieldRule(`items[${i}]`, () => {
    try {
      return toCents(total);
    } catch {
      throw new DomainError('the item total is too large');
    }
  });
  return {
    id: newId('pit'),
    position: i,
    name,
    description: it.description ?? null,
    qty: values.qty,
    unit,
    rate: values.rate,
    discount_pct: values.discountPct,
    tax_pct: values.taxPct,
    total_cents: totalCents,
  };
}

/** subtotal and total (B.8) in cents, through money.ts's `proposalTotals` (inputs already validated). */
export function computeTotals(items: { qty: number; rate: number; discount_pct: number; tax_pct: number }[], discountCents: number, adjustmentCents: number) {
  const t = proposalTotals(
    items.map((i) => ({ qty: i.qty, rate: i.rate, discountPct: i.discount_pct, taxPct: i.tax_pct })),
    fromCents(discountCents),
    fromCents(adjustmentCents),
  );
  const cents = (field: string, n: number) =>
    fieldRule(field, () => {
      try {
        return toCents(n);
      } catch {
        throw new DomainError('the resulting amount is too large');
      }
    });
  return { subtotal_cents: cents('items', t.subtotal), total_cents: cents('total', t.total) };
}

/** A money input (≤ 2 decimals, within range) in cents; 400 naming the field. */
export function money(field: string, n: number, opts: { negative: boolean }): number {
  const cents = fieldRule(field, () => {
    try {
      return toCents(n);
    } catch (err) {
      throw new DomainError((err as Error).message.replace(/^amount /, ''));
    }
  });
  if (!opts.negative && cents < 0) throw errors.field(field, 'must not be negative');
  return cents;
}

export function cleanEmail(v: string | null | undefined): string | null | undefined {
  if (v === undefined || v === null) return v;
  return fieldRule('recipientEmail', () => normalizeEmail(v));
}
