import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * `merged_into_id` on contacts and companies (CONTRACT D.2): set on the record a merge folded into another (which
 * is soft-deleted in the same transaction), so that its id answers 404 with `mergedIntoId`, lists with
 * `includeDeleted` show it, and restore refuses it. Null on every other row; no index (read by id only).
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  for (const table of ['contacts', 'companies']) await sql.raw(`alter table ${table} add column merged_into_id text`).execute(db);
}
