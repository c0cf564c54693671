/**
 * A copy of `base` with the fields of `more` added (`more` wins), as `{ ...base, ...more }` means.
 *
 * NOTE: on a hot path, not `{ ...base, field: value }`. V8 11 (Node 20) clones `base` and then adds the field,
 * and an object built so is kept by the next scavenges even when nothing refers to it, and moved to the old
 * generation, which only a full collection frees (measured by test/db/no-promotion.test.ts, now in git history;
 * V8 13, in Node 24, no longer does). 40,000 such copies of a 13-field row moved ~9.7 MB there, against ~60 KB built with Object.assign.
 * The row copy of each create (db/search-text.ts) was ~2/3 of what a create left for the old generation:
 * 74 → 24 KB a scavenge at one connection, and a shorter pause (bench/journal/).
 */
export function extended<B extends object, M extends object>(base: B, more: M): B & M {
  return Object.assign({}, base, more);
}
