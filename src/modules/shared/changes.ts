import { oncePerTransaction, type Db } from '../../db/index.js';
import { prepared } from '../../db/prepared.js';
import { nowIso } from '../../util/time.js';

export type ChangedType = 'contact' | 'company' | 'deal';

/**
 * Records, inside the write's transaction, that records of an object type changed in a tenant:
 * - `list_dirty` tells the dynamic-list loop to recalculate only lists of that type;
 * - `change_versions` moves on, so list totals cached against it (src/db/count-cache.ts) are recounted.
 */
export async function markChanged(db: Db, tenantId: string, objectType: ChangedType): Promise<void> {
  // Both only say "changed since": once per transaction is enough, however many records it writes.
  await oncePerTransaction(db, `changed\0${tenantId}\0${objectType}`, async () => {
    await markDirty(db, tenantId, objectType, nowIso());
    await bumpVersion(db, tenantId, objectType, 1);
  });
}

// Compiled once: every write of a record runs both.
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
