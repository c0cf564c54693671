import type { Db } from '../../db/index.js';
import type { PropertiesTable } from '../../db/tables/config.js';

export type PropertyRow = Omit<PropertiesTable, 'tenant_id'>;

export function listProperties(db: Db, tenantId: string, objectType: string): Promise<PropertyRow[]> {
  return db
    .selectFrom('properties')
    .select(['id', 'object_type', 'internal_name', 'label', 'type', 'group_name', 'display_order', 'is_default_in_form', 'options'])
    .where('tenant_id', '=', tenantId)
    .where('object_type', '=', objectType)
    .orderBy('display_order')
    .orderBy('id')
    .execute();
}

/** A new custom property (tenant configuration: `crm setup apply`). */
export async function insertProperty(db: Db, row: PropertiesTable): Promise<void> {
  await db.insertInto('properties').values(row).execute();
}
