import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * `<table>__deleted` (deleted_at) over the soft-deleted rows of each table with soft delete: the workers purge the
 * rows deleted longer ago than RESTORE_WINDOW_DAYS (CONTRACT D.1) oldest first, in small batches, reading only
 * those rows. Partial, so a live row costs nothing here; a deletion adds one entry (the row's `updated_at` moves
 * anyway).
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  for (const table of ['contacts', 'companies', 'deals', 'proposals', 'lists']) {
    await sql.raw(`create index ${table}__deleted on ${table} (deleted_at) where deleted_at is not null`).execute(db);
  }
}
