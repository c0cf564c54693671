import type { Db } from '../../db/index.js';
import { prepared } from '../../db/prepared.js';
import type { PropertiesTable } from '../../db/tables/config.js';

export type PropertyRow = Omit<PropertiesTable, 'tenant_id'>;

// Compiled once: every write that gives customProperties reads the definitions (a create's Kysely build and
// compile of it cost more than the statement).
const listPropertiesQuery = prepared((db: Db, tenantId: string, objectType: string) =>
  db
    .selectFrom('properties')
    .select(['id', 'object_type', 'internal_name', 'label', 'type', 'group_name', 'display_order', 'is_default_in_form', 'options'])
    .where('tenant_id', '=', tenantId)
    .where('object_type', '=', objectType)
    .orderBy('display_order')
    .orderBy('id'),
);

export function listProperties(db: Db, tenantId: string, objectType: string): Promise<PropertyRow[]> {
  return listPropertiesQuery(db, tenantId, objectType);
}

/** What a value is checked against: a definition's id, type and options (stored JSON), in id order. */
export type PropertyDefRow = Pick<PropertiesTable, 'id' | 'type' | 'options'>;

// Three columns, in the primary key's order (no sort): the definitions every create with customProperties reads
// (the nine columns of listProperties, sorted, cost twice as much).
const propertyDefRowsQuery = prepared((db: Db, tenantId: string, objectType: string) =>
  db.selectFrom('properties').select(['id', 'type', 'options']).where('tenant_id', '=', tenantId).where('object_type', '=', objectType).orderBy('id'),
);

export function propertyDefRows(db: Db, tenantId: string, objectType: string): Promise<PropertyDefRow[]> {
  return propertyDefRowsQuery(db, tenantId, objectType);
}

/** A new custom property (tenant configuration: `crm setup apply`). */
export async function insertProperty(db: Db, row: PropertiesTable): Promise<void> {
  await db.insertInto('properties').values(row).execute();
}
