import { sql } from 'kysely';
import type { Logger } from 'pino';
import { forUpdateSkipLocked } from '../db/dialect.js';
import { forEachChunk } from '../db/batch.js';
import { compileFilter } from '../db/filter-sql.js';
import { BULK_CHANGE_ROWS, noteBulkChange } from '../db/statistics.js';
import { withTx, type Database } from '../db/index.js';
import type { FilterObjectType } from '../domain/filters.js';
import { tenantPropertyDefs } from '../modules/shared/custom-properties.js';
import { parseJson } from '../util/json.js';
import { nowIso } from '../util/time.js';
import { intervalLoop } from './loop.js';

const TABLES = { contact: 'contacts', company: 'companies', deal: 'deals' } as const;
/** (tenant, type) pairs recalculated at once in one pass. */
const PARALLELISM = 4;
const isObjectType = (t: string): t is FilterObjectType => t in TABLES;

export interface RecalculationResult {
  /** (tenant, object type) pairs recalculated. */
  types: number;
  /** Dynamic lists recalculated. */
  lists: number;
  /** Lists skipped because their stored filter no longer compiles (for example a property was removed). */
  failed: number;
}

/**
 * One pass of the dynamic-list engine (spec 2.6, CONTRACT B.7): for every (tenant, object type) marked
 * changed in `list_dirty` (by `markChanged` on each contact/company/deal write, and by setup for a new
 * dynamic list), recompute the members of that tenant's dynamic lists of that type. Dynamic lists never
 * calculated yet are included even without a marker.
 *
 * The filters' cost depends on the data, so matching runs on the read pool with its deadline, never on
 * the writer (DESIGN §4): for each list, two set-based reads find the records that match and are not
 * members yet, and the members that no longer match; a short write transaction then applies only that
 * difference.
 *
 * Lost changes are impossible by construction: the marker is claimed (deleted, in its own transaction)
 * before the records are read. A write committed before the claim is visible to the reads that follow;
 * a write committing after it re-creates the marker, so the next pass sees it. A failure re-creates the
 * marker. Two workers never recalculate the same pair at once: the second finds the marker gone (or, on
 * PostgreSQL, locked: markers locked by another transaction are skipped until the next pass).
 */
export async function recalculateDirtyLists(
  database: Database,
  now: string = nowIso(),
  log?: Logger,
  /** Only these tenants (tests sharing one database; an operator's targeted pass). */
  only?: { tenantIds: string[] },
): Promise<RecalculationResult> {
  const { db } = database;
  const due = new Map<string, { tenantId: string; objectType: FilterObjectType; marked: boolean }>();
  if (only && only.tenantIds.length === 0) return { types: 0, lists: 0, failed: 0 };
  let dirtyQuery = db.selectFrom('list_dirty').select(['tenant_id', 'object_type']).orderBy('changed_at');
  if (only) dirtyQuery = dirtyQuery.where('tenant_id', 'in', only.tenantIds);
  const dirty = await dirtyQuery.execute();
  for (const d of dirty) {
    if (isObjectType(d.object_type)) due.set(`${d.tenant_id}\0${d.object_type}`, { tenantId: d.tenant_id, objectType: d.object_type, marked: true });
  }
  let neverQuery = db
    .selectFrom('lists')
    .select(['tenant_id', 'object_type'])
    .distinct()
    .where('kind', '=', 'dynamic')
    .where('deleted_at', 'is', null)
    .where('recalculated_at', 'is', null);
  if (only) neverQuery = neverQuery.where('tenant_id', 'in', only.tenantIds);
  const never = await neverQuery.execute();
  for (const l of never) {
    const key = `${l.tenant_id}\0${l.object_type}`;
    if (isObjectType(l.object_type) && !due.has(key)) due.set(key, { tenantId: l.tenant_id, objectType: l.object_type, marked: false });
  }

  const result: RecalculationResult = { types: 0, lists: 0, failed: 0 };
  const queue = [...due.values()];
  const one = async (d: (typeof queue)[number]) => {
    let claimed = false;
    try {
      claimed = await claimMarker(database, d.tenantId, d.objectType);
      if (d.marked && !claimed) return; // locked, or claimed (and recalculated) by another worker since the pass started
      const r = await recalculateType(database, d.tenantId, d.objectType, now, log);
      result.types++;
      result.lists += r.lists;
      result.failed += r.failed;
    } catch (err) {
      log?.error({ err, tenantId: d.tenantId, objectType: d.objectType }, 'dynamic list recalculation failed');
      // The next pass tries again.
      if (claimed) await remark(database, d.tenantId, d.objectType, now).catch(() => {});
    }
  };
  // Pairs are independent: a few at once (the read pool bounds them per tenant); SQLite serializes the writes.
  await Promise.all(
    Array.from({ length: Math.min(PARALLELISM, queue.length) }, async () => {
      for (let d = queue.shift(); d; d = queue.shift()) await one(d);
    }),
  );
  return result;
}

