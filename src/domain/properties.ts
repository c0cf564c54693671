import { normalizeIsoDate, normalizeIsoDateTime } from './dates.js';
import { normalizeEmail } from './email.js';
import { DomainError } from './errors.js';
import { normalizePhone } from './phone.js';
import { normalizeWebsite } from './web.js';

export type PropertyType = 'text' | 'textarea' | 'email' | 'phone' | 'url' | 'number' | 'date' | 'datetime' | 'select' | 'multi_select' | 'boolean';

export interface PropertyDef {
  id: string;
  type: PropertyType;
  options?: { value: string; label: string }[] | null;
}

export interface PropertyIssue {
  field: string;
  message: string;
}

export const TEXT_MAX_CHARS = 1000;
export const TEXTAREA_MAX_CHARS = 65535;

function string(value: unknown): string {
  if (typeof value !== 'string') throw new DomainError('must be a string');
  return value;
}

// Lengths count code points, so an emoji is one character as the user sees it.
function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// Plain assignment of a JSON key named `__proto__` would replace the object's
// prototype instead of storing a value; define the property explicitly.
function put(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function optionValues(def: PropertyDef): Set<string> {
  return new Set((def.options ?? []).map((o) => o.value));
}

/**
 * Checks one value against its property type (spec 2.8) and returns it
 * normalized: e-mails lower-cased, phones in E.164, datetimes in UTC with ms.
 * Types are never coerced: `"42"` is not a number, `"true"` is not a boolean.
 * `null` is not handled here (it means "clear"; see normalizeCustomProperties).
 */
export function normalizePropertyValue(def: PropertyDef, value: unknown): unknown {
  switch (def.type) {
    case 'text': {
      const s = string(value);
      if (/[\r\n]/.test(s)) throw new DomainError('must be a single line of text');
      if (charCount(s) > TEXT_MAX_CHARS) throw new DomainError(`must be at most ${TEXT_MAX_CHARS} characters`);
      return s;
    }
    case 'textarea': {
      const s = string(value);
      if (charCount(s) > TEXTAREA_MAX_CHARS) throw new DomainError(`must be at most ${TEXTAREA_MAX_CHARS} characters`);
      return s;
    }
    case 'email':
      return normalizeEmail(string(value));
    case 'phone':
      return normalizePhone(string(value));
    case 'url':
      return normalizeWebsite(string(value));
    case 'number':
      if (typeof value !== 'number') throw new DomainError('must be a number');
      // A form's urlencoded `1e309` reads as Infinity (JSON bodies never reach here with one: B.2).
      if (!Number.isFinite(value)) throw new DomainError('must be a finite number');
      return value === 0 ? 0 : value; // folds -0
    case 'date':
      return normalizeIsoDate(string(value));
    case 'datetime':
      return normalizeIsoDateTime(string(value));
    case 'select': {
      const s = string(value);
      if (!optionValues(def).has(s)) throw new DomainError('must be one of the property options');
      return s;
    }
    case 'multi_select': {
      if (!Array.isArray(value)) throw new DomainError('must be an array of option values');
      const allowed = optionValues(def);
      const seen = new Set<string>();
      for (const v of value) {
        if (typeof v !== 'string' || !allowed.has(v)) throw new DomainError('must contain only property option values');
        if (seen.has(v)) throw new DomainError('must not repeat an option value');
        seen.add(v);
      }
      return [...value];
    }
    case 'boolean':
      if (typeof value !== 'boolean') throw new DomainError('must be true or false');
      return value;
    default:
      // A definition with a type this code does not know: refuse rather than store unchecked data.
      throw new DomainError('has an unsupported property type');
  }
}

/**
 * Validates a `customProperties` input object against the definitions of the
 * record's object type. All problems are collected (not just the first) with
 * field `customProperties.<id>`. `null` values are kept as `null` ("clear");
 * mergeCustomProperties drops them, also when creating (merge onto `{}`).
 */
export function normalizeCustomProperties(
  input: Record<string, unknown>,
  defs: Map<string, PropertyDef>,
): { values: Record<string, unknown>; issues: PropertyIssue[] } {
  const values: Record<string, unknown> = {};
  const issues: PropertyIssue[] = [];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { values, issues: [{ field: 'customProperties', message: 'must be an object' }] };
  }
  for (const [id, value] of Object.entries(input)) {
    const field = `customProperties.${id}`;
    const def = defs.get(id);
    if (!def) {
      issues.push({ field, message: 'unknown property for this object type' });
      continue;
    }
    if (value === null) {
      put(values, id, null);
      continue;
    }
    try {
      put(values, id, normalizePropertyValue(def, value));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      issues.push({ field, message: err.message });
    }
  }
  return { values, issues };
}

/**
 * PATCH semantics: key by key, `null` removes the key, other values replace.
 * Returns a new object; nulls already in `existing` are dropped too, so a
 * cleared key never shows up in reads.
 */
export function mergeCustomProperties(existing: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const [id, value] of Object.entries(existing ?? {})) {
    if (value !== null && value !== undefined) put(merged, id, value);
  }
  for (const [id, value] of Object.entries(patch ?? {})) {
    if (value === null) delete merged[id];
    else if (value !== undefined) put(merged, id, value);
  }
  return merged;
}
