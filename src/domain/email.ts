import { DomainError } from './errors.js';
import { isValidHostname } from './hostname.js';

// RFC 5322 dot-atom local part (no quoted strings, no comments): the
// practical subset every mail provider issues. ASCII only on purpose, so
// uniqueness by lower-cased string stays meaningful.
const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/** Trims, lower-cases and validates an e-mail address (`local@domain.tld`). */
export function normalizeEmail(s: string): string {
  if (typeof s !== 'string') throw new DomainError('must be a string');
  const email = s.trim().toLowerCase();
  const at = email.lastIndexOf('@');
  const valid =
    email.length > 0 &&
    email.length <= 254 &&
    at > 0 &&
    // RFC 5321 caps the local part at 64 octets.
    at <= 64 &&
    LOCAL.test(email.slice(0, at)) &&
    isValidHostname(email.slice(at + 1));
  if (!valid) throw new DomainError('must be a valid e-mail address');
  return email;
}

/** Domain part of an e-mail, normalized (used to match a contact to a company `domain`). */
export function emailDomain(email: string): string {
  const normalized = normalizeEmail(email);
  return normalized.slice(normalized.lastIndexOf('@') + 1);
}
