import { markDirtyAndBump } from '../../db/change-marks.js';
import { deferWrite, oncePerTransaction, type Db, type DeferredWrites } from '../../db/index.js';
import { nowIso } from '../../util/time.js';

export type ChangedType = 'contact' | 'company' | 'deal';

/**
 * Records, inside the write's transaction, that records of an object type changed in a tenant:
 * - `list_dirty` tells the dynamic-list loop to recalculate only lists of that type;
 * - `change_versions` moves on, so list totals cached against it (src/db/count-cache.ts) are recounted.
 *
 * Both are written as the transaction's last statements before its commit (db/index.ts deferWrite, `last`):
 * every writer of the tenant updates these rows, so on PostgreSQL the row lock they take makes the tenant's
 * writers wait for one another until the commit. Taken mid-transaction, it was held across the rest of the
 * write (the event log's statements, the webhooks read); now it is held for one statement and the commit.
 */
export async function markChanged(db: Db, tenantId: string, objectType: ChangedType): Promise<void> {
  // Both only say "changed since": once per transaction is enough, however many records it writes.
  await oncePerTransaction(db, `changed\0${tenantId}\0${objectType}`, () => deferWrite(db, changeMarks, { tenantId, objectType }));
}

const changeMarks: DeferredWrites<{ tenantId: string; objectType: ChangedType }> = {
  last: true,
  async flush(tx, items) {
    const now = nowIso();
    // In one order in every transaction: two writers of several types cannot deadlock on these rows.
    const pairs = [...new Map(items.map((i) => [`${i.tenantId}\0${i.objectType}`, i])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [, { tenantId, objectType }] of pairs) await markDirtyAndBump(tx, tenantId, objectType, now);
  },
};
