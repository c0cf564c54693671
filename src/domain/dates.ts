import { DomainError } from './errors.js';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// Extended ISO 8601 / RFC 3339: seconds and fraction optional, `Z` or `±HH:MM` required
// (a date-time without zone would be read in the server's local time).
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

// Checked by hand: `Date` silently rolls Feb 30 over to Mar 2.
function isRealDate(year: number, month: number, day: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** Strict `YYYY-MM-DD` naming a real calendar day (years 0001–9999). */
export function isIsoDate(s: string): boolean {
  if (typeof s !== 'string') return false;
  const m = DATE.exec(s);
  return m !== null && isRealDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** Throwing variant of isIsoDate, for normalizers. Returns the input. */
export function normalizeIsoDate(s: string): string {
  if (!isIsoDate(s)) throw new DomainError('must be a date in YYYY-MM-DD format');
  return s;
}

/**
 * Accepts `YYYY-MM-DDTHH:MM[:SS[.fff…]]` with `Z` or `±HH:MM`, or a bare
 * `YYYY-MM-DD` (midnight UTC), and returns UTC with milliseconds
 * (`2026-11-22T07:00:00.000Z`, CONTRACT B.3). Fractions beyond milliseconds are
 * truncated. The epoch is computed from the parsed fields rather than
 * `Date.parse`, whose accepted formats are implementation-defined.
 */
export function normalizeIsoDateTime(s: string): string {
  const invalid = new DomainError('must be an ISO 8601 date-time with time zone (e.g. 2026-11-22T10:00:00Z)');
  if (typeof s !== 'string') throw invalid;
  if (isIsoDate(s)) return `${s}T00:00:00.000Z`;
  const m = DATE_TIME.exec(s);
  if (!m) throw invalid;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (!isRealDate(year, month, day) || hour > 23 || minute > 59 || second > 59) throw invalid;
  let offsetMinutes = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[8].slice(1, 3));
    const om = Number(m[8].slice(4, 6));
    if (oh > 23 || om > 59) throw invalid;
    offsetMinutes = (m[8][0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute - offsetMinutes, second, ms);
  const utcYear = d.getUTCFullYear();
  // The offset can push the instant outside 0001–9999, which toISOString would render as ±YYYYYY.
  if (utcYear < 1 || utcYear > 9999) throw invalid;
  return d.toISOString();
}
