/**
 * The SQL of the duplicates (CONTRACT D.3), over the tables that migration 022's triggers keep:
 * `duplicate_key_counts` (how many live records hold each key of each rule) names the keys held twice or more,
 * through its partial index, and `duplicate_keys` their holders. O(duplicates): no scan of the tenant's records.
 * Raw SQL: both tables are written by triggers only, and have no table type.
 */
import { sql } from 'kysely';
import type { Reads } from './reads.js';

/**
 * The largest group read: a key held by more live records than this is left out. Its n records would give
 * n(n-1)/2 pairs (1,000 records: 499,500), which no one reviews pair by pair, and which would make every page
 * cost that many; such a key is a pattern (a chain's CNPJ root, a shared switchboard, a common name at a
 * webmail domain), not a duplicate. 50 records give at most 1,225 pairs.
 */
export const MAX_GROUP = 50;

/** A live record holding a shared key: its id, the key's kind and the key. */
export interface KeyHolder {
  id: string;
  kind: string;
  key: string;
}

/**
 * The tenant's live records whose key of one of `kinds` (`contacts.email`, …: migration 022) 2 to MAX_GROUP live
 * records hold: one statement for every kind a page needs (a round trip per kind cost PostgreSQL's page ~10 ms).
 */
export async function keyHolders(reads: Reads, tenantId: string, kinds: readonly string[]): Promise<KeyHolder[]> {
  // `cross join` fixes SQLite's join order: the shared keys first (the counts' partial index), then their holders by
  // the key. Left free, SQLite walked every holder of the kind and looked its count up (100,000 contacts: 50–90 ms a
  // kind against 1 ms), as the statistics the server keeps (db/sqlite-stats.ts) know nothing of `duplicate_keys`.
  // PostgreSQL plans a cross join with conditions as the inner join it is.
  const rows = await reads.all(
    sql<{ id: string; kind: string; k1: string; k2: string }>`select h.record_id as id, h.kind, h.k1, h.k2 from duplicate_key_counts d
      cross join duplicate_keys h
      where d.tenant_id = ${tenantId} and d.kind in (${sql.join(kinds)}) and d.n > 1 and d.n <= ${sql.lit(MAX_GROUP)}
        and h.tenant_id = d.tenant_id and h.kind = d.kind and h.k1 = d.k1 and h.k2 = d.k2`,
  );
  return rows.map((r) => ({ id: String(r.id), kind: String(r.kind), key: `${r.k1}\u001f${r.k2}` }));
}
