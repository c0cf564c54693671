import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** n random base62 characters (rejection sampling keeps the distribution uniform). */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

/** Opaque record id with a type prefix, Stripe-style: `con_3kT9…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}
