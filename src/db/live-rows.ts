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

/** A row of the tenant whatever its state (D.1 restore): when it was deleted (null: live), and the `columns` asked. */
export async function anyRow(
  db: Db,
  table: SoftDeleteTable,
  tenantId: string,
  id: string,
  columns: readonly string[],
): Promise<Record<string, unknown> | undefined> {
  return db
    .selectFrom(table as 'contacts')
    .select([sql.ref('deleted_at').as('deleted_at'), ...columns.map((c) => sql.ref(c).as(c))])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Brings back one row deleted at or after `since` (its updatedAt moves); returns 1, or 0 when live, missing or older. */
export async function restoreRow(db: Db, table: SoftDeleteTable, tenantId: string, id: string, since: string, now: string): Promise<number> {
  const r = await db
    .updateTable(table as 'contacts')
    .set({ deleted_at: null, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('deleted_at', 'is not', null)
    .where('deleted_at', '>=', since)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** The object type of a table's rows in `record_tags` and list memberships (lists have neither tags nor memberships of their own). */
const MEMBER_TYPES: Partial<Record<SoftDeleteTable, string>> = { contacts: 'contact', companies: 'company', deals: 'deal' };

/**
 * Purges for good up to `limit` rows of `table`, of every tenant, deleted before `before` (oldest first), with their
 * tag links and static-list memberships (a list's own members, for lists); returns the rows that went. The caller
 * runs it in a transaction of its own, batch after batch (workers/retention.ts).
 */
export async function purgeDeletedRows(db: Db, table: SoftDeleteTable, before: string, limit: number): Promise<{ tenant_id: string; id: string }[]> {
  const rows = await db
    .selectFrom(table as 'contacts')
    .select(['tenant_id', 'id'])
    .where('deleted_at', 'is not', null)
    .where('deleted_at', '<', before)
    .orderBy('deleted_at')
    .limit(limit)
    .execute();
  for (const { tenant_id, id } of rows) await deleteForGood(db, table, tenant_id, id);
  return rows;
}

/** Deletes one row of the tenant for good, whatever its state, with its tag links and list memberships (a list's own members, for lists). */
export async function deleteForGood(db: Db, table: SoftDeleteTable, tenantId: string, id: string): Promise<void> {
  const type = MEMBER_TYPES[table];
  if (type) {
    await db.deleteFrom('record_tags').where('tenant_id', '=', tenantId).where('object_type', '=', type).where('object_id', '=', id).execute();
    await db.deleteFrom('list_members').where('tenant_id', '=', tenantId).where('object_id', '=', id).execute();
  } else if (table === 'lists') {
    await db.deleteFrom('list_members').where('tenant_id', '=', tenantId).where('list_id', '=', id).execute();
  }
  await db
    .deleteFrom(table as 'contacts')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}

/**
 * Clears `column` of one row when the record it names (a row of `target`) is not live: after a restore (D.1), the
 * reference that the target's deletion would have cleared had the row been live then (a company's deletion clears
 * its live contacts' and deals' `companyId`).
 */
export async function clearDeadReference(db: Db, table: SoftDeleteTable, tenantId: string, id: string, column: string, target: SoftDeleteTable): Promise<void> {
  await db
    .updateTable(table as 'contacts')
    .set({ [column]: null } as never)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where(sql.ref(column), 'is not', null)
    .where(
      sql<boolean>`not exists (select 1 from ${sql.table(target)} t where t.tenant_id = ${tenantId} and t.id = ${sql.ref(`${table}.${column}`)} and t.deleted_at is null)`,
    )
    .execute();
}

/** The record a merge folded this row into (D.2, migration 023), or undefined. Contacts and companies only. */
export async function mergedInto(db: Db, table: 'contacts' | 'companies', tenantId: string, id: string): Promise<string | undefined> {
  const row = await db
    .selectFrom(table as 'contacts')
    .select(sql<string | null>`merged_into_id`.as('into'))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.into ?? undefined;
}

/** D.2: the merged row is soft-deleted as folded into `into`, in the merge's transaction; returns 1, or 0 when not live. */
export async function markMerged(db: Db, table: 'contacts' | 'companies', tenantId: string, id: string, into: string, now: string): Promise<number> {
  return updateLiveRow(db, table, tenantId, id, { deleted_at: now, updated_at: now, merged_into_id: into } as never);
}
