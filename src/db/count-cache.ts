import type { CompiledQuery } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from './types.js';
import { prepared } from './prepared.js';
import type { Reads } from './reads.js';

/**
 * Exact list totals without recounting on every page. Counting 100k rows costs tens of milliseconds on
 * SQLite, while the data behind a list rarely changes between two reads. A total is cached per process
 * against the tenant's change version of the object type (bumped in every write's transaction by
 * markChanged), read from the database on each call, so a write by any process invalidates it at once.
 * The version is read BEFORE counting: a write landing in between leaves the entry tagged with the older
 * version, so it is recounted next time (never served stale).
 */
const MAX_ENTRIES = 5_000;
// Compiled once: every page of a counted list reads it.
const changeVersion = prepared((db: Db, tenantId: string, objectType: string) =>
  db.selectFrom('change_versions').select('version').where('tenant_id', '=', tenantId).where('object_type', '=', objectType),
);
// NOTE: lru-cache, not a Map re-inserted on every hit: each re-insertion stored the hit's own key string, made
// for that request, which then lived as long as the entry, so every page moved a key to V8's old generation
// (with the listing's shapes, 24 → 5 KB a scavenge for filters by owner at one connection;
// bench/journal/). lru-cache keeps the first key and moves the entry in its own index arrays.
const cache = new LRUCache<string, { version: number; total: number }>({ max: MAX_ENTRIES });
/** Counts running now, by key and version: concurrent misses of one total share one count. */
const counting = new Map<string, Promise<number>>();

export type CountedType = 'contact' | 'company' | 'deal';

/** A list's total as the cache holds it now (`total`, or undefined), and how to keep one counted after this look. */
export interface CachedTotal {
  total: number | undefined;
  /** Caches `total` against the version read by this look, before the count ran (so never newer than its data). */
  remember(total: number): void;
  key: string;
  version: number;
}

/** The cached total of a list (`queryKey`: the count's SQL and its values, db/pages.ts), read against the current version. */
export async function peekCount(db: Db, tenantId: string, objectType: CountedType, queryKey: string): Promise<CachedTotal | undefined> {
  if (db.isTransaction) return undefined; // own writes may be uncommitted
  const [row] = await changeVersion(db, tenantId, objectType);
  const version = row?.version ?? 0;
  const key = `${tenantId}\u0001${objectType}\u0001${queryKey}`;
  const hit = cache.get(key);
  const remember = (total: number) => void cache.set(key, { version, total });
  if (hit && hit.version === version) return { total: hit.total, remember, key, version };
  return { total: undefined, remember, key, version };
}

export async function cachedCount(
  reads: Reads,
  tenantId: string,
  objectType: CountedType,
  countQuery: CompiledQuery<{ n: number | string | bigint }>,
  /** Tells this total from the tenant's others: the count's SQL and its values (db/pages.ts). */
  queryKey: string,
): Promise<number> {
  const count = async () => Number((await reads.first({ compile: () => countQuery }))?.n ?? 0);
  const peek = await peekCount(reads.db, tenantId, objectType, queryKey);
  if (!peek) return count();
  if (peek.total !== undefined) return peek.total;
  // A burst of pages of a list whose total is not cached (at start, after a write) would otherwise count
  // it once per page, on the read pool, one tenant's share at a time: 50 pages, 50 counts in a row.
  const running = `${peek.key}\u0001${peek.version}`;
  const start = (): Promise<number> => {
    const mine = count();
    counting.set(running, mine);
    mine
      .then(peek.remember, () => undefined)
      .finally(() => {
        if (counting.get(running) === mine) counting.delete(running);
      });
    return mine;
  };
  const shared = counting.get(running);
  if (!shared) return start();
  // The shared count runs under its first caller's deadline and client. If that one fails, the first waiter to
  // hear of it counts anew (under its own deadline) and the others join that count, whose total is remembered:
  // before, each waiter counted on its own, and a count that had just outlived one deadline ran once per waiter.
  // One retry: a waiter whose second count fails too answers with that failure.
  return shared.catch(() => {
    const again = counting.get(running);
    return again && again !== shared ? again : start();
  });
}
