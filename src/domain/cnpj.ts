import { DomainError } from './errors.js';

// Alphanumeric CNPJ (Receita Federal, issued from July 2026): 12 base chars in
// [0-9A-Z] plus 2 numeric check digits. Purely numeric CNPJs are a special case.
const SHAPE = /^[0-9A-Z]{12}[0-9]{2}$/;
const W1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const W2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];

/** Mod-11 check digit; each char is worth charCode − 48 ('0'..'9' → 0..9, 'A' → 17, …). */
function checkDigit(base: string, weights: number[]): number {
  let sum = 0;
  for (let i = 0; i < base.length; i++) sum += (base.charCodeAt(i) - 48) * weights[i];
  const r = sum % 11;
  return r < 2 ? 0 : 11 - r;
}

/**
 * Strips `.`, `/`, `-` and spaces, upper-cases letters and verifies both check
 * digits. Returns the bare 14 chars (digits only for a numeric CNPJ).
 */
export function normalizeCnpj(s: string): string {
  if (typeof s !== 'string') throw new DomainError('must be a string');
  const cnpj = s.replace(/[.\/\-\s]/g, '').toUpperCase();
  const invalid = new DomainError('must be a valid CNPJ');
  if (!SHAPE.test(cnpj)) throw invalid;
  // 00000000000000, 11111111111111, … satisfy the check digits but are not real.
  if (/^(\d)\1{13}$/.test(cnpj)) throw invalid;
  const d1 = checkDigit(cnpj.slice(0, 12), W1);
  const d2 = checkDigit(cnpj.slice(0, 12) + d1, W2);
  if (cnpj.slice(12) !== `${d1}${d2}`) throw invalid;
  return cnpj;
}

/** The two check digits of a 12-character CNPJ base (used to make valid CNPJs for sample data). */
export function cnpjCheckDigits(base12: string): string {
  const d1 = checkDigit(base12, W1);
  return `${d1}${checkDigit(base12 + d1, W2)}`;
}
