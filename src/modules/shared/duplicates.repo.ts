/**
 * The SQL of the duplicates (CONTRACT D.3): the live records holding a key that two or more live records hold,
 * read through the partial expression indexes of migration 022 (the same key and condition texts, so that both
 * databases pick them). One text for both: the key functions have the same names in SQLite and PostgreSQL.
 */
import { sql } from 'kysely';
import type { Reads } from '../../db/reads.js';

/** One index of a rule: the key's SQL expressions (one or two columns) and the index's partial condition. */
export interface DuplicateKey {
  table: 'contacts' | 'companies';
  keys: readonly string[];
  where: string;
}

/**
 * The largest group read: a key held by more live records than this is left out. Its n records would give
 * n(n-1)/2 pairs (1,000 records: 499,500), which no one reviews pair by pair, and which would make every page
 * cost that many; such a key is a pattern (a chain's CNPJ root, a shared switchboard, a common name at a
 * webmail domain), not a duplicate. 50 records give at most 1,225 pairs.
 */
export const MAX_GROUP = 50;

/** A live record holding a shared key: its id and the key (its expressions joined). */
export interface KeyHolder {
  id: string;
  key: string;
}

/**
 * The tenant's live records whose key (`k`) at least one other live record holds, at most MAX_GROUP per key:
 * the GROUP BY reads the index alone, and the records of the shared keys are found in it by key.
 */
export async function keyHolders(reads: Reads, tenantId: string, k: DuplicateKey): Promise<KeyHolder[]> {
  const keys = k.keys.join(', ');
  const keyText = k.keys.length === 1 ? k.keys[0] : k.keys.map((e) => `coalesce(${e}, '')`).join(` || '\u001f' || `);
  const from = sql.raw(`${k.table} where tenant_id = `);
  const where = sql.raw(` and ${k.where}`);
  const rows = await reads.all(
    sql<{ id: string; key: string }>`select id, ${sql.raw(keyText)} as key from ${from}${tenantId}${where}
      and (${sql.raw(keys)}) in (select ${sql.raw(keys)} from ${from}${tenantId}${where} group by ${sql.raw(keys)} having count(*) between 2 and ${sql.lit(MAX_GROUP)})`,
  );
  return rows.map((r) => ({ id: String(r.id), key: String(r.key) }));
}
