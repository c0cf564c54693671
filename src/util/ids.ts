import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from the system 8 KiB at a time: one randomBytes() call per id cost more than
// the id's insert (a batch of 100 creates draws 200 ids).
const POOL_SIZE = 8192;
let pool = Buffer.alloc(0);
let offset = 0;

function randomByte(): number {
  if (offset >= pool.length) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++];
}

/** n random base62 characters (rejection sampling keeps the distribution uniform). */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    const b = randomByte();
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

/** Opaque record id with a type prefix, Stripe-style: `con_3kT9…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}
