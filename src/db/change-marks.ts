import { sql } from 'kysely';
import { isPostgres } from './dialect.js';
import { prepared } from './prepared.js';
import type { Db } from './types.js';

/**
 * Marks a tenant's records of a type changed (modules/shared/changes.ts): `list_dirty` for the dynamic-list loop and
 * `change_versions` for cached list totals, in one round trip where the database allows it.
 */
export async function markDirtyAndBump(tx: Db, tenantId: string, objectType: string, now: string): Promise<void> {
  if (isPostgres(tx)) {
    await markBoth(tx, tenantId, objectType, now, 1);
  } else {
    await markDirty(tx, tenantId, objectType, now);
    await bumpVersion(tx, tenantId, objectType, 1);
  }
}

// Compiled once: every write of a record runs them.
const markDirty = prepared((db: Db, tenantId: string, objectType: string, now: string) =>
  db
    .insertInto('list_dirty')
    .values({ tenant_id: tenantId, object_type: objectType, changed_at: now })
    .onConflict((oc) => oc.columns(['tenant_id', 'object_type']).doUpdateSet({ changed_at: now })),
);
const bumpVersion = prepared((db: Db, tenantId: string, objectType: string, one: number) =>
  db
    .insertInto('change_versions')
    .values({ tenant_id: tenantId, object_type: objectType, version: one })
    .onConflict((oc) => oc.columns(['tenant_id', 'object_type']).doUpdateSet((eb) => ({ version: eb('change_versions.version', '+', one) }))),
);
/** PostgreSQL: both in one statement (a data-modifying WITH), one round trip; SQLite has no such WITH. */
const markBoth = prepared((db: Db, tenantId: string, objectType: string, now: string, one: number) => ({
  compile: () =>
    sql`with dirty as (
      insert into list_dirty (tenant_id, object_type, changed_at) values (${tenantId}, ${objectType}, ${now})
      on conflict (tenant_id, object_type) do update set changed_at = excluded.changed_at
    )
    insert into change_versions (tenant_id, object_type, version) values (${tenantId}, ${objectType}, ${one})
    on conflict (tenant_id, object_type) do update set version = change_versions.version + excluded.version`.compile(db),
}));
