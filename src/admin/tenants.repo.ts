import type { Db } from '../db/index.js';
import type { TenantsTable, UsersTable } from '../db/tables/core.js';

/** Tenants and their users are made by `crm setup apply` only; the API reads them (reference, forms). */
export async function tenantSlugTaken(db: Db, slug: string): Promise<boolean> {
  return (await db.selectFrom('tenants').select('id').where('slug', '=', slug).executeTakeFirst()) !== undefined;
}

export function tenantSlug(db: Db, tenantId: string): Promise<string> {
  return db
    .selectFrom('tenants')
    .select('slug')
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow()
    .then((t) => t.slug);
}

export async function insertTenant(db: Db, row: TenantsTable): Promise<void> {
  await db.insertInto('tenants').values(row).execute();
}

export async function insertUsers(db: Db, rows: UsersTable[]): Promise<void> {
  if (rows.length) await db.insertInto('users').values(rows).execute();
}
