// The `max` metadata carries per-type number patterns, so isValid() rejects
// numbers that merely have a plausible length (e.g. a Brazilian mobile missing
// its leading 9). The default `min` bundle would accept those.
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { DomainError } from './errors.js';

/**
 * Normalizes a phone number to E.164 (`+5511987654321`). Numbers without a
 * leading `+` are read in `defaultRegion` (Brazil by default, CONTRACT B.3).
 * Extensions are rejected: E.164 cannot hold them and silently dropping one
 * would make two different lines collide on uniqueness.
 */
export function normalizePhone(s: string, defaultRegion: string = 'BR'): string {
  if (typeof s !== 'string') throw new DomainError('must be a string');
  const input = s.trim();
  // Made only when thrown: an Error captures its stack when made, ~3 % of a create that gives a phone.
  const invalid = () => new DomainError('must be a valid phone number');
  // Longer inputs are never phone numbers; also bounds the parser's work.
  if (input.length === 0 || input.length > 64) throw invalid();
  const parsed = parsePhoneNumberFromString(input, defaultRegion as CountryCode);
  if (!parsed || !parsed.isValid()) throw invalid();
  if (parsed.ext) throw new DomainError('must be a phone number without extension');
  return parsed.number;
}

/** Digits only (for substring search on phones): `+55 (11) 98765-4321` → `5511987654321`. */
export function phoneDigits(s: string): string {
  return s.replace(/\D/g, '');
}

const PHONE_LIKE = /^[\d+().\-\s]+$/;

/**
 * The digits to look for in phones when a search term looks like a phone number: only digits,
 * `+ ( ) - .` and spaces, with at least 3 digits (CONTRACT C.5); otherwise undefined. So `(11) 9876`
 * searches 119876, while `sort1a2b3` searches no phone at all (its digits 123 are not a number typed).
 */
export function phoneSearchDigits(term: string): string | undefined {
  if (!PHONE_LIKE.test(term)) return undefined;
  const digits = phoneDigits(term);
  return digits.length >= 3 ? digits : undefined;
}
