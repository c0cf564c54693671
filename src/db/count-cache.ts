import type { CompiledQuery } from 'kysely';
import type { Db } from './index.js';
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
const cache = new Map<string, { version: number; total: number }>();
/** Counts running now, by key and version: concurrent misses of one total share one count. */
const counting = new Map<string, Promise<number>>();

export async function cachedCount(
  reads: Reads,
  tenantId: string,
  objectType: 'contact' | 'company' | 'deal',
  countQuery: CompiledQuery<{ n: number | string | bigint }>,
  /** Tells this total from the tenant's others: the count's SQL and its values (listing.ts). */
  queryKey: string,
): Promise<number> {
  const { db } = reads;
  const count = async () => Number((await reads.first({ compile: () => countQuery }))?.n ?? 0);
  if (db.isTransaction) return count(); // own writes may be uncommitted
  const [row] = await changeVersion(db, tenantId, objectType);
  const version = row?.version ?? 0;
  const key = `${tenantId}\u0001${objectType}\u0001${queryKey}`;
  const hit = cache.get(key);
  if (hit && hit.version === version) {
    cache.delete(key); // keep recently used entries at the end (LRU)
    cache.set(key, hit);
    return hit.total;
  }
  // A burst of pages of a list whose total is not cached (at start, after a write) would otherwise count
  // it once per page, on the read pool, one tenant's share at a time: 50 pages, 50 counts in a row.
  const running = `${key}\u0001${version}`;
  const shared = counting.get(running);
  // The shared count runs under its first caller's deadline and client: if that one fails, count anew.
  if (shared) return shared.catch(count);
  const mine = count();
  counting.set(running, mine);
  try {
    const total = await mine;
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, { version, total });
    return total;
  } finally {
    counting.delete(running);
  }
}
