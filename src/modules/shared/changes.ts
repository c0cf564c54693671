import { sql } from 'kysely';
import { isPostgres } from '../../db/dialect.js';
import { deferWrite, oncePerTransaction, type Db, type DeferredWrites } from '../../db/index.js';
import { prepared } from '../../db/prepared.js';
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
    const postgres = isPostgres(tx);
    for (const [, { tenantId, objectType }] of pairs) {
      if (postgres) {
        await markBoth(tx, tenantId, objectType, now, 1);
      } else {
        await markDirty(tx, tenantId, objectType, now);
        await bumpVersion(tx, tenantId, objectType, 1);
      }
    }
  },
};

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
