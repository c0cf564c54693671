import type { Db } from '../../db/index.js';
import { nowIso } from '../../util/time.js';

/**
 * Marks that records of an object type changed in a tenant, so the dynamic-list loop recalculates
 * only lists of that type (and only when something changed). Call inside the write's transaction.
 */
export async function markChanged(db: Db, tenantId: string, objectType: 'contact' | 'company' | 'deal'): Promise<void> {
  const now = nowIso();
  await db
    .insertInto('list_dirty')
    .values({ tenant_id: tenantId, object_type: objectType, changed_at: now })
    .onConflict((oc) => oc.columns(['tenant_id', 'object_type']).doUpdateSet({ changed_at: now }))
    .execute();
}