/** Deletes the (tenant, type) marker; false when there was none or another transaction holds it. */
async function claimMarker(database: Database, tenantId: string, objectType: FilterObjectType): Promise<boolean> {
  return withTx(database.db, async (tx) => {
    // A marker locked by a write still in flight is skipped, not waited for: that write is not visible
    // yet anyway, and its marker stays for the next pass (one slow transaction never stalls the loop).
    const marker = await forUpdateSkipLocked(
      database.dialect,
      tx.selectFrom('list_dirty').select('changed_at').where('tenant_id', '=', tenantId).where('object_type', '=', objectType),
    ).executeTakeFirst();
    if (!marker) return false;
    await tx.deleteFrom('list_dirty').where('tenant_id', '=', tenantId).where('object_type', '=', objectType).execute();
    return true;
  });
}

async function remark(database: Database, tenantId: string, objectType: FilterObjectType, now: string): Promise<void> {
  await database.db
    .insertInto('list_dirty')
    .values({ tenant_id: tenantId, object_type: objectType, changed_at: now })
    .onConflict((oc) => oc.columns(['tenant_id', 'object_type']).doNothing())
    .execute();
}

async function recalculateType(
  database: Database,
  tenantId: string,
  objectType: FilterObjectType,
  now: string,
  log?: Logger,
): Promise<{ lists: number; failed: number }> {
  const { db } = database;
  const lists = await db
    .selectFrom('lists')
    .select(['id', 'filters'])
    .where('tenant_id', '=', tenantId)
    .where('object_type', '=', objectType)
    .where('kind', '=', 'dynamic')
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  if (lists.length === 0) return { lists: 0, failed: 0 };

  // Property definitions are read only when some filter names a custom property.
  const needsProperties = lists.some((l) => (l.filters ?? '').includes('customProperties.'));
  const properties = needsProperties ? await tenantPropertyDefs(db, tenantId, objectType) : new Map();
  const table = TABLES[objectType] as 'contacts';
  const recalculated: string[] = [];
  let failed = 0;
  for (const list of lists) {
    const filters = parseJson<unknown>(list.filters, null);
    let matches: ReturnType<typeof compileFilter>;
    try {
      matches = compileFilter(filters, objectType, { dialect: database.dialect, tenantId, properties, table });
    } catch (err) {
      failed++;
      log?.warn({ err, tenantId, listId: list.id }, 'dynamic list filter does not compile; members left as they were');
      continue;
    }
    const matching = db
      .selectFrom(table)
      .select(sql.ref<string>(`${table}.id`).as('id'))
      .where(sql.ref(`${table}.tenant_id`), '=', tenantId)
      .where(sql.ref(`${table}.deleted_at`), 'is', null)
      .where(matches);
    const members = db.selectFrom('list_members').select('object_id').where('tenant_id', '=', tenantId).where('list_id', '=', list.id);
    // Both sides are uncorrelated subqueries: each is evaluated once, whatever the number of rows. Each
    // list gets a QUERY_TIMEOUT_MS of its own (a deadline covers one request's statements).
    const reads = database.readsFor(tenantId);
    const toAdd = await reads.all(matching.where(sql.ref(`${table}.id`), 'not in', members));
    const toRemove = await reads.all(members.where('object_id', 'not in', matching));
    await withTx(db, async (tx) => {
      await forEachChunk(
        toAdd.map((r) => r.id),
        (chunk) =>
          tx
            .insertInto('list_members')
            .values(chunk.map((object_id) => ({ tenant_id: tenantId, list_id: list.id, object_id, created_at: now })))
            .onConflict((oc) => oc.columns(['tenant_id', 'list_id', 'object_id']).doNothing())
            .execute(),
      );
      await forEachChunk(
        toRemove.map((r) => r.object_id),
        (chunk) => tx.deleteFrom('list_members').where('tenant_id', '=', tenantId).where('list_id', '=', list.id).where('object_id', 'in', chunk).execute(),
      );
      await tx.updateTable('lists').set({ recalculated_at: now }).where('tenant_id', '=', tenantId).where('id', '=', list.id).execute();
    });
    recalculated.push(list.id);
    // Many members in or out: list_members' planner statistics are refreshed soon (PostgreSQL: db/pg-stats.ts).
    if (toAdd.length + toRemove.length >= BULK_CHANGE_ROWS) noteBulkChange(db, ['list_members'], toAdd.length + toRemove.length);
  }
  return { lists: recalculated.length, failed };
}

export const dynamicListsLoop = intervalLoop(
  'dynamic-lists',
  (config) => config.dynamicListIntervalMs,
  async ({ database, log }) => {
    const r = await recalculateDirtyLists(database, nowIso(), log);
    if (r.lists || r.failed) log.debug({ ...r }, 'dynamic lists recalculated');
  },
);
