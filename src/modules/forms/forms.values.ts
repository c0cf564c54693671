import { normalizeEmail } from '../../domain/email.js';
import { DomainError } from '../../domain/errors.js';
import { normalizePhone } from '../../domain/phone.js';
import { normalizePropertyValue } from '../../domain/properties.js';
import type { FieldIssue } from '../../errors.js';
import { ContactCreate } from '../contacts/contacts.schema.js';
import type { StoredField } from './forms.schema.js';

/**
 * Checking a submission's values against its form's fields (CONTRACT A.4). Pure: no database.
 *
 * - `json` input keeps its types (B.2: never coerced); `form` input (urlencoded, from a browser) is
 *   all text and is converted per field type first.
 * - Absent, `null`, blank text and an empty multi_select are "no value": an error for a required
 *   field, left out of `values` otherwise. A required boolean must be true (a consent box).
 * - Unknown field names are errors, so a typo in an integration never drops data silently.
 */
export type Source = 'json' | 'form';

export interface CheckedValues {
  values: Record<string, unknown>;
  issues: FieldIssue[];
}

// A value feeding a contact name must fit the contact's own limit (it would be a 400 on the contact).
const NAME_MAX = ContactCreate.properties.firstName.maxLength ?? 200;

const TRUE = new Set(['on', 'true', '1']);
const FALSE = new Set(['off', 'false', '0']);
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
// What <input type="datetime-local"> sends: a wall-clock time without zone.
const LOCAL_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/;

function put(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const patternCache = new Map<string, RegExp | null>();
/** Anchored like the HTML `pattern` attribute, so browser and server agree. */
function compiledPattern(pattern: string): RegExp | null {
  let re = patternCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(`^(?:${pattern})$`, 'u');
    } catch {
      re = null; // setup refuses invalid patterns; a stored one that fails to compile is ignored
    }
    if (patternCache.size > 1000) patternCache.clear();
    patternCache.set(pattern, re);
  }
  return re;
}

/** urlencoded text → the field's JSON type. Leaves what it cannot convert as is, for the type check to reject. */
function fromFormText(field: StoredField, raw: unknown): unknown {
  if (raw === undefined) return field.type === 'boolean' ? false : undefined; // an unchecked box sends nothing
  if (field.type === 'multi_select') {
    const list = Array.isArray(raw) ? raw : [raw];
    return list.filter((v) => typeof v !== 'string' || v.trim() !== '');
  }
  if (Array.isArray(raw) || typeof raw !== 'string') return raw;
  const text = raw.trim();
  switch (field.type) {
    case 'number':
      return DECIMAL.test(text) ? Number(text) : text;
    case 'boolean': {
      const lower = text.toLowerCase();
      return TRUE.has(lower) ? true : FALSE.has(lower) || text === '' ? false : text;
    }
    case 'datetime':
      // NOTE: A.4 gap — a browser's datetime-local carries no zone; the form page's script sends the
      // visitor's offset, and a value still without one (no JavaScript) is read as UTC.
      return LOCAL_DATETIME.test(text) ? `${text}Z` : text;
    default:
      return raw;
  }
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);
}

function checkOne(field: StoredField, value: unknown): unknown {
  if (Array.isArray(value) && field.type !== 'multi_select') throw new DomainError('must be a single value');
  const v = field.validations ?? {};
  let input = value;
  if (typeof value === 'string') {
    // Surrounding white space is never meaningful in a form entry; inner line breaks of a textarea are kept.
    input = value.trim();
    const s = input as string;
    const n = charCount(s);
    if (v.minLength !== undefined && n < v.minLength) throw new DomainError(`must be at least ${v.minLength} characters`);
    if (v.maxLength !== undefined && n > v.maxLength) throw new DomainError(`must be at most ${v.maxLength} characters`);
    if (v.pattern !== undefined) {
      const re = compiledPattern(v.pattern);
      if (re && !re.test(s)) throw new DomainError('does not have the expected format');
    }
  }
  const normalized = normalizePropertyValue({ id: field.name, type: field.type, options: field.options ?? null }, input);
  if (typeof normalized === 'number') {
    if (v.min !== undefined && normalized < v.min) throw new DomainError(`must be at least ${v.min}`);
    if (v.max !== undefined && normalized > v.max) throw new DomainError(`must be at most ${v.max}`);
  }
  if (field.type === 'boolean' && field.required && normalized !== true) throw new DomainError('must be checked');
  // A field feeding the contact's e-mail or phone must be one, whatever its declared type: the visitor can fix it.
  if (field.mapsTo === 'email' && field.type !== 'email') {
    if (typeof normalized !== 'string') throw new DomainError('must be a valid e-mail address');
    return normalizeEmail(normalized);
  }
  if ((field.mapsTo === 'firstName' || field.mapsTo === 'lastName') && typeof normalized === 'string' && charCount(normalized) > NAME_MAX) {
    throw new DomainError(`must be at most ${NAME_MAX} characters`);
  }
  if (field.mapsTo === 'phone' && field.type !== 'phone') {
    if (typeof normalized !== 'string') throw new DomainError('must be a valid phone number');
    return normalizePhone(normalized);
  }
  return normalized;
}

/** Validates and normalizes one submission; every problem is reported, named by field. */
export function checkValues(fields: StoredField[], body: unknown, source: Source): CheckedValues {
  const values: Record<string, unknown> = {};
  const issues: FieldIssue[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { values, issues: [{ field: '', message: 'the body must be an object of field values' }] };
  }
  const input = body as Record<string, unknown>;
  const known = new Set(fields.map((f) => f.name));
  for (const key of Object.keys(input)) {
    if (!known.has(key)) issues.push({ field: key, message: 'is not a field of this form' });
  }
  for (const field of fields) {
    let raw = Object.prototype.hasOwnProperty.call(input, field.name) ? input[field.name] : undefined;
    if (source === 'form') raw = fromFormText(field, raw);
    if (isEmpty(raw) || (field.type === 'boolean' && field.required && raw === false && source === 'form')) {
      if (field.required) issues.push({ field: field.name, message: 'is required' });
      continue;
    }
    try {
      put(values, field.name, checkOne(field, raw));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      issues.push({ field: field.name, message: err.message });
    }
  }
  return { values, issues };
}
