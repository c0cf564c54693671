import { sql } from 'kysely';
import type { Logger } from 'pino';
import { forUpdateSkipLocked } from '../db/dialect.js';
import { withTx, type Database, type Tx } from '../db/index.js';
import { compileFilter } from '../db/filter-sql.js';
import type { FilterObjectType } from '../domain/filters.js';
import type { Ctx } from '../http/context.js';
import { propertyDefs } from '../modules/shared/custom-properties.js';
import { parseJson } from '../util/json.js';
import { nowIso } from '../util/time.js';
import { registerLoop } from './index.js';

const TABLES = { contact: 'contacts', company: 'companies', deal: 'deals' } as const;
/** Concurrent (tenant, type) transactions of one pass on PostgreSQL; a small share of the pool. */
const PG_PARALLELISM = 4;
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
 * dynamic list), recompute the members of that tenant's dynamic lists of that type with set-based SQL
 * (one INSERT … SELECT for the records that now match, one DELETE for the members that no longer do).
 * Dynamic lists never calculated yet are included even without a marker.
 *
 * Lost changes are impossible by construction: each (tenant, type) is handled in one transaction that
 * first deletes (claims) its marker and only then reads the records. A write committed before the claim
 * is visible to the statements that follow it; a write committing after it re-creates the marker (on
 * PostgreSQL its upsert waits for this transaction), so the next pass sees it. A failure rolls the claim
 * back. Two workers never recalculate the same pair at once: the second finds the marker gone (or, on
 * PostgreSQL, locked: markers locked by another transaction are skipped until the next pass).
 */
export async function recalculateDirtyLists(database: Database, now: string = nowIso(), log?: Logger): Promise<RecalculationResult> {
  const { db } = database;
  const due = new Map<string, { tenantId: string; objectType: FilterObjectType; marked: boolean }>();
  const dirty = await db.selectFrom('list_dirty').select(['tenant_id', 'object_type']).orderBy('changed_at').execute();
  for (const d of dirty) {
    if (isObjectType(d.object_type)) due.set(`${d.tenant_id}\0${d.object_type}`, { tenantId: d.tenant_id, objectType: d.object_type, marked: true });
  }
  const never = await db
    .selectFrom('lists')
    .select(['tenant_id', 'object_type'])
    .distinct()
    .where('kind', '=', 'dynamic')
    .where('deleted_at', 'is', null)
    .where('recalculated_at', 'is', null)
    .execute();
  for (const l of never) {
    const key = `${l.tenant_id}\0${l.object_type}`;
    if (isObjectType(l.object_type) && !due.has(key)) due.set(key, { tenantId: l.tenant_id, objectType: l.object_type, marked: false });
  }

  const result: RecalculationResult = { types: 0, lists: 0, failed: 0 };
  const queue = [...due.values()];
  const one = async (d: (typeof queue)[number]) => {
    try {
      const r = await withTx(db, (tx) => recalculateType(database, tx, d.tenantId, d.objectType, d.marked, now, log));
      if (r) {
        result.types++;
        result.lists += r.lists;
        result.failed += r.failed;
      }
    } catch (err) {
      // The transaction rolled back, marker included: the next pass tries again.
      log?.error({ err, tenantId: d.tenantId, objectType: d.objectType }, 'dynamic list recalculation failed');
    }
  };
  // Pairs are independent (one transaction each): PostgreSQL runs a few at once (latency-bound work);
  // SQLite serializes writers anyway.
  const lanes = database.dialect.name === 'postgres' ? PG_PARALLELISM : 1;
  await Promise.all(
    Array.from({ length: Math.min(lanes, queue.length) }, async () => {
      for (let d = queue.shift(); d; d = queue.shift()) await one(d);
    }),
  );
  return result;
}

async function recalculateType(
  database: Database,
  tx: Tx,
  tenantId: string,
  objectType: FilterObjectType,
  marked: boolean,
  now: string,
  log?: Logger,
): Promise<{ lists: number; failed: number } | null> {
  // A marker locked by a write still in flight is skipped, not waited for: that write is not visible
  // yet anyway, and its marker stays for the next pass (one slow transaction never stalls the loop).
  const marker = await forUpdateSkipLocked(
    database.dialect,
    tx.selectFrom('list_dirty').select('changed_at').where('tenant_id', '=', tenantId).where('object_type', '=', objectType),
  ).executeTakeFirst();
  // Locked, or claimed (and recalculated) by another worker since the pass started.
  if (marked && !marker) return null;
  if (marker) await tx.deleteFrom('list_dirty').where('tenant_id', '=', tenantId).where('object_type', '=', objectType).execute();

  const lists = await tx
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
  const ctx = { db: tx, dialect: database.dialect, tenantId, userId: null } as unknown as Ctx;
  const properties = needsProperties ? await propertyDefs(ctx, objectType) : new Map();
  const recalculated: string[] = [];
  const table = TABLES[objectType];
  let failed = 0;
  for (const list of lists) {
    const filters = parseJson<unknown>(list.filters, null);
    const matches = () => compileFilter(filters, objectType, { dialect: database.dialect, tenantId, properties, table });
    try {
      matches();
    } catch (err) {
      failed++;
      log?.warn({ err, tenantId, listId: list.id }, 'dynamic list filter does not compile; members left as they were');
      continue;
    }
    // Records that match now and are not members yet join the list.
    await tx
      .insertInto('list_members')
      .columns(['tenant_id', 'list_id', 'object_id', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom(table as 'contacts')
          .select([
            sql<string>`cast(${tenantId} as text)`.as('tenant_id'),
            sql<string>`cast(${list.id} as text)`.as('list_id'),
            sql.ref<string>(`${table}.id`).as('object_id'),
            sql<string>`cast(${now} as text)`.as('created_at'),
          ])
          .where(sql.ref(`${table}.tenant_id`), '=', tenantId)
          .where(sql.ref(`${table}.deleted_at`), 'is', null)
          .where(matches()),
      )
      .onConflict((oc) => oc.columns(['tenant_id', 'list_id', 'object_id']).doNothing())
      .execute();
    // Members that no longer match (or were soft-deleted) leave it.
    await tx
      .deleteFrom('list_members')
      .where('list_members.tenant_id', '=', tenantId)
      .where('list_members.list_id', '=', list.id)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom(table as 'contacts')
              .select(sql.lit(1).as('one'))
              .where(sql.ref(`${table}.tenant_id`), '=', tenantId)
              .whereRef(sql.ref(`${table}.id`) as never, '=', 'list_members.object_id')
              .where(sql.ref(`${table}.deleted_at`), 'is', null)
              .where(matches()),
          ),
        ),
      )
      .execute();
    recalculated.push(list.id);
  }
  if (recalculated.length) {
    await tx.updateTable('lists').set({ recalculated_at: now }).where('tenant_id', '=', tenantId).where('id', 'in', recalculated).execute();
  }
  return { lists: recalculated.length, failed };
}

registerLoop(({ database, config, log }) => {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> | undefined;

  const run = () => {
    timer = undefined;
    pass = recalculateDirtyLists(database, nowIso(), log)
      .then((r) => {
        if (r.lists || r.failed) log.debug({ ...r }, 'dynamic lists recalculated');
      })
      .catch((err) => log.error({ err }, 'dynamic list pass failed'))
      .finally(() => {
        pass = undefined;
        if (!stopped) timer = setTimeout(run, config.dynamicListIntervalMs);
      });
  };
  // The first pass runs at once, so changes made while no worker ran are not left waiting an interval.
  timer = setTimeout(run, 0);

  return {
    name: 'dynamic-lists',
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await pass;
    },
  };
});
