import { hash } from 'node:crypto';
import { randomBase62 } from '../util/ids.js';

export const KEY_PREFIX = 'crm_live_';
const KEY_BODY = 40;
// Shape check before any lookup: a malformed key never reaches the database.
const KEY_RE = /^crm_live_[0-9A-Za-z]{32,128}$/;

export function generateApiKey(): { key: string; hash: string; prefix: string } {
  const key = KEY_PREFIX + randomBase62(KEY_BODY);
  return { key, hash: hashApiKey(key), prefix: key.slice(0, KEY_PREFIX.length + 4) };
}

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function looksLikeApiKey(key: string): boolean {
  return KEY_RE.test(key);
}
