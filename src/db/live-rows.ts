import { sql, type Updateable } from 'kysely';
import type { Db } from './types.js';
import type { DB } from './tables/schema.js';

/** Tables with soft delete: a row is live while `deleted_at` is null. */
export type SoftDeleteTable = 'contacts' | 'companies' | 'deals' | 'lists' | 'proposals';

/** Updates one live row of the tenant; returns 1 when it was updated, 0 when missing or deleted. */
export async function updateLiveRow<T extends SoftDeleteTable>(db: Db, table: T, tenantId: string, id: string, set: Updateable<DB[T]>): Promise<number> {
  const r = await db
    .updateTable(table as SoftDeleteTable)
    .set(set as Updateable<DB[SoftDeleteTable]>)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Soft-deletes one live row (its updatedAt moves too); returns 1, or 0 when missing or already deleted. */
export function softDeleteRow(db: Db, table: SoftDeleteTable, tenantId: string, id: string, now: string): Promise<number> {
  return updateLiveRow(db, table, tenantId, id, { deleted_at: now, updated_at: now });
}

/** The live row of the tenant whose unique `column` holds `value` (stored form), for look-ups by natural key. */
export async function liveIdBy(db: Db, table: SoftDeleteTable, tenantId: string, column: string, value: string): Promise<string | undefined> {
  const r = await db
    .selectFrom(table as 'contacts')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where(sql.ref(column), '=', value)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return r?.id;
}
