/**
 * The one codec of list cursors (CONTRACT C.1): every paginated endpoint's `nextCursor` is made and read here.
 *
 * A cursor is opaque: `<base64url nonce ‖ ciphertext>.<base64url tag>`, AES-256-GCM of the position (the last
 * row's sort value and id) under a key of its own derived from the master key (`CRM_SECRET_KEY`), with the
 * cursor's binding (tenant, API key, endpoint, sort key and order, filters) as additional data. So:
 * - no sort value can be read from it: a cursor of a list sorted by e-mail carries no e-mail into the
 *   request logs, proxies or browser histories that keep URLs;
 * - any edit, or use in another context, fails authentication: 400 `invalid_cursor`.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac } from 'node:crypto';
import type { Config } from '../config.js';
import type { Position } from '../db/pages.js';
import { errors } from '../errors.js';
import { subkey } from '../util/crypto.js';

/** A position in a list's order: the last row's sort value (null when empty) and its id. */
export type CursorPosition = Position;

/** What a cursor is bound to (its additional data): the tenant, API key, endpoint, sort key and order, and filters (filtersDigest). */
export function cursorBinding(tenantId: string, keyId: string, endpoint: string, sortKey: string, order: string, filtersHash: string): string {
  return JSON.stringify(['v1', tenantId, keyId, endpoint, sortKey, order, filtersHash]);
}

/** What a cursor's binding holds of the filters: a digest of their stable JSON (stableJson). */
export function filtersDigest(filtersJson: string): string {
  return createHash('sha256').update(filtersJson).digest('base64url');
}

/** JSON with object keys sorted and undefined values dropped: equal filters give equal text. */
export function stableJson(v: unknown): string {
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) {
    // A list of plain values (a filter's 1,000 tag ids) has no keys to sort: JSON.stringify writes it as is.
    if (v.every((x) => x === null || (typeof x !== 'object' && x !== undefined))) return JSON.stringify(v);
    return '[' + v.map(stableJson).join(',') + ']';
  }
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return '{' + entries.map(([k, x]) => JSON.stringify(k) + ':' + stableJson(x)).join(',') + '}';
}

/** A row's sort value as a cursor's position holds it (a number or a string; a date as ISO text). */
export function sortValueOf(v: unknown): string | number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  return String(v);
}

const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** The cursors' key label: changing it (a new format) turns every earlier cursor into 400 invalid_cursor. */
const KEY_LABEL = 'crm/list-cursor/aes-256-gcm/v2';
/** The longest cursor read (the service's are under 200 characters for usual values); longer, or empty, is invalid. */
const MAX_CURSOR_CHARS = 2048;

const keys = new WeakMap<Config, Buffer>();

function cursorKey(config: Config): Buffer {
  let key = keys.get(config);
  if (!key) keys.set(config, (key = subkey(config.secretKey(), KEY_LABEL)));
  return key;
}

// The nonce is synthetic (SIV): the first 96 bits of an HMAC of the binding and the position, under a key of its
// own. So a cursor is a function of what it stands for: the same page answered twice is the same bytes (an answer
// can be compared, cached and tagged), and a nonce repeats only for the same message, which reveals only that two
// cursors are equal. Two different messages share a nonce with a chance of 2^-96 each.
const NONCE_KEY_LABEL = 'crm/list-cursor/siv-nonce/v2';
const nonceKeys = new WeakMap<Config, Buffer>();

function nonceFor(config: Config, binding: string, text: string): Buffer {
  let key = nonceKeys.get(config);
  if (!key) nonceKeys.set(config, (key = subkey(config.secretKey(), NONCE_KEY_LABEL)));
  return createHmac('sha256', key).update(binding).update('\u0000').update(text).digest().subarray(0, NONCE_BYTES);
}

/** The cursor that continues after `pos` in the list `binding` names. */
export function encodeCursor(config: Config, binding: string, pos: CursorPosition): string {
  const text = JSON.stringify(pos);
  const nonce = nonceFor(config, binding, text);
  const cipher = createCipheriv(ALGORITHM, cursorKey(config), nonce);
  cipher.setAAD(Buffer.from(binding, 'utf8'));
  const sealed = Buffer.concat([nonce, cipher.update(text, 'utf8'), cipher.final()]);
  return `${sealed.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}

/**
 * The bytes of a base64url text, or undefined unless the text is exactly what encoding them gives: decoding
 * skips foreign characters and drops the spare bits of the last character, so several texts decode to the same
 * bytes, and a cursor edited there would otherwise pass.
 */
function strictBase64url(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

function invalidCursor() {
  return errors.invalidCursor(
    'The cursor is malformed or altered, or belongs to another list, API key, sort or set of filters; repeat the query parameters of the first page',
  );
}

/** The position a cursor holds, if it was made by encodeCursor for this binding; else 400 invalid_cursor. */
export function decodeCursor(config: Config, binding: string, cursor: string): CursorPosition {
  // CONTRACT C.1: a malformed cursor (empty or too long too) is `invalid_cursor`, not `validation_failed`, so the
  // schemas put no length on it.
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS) throw invalidCursor();
  const dot = cursor.indexOf('.');
  if (dot < 0) throw invalidCursor();
  const sealed = strictBase64url(cursor.slice(0, dot));
  const tag = strictBase64url(cursor.slice(dot + 1));
  if (!sealed || !tag || sealed.length <= NONCE_BYTES || tag.length !== TAG_BYTES) throw invalidCursor();
  let text: string;
  try {
    const decipher = createDecipheriv(ALGORITHM, cursorKey(config), sealed.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(binding, 'utf8'));
    decipher.setAuthTag(tag);
    // final() checks the tag; it throws on any edit, another binding or another key.
    text = decipher.update(sealed.subarray(NONCE_BYTES), undefined, 'utf8') + decipher.final('utf8');
  } catch {
    throw invalidCursor();
  }
  return positionOf(text);
}

/** The position in an authenticated cursor's text (only this codec writes them; checked all the same). */
function positionOf(text: string): CursorPosition {
  let pos: unknown;
  try {
    pos = JSON.parse(text);
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(pos) || pos.length !== 2 || typeof pos[1] !== 'string') throw invalidCursor();
  const v = pos[0];
  if (v !== null && typeof v !== 'string' && typeof v !== 'number') throw invalidCursor();
  return [v, pos[1]];
}
