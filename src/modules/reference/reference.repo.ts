import type { Db } from '../../db/index.js';
import { sortableText, type SqlDialect } from '../../db/dialect.js';
import type { LossReasonsTable } from '../../db/tables/config.js';

export interface UserRow {
  id: string;
  name: string;
  email: string;
}
export interface LossReasonRow {
  id: string;
  name: string;
}

// Both lists are small tenant configuration (A.3), read whole; names sort case-insensitively, ties by id.

export function listUsers(db: Db, dialect: SqlDialect, tenantId: string): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .select(['id', 'name', 'email'])
    .where('tenant_id', '=', tenantId)
    .orderBy(sortableText(dialect, 'name'))
    .orderBy('id')
    .execute();
}

export function listLossReasons(db: Db, dialect: SqlDialect, tenantId: string): Promise<LossReasonRow[]> {
  return db.selectFrom('loss_reasons').select(['id', 'name']).where('tenant_id', '=', tenantId).orderBy(sortableText(dialect, 'name')).orderBy('id').execute();
}

/** New loss reasons of a tenant (tenant configuration: `crm setup apply`). */
export async function insertLossReasons(db: Db, rows: LossReasonsTable[]): Promise<void> {
  if (rows.length) await db.insertInto('loss_reasons').values(rows).execute();
}
