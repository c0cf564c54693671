import type { Db } from '../../db/index.js';
import { nowIso } from '../../util/time.js';

export type ChangedType = 'contact' | 'company' | 'deal';

/**
 * Records, inside the write's transaction, that records of an object type changed in a tenant:
 * - `list_dirty` tells the dynamic-list loop to recalculate only lists of that type;
 * - `change_versions` moves on, so list totals cached against it (src/db/count-cache.ts) are recounted.
 */
export async function markChanged(db: Db, tenantId: string, objectType: ChangedType): Promise<void> {
  const now = nowIso();
  await db
    .insertInto('list_dirty')
    .values({ tenant_id: tenantId, object_type: objectType, changed_at: now })
    .onConflict((oc) => oc.columns(['tenant_id', 'object_type']).doUpdateSet({ changed_at: now }))
    .execute();
  await db
    .insertInto('change_versions')
    .values({ tenant_id: tenantId, object_type: objectType, version: 1 })
    .onConflict((oc) => oc.columns(['tenant_id', 'object_type']).doUpdateSet((eb) => ({ version: eb('change_versions.version', '+', 1) })))
    .execute();
}
