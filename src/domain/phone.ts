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
  const invalid = new DomainError('must be a valid phone number');
  // Longer inputs are never phone numbers; also bounds the parser's work.
  if (input.length === 0 || input.length > 64) throw invalid;
  const parsed = parsePhoneNumberFromString(input, defaultRegion as CountryCode);
  if (!parsed || !parsed.isValid()) throw invalid;
  if (parsed.ext) throw new DomainError('must be a phone number without extension');
  return parsed.number;
}

/** Digits only (for substring search on phones): `+55 (11) 98765-4321` → `5511987654321`. */
export function phoneDigits(s: string): string {
  return s.replace(/\D/g, '');
}
