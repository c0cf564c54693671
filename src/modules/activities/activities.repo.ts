import { selectInChunks } from '../../db/batch.js';
import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../../db/index.js';
import { prepared } from '../../db/prepared.js';
import type { Reads } from '../../db/reads.js';
import type { ActivitiesTable } from '../../db/tables/records.js';
import type { DB } from '../../db/tables/schema.js';
import type { RelatedType } from './activities.schema.js';

const COLUMNS = [
  'id',
  'type',
  'title',
  'description',
  'due_date',
  'completed',
  'completed_at',
  'priority',
  'assigned_to_id',
  'owner_id',
  'created_at',
  'updated_at',
] as const;
export type ActivityRow = Pick<ActivitiesTable, (typeof COLUMNS)[number]>;
export interface LinkRow {
  activity_id: string;
  object_type: string;
  object_id: string;
}

const TABLE_OF = { contact: 'contacts', company: 'companies', deal: 'deals' } as const;

const findActivityQuery = prepared((db: Db, tenantId: string, id: string) =>
  db.selectFrom('activities').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id),
);

export async function findActivity(db: Db, tenantId: string, id: string): Promise<ActivityRow | undefined> {
  return (await findActivityQuery(db, tenantId, id))[0];
}

/** Activities of the tenant among `ids` (any order). */
export function findActivities(db: Db, tenantId: string, ids: string[]): Promise<ActivityRow[]> {
  return selectInChunks(ids, (chunk) => db.selectFrom('activities').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', 'in', chunk).execute());
}

export async function insertActivity(db: Db, row: ActivitiesTable): Promise<void> {
  await db.insertInto('activities').values(row).execute();
}

export async function updateActivity(db: Db, tenantId: string, id: string, set: Partial<ActivitiesTable>): Promise<void> {
  await db.updateTable('activities').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export async function deleteActivity(db: Db, tenantId: string, id: string): Promise<number> {
  await db.deleteFrom('activity_links').where('tenant_id', '=', tenantId).where('activity_id', '=', id).execute();
  const r = await db.deleteFrom('activities').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Replaces the links of one type of an activity, keeping the order given. */
export async function replaceLinks(db: Db, tenantId: string, activityId: string, objectType: RelatedType, ids: string[]): Promise<void> {
  await db.deleteFrom('activity_links').where('tenant_id', '=', tenantId).where('activity_id', '=', activityId).where('object_type', '=', objectType).execute();
  if (ids.length === 0) return;
  await db
    .insertInto('activity_links')
    .values(ids.map((object_id, position) => ({ tenant_id: tenantId, activity_id: activityId, object_type: objectType, object_id, position })))
    .execute();
}

// Links to soft-deleted records stay stored (the activity remains, B.6) but are never shown (B.3).
function linkedRecordAlive(eb: ExpressionBuilder<DB, 'activity_links'>) {
  return eb.and(
    (['contact', 'company', 'deal'] as const).map((type) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom(TABLE_OF[type])
            .select(sql.lit(1).as('one'))
            .whereRef(`${TABLE_OF[type]}.tenant_id`, '=', 'activity_links.tenant_id')
            .whereRef(`${TABLE_OF[type]}.id`, '=', 'activity_links.object_id')
            // A literal, not a parameter: linksOfOne is compiled once (db/prepared.ts).
            .where('activity_links.object_type', '=', sql.lit(type))
            .where(`${TABLE_OF[type]}.deleted_at`, 'is not', null),
        ),
      ),
    ),
  );
}

function visibleLinks(db: Db, tenantId: string) {
  return db
    .selectFrom('activity_links')
    .select(['activity_id', 'object_type', 'object_id'])
    .where('tenant_id', '=', tenantId)
    .where(linkedRecordAlive)
    .orderBy('activity_id')
    .orderBy('object_type')
    .orderBy('position');
}

/** The links of one activity (a single read, each write's answer): compiled once (db/prepared.ts). */
const linksOfOne = prepared((db: Db, tenantId: string, activityId: string) => visibleLinks(db, tenantId).where('activity_id', '=', activityId));

/** Visible links of the given activities, in their stored order. One query. */
export async function linksOf(db: Db, tenantId: string, activityIds: string[]): Promise<LinkRow[]> {
  if (activityIds.length === 0) return [];
  if (activityIds.length === 1) return linksOfOne(db, tenantId, activityIds[0]);
  return visibleLinks(db, tenantId).where('activity_id', 'in', activityIds).execute();
}

/** Activities linked to one record, newest first (id breaks ties). */
export function activitiesLinkedTo(reads: Reads, tenantId: string, objectType: RelatedType, objectId: string): Promise<ActivityRow[]> {
  return reads.all(
    reads.db
      .selectFrom('activities')
      .innerJoin('activity_links as l', (j) => j.onRef('l.tenant_id', '=', 'activities.tenant_id').onRef('l.activity_id', '=', 'activities.id'))
      .select(COLUMNS.map((c) => `activities.${c}` as const))
      .where('l.tenant_id', '=', tenantId)
      .where('l.object_type', '=', objectType)
      .where('l.object_id', '=', objectId)
      .orderBy('activities.created_at', 'desc')
      .orderBy('activities.id', 'desc'),
  );
}

/** Visible links of every activity linked to one record: one query, whatever the number of activities. */
export function linksOfActivitiesLinkedTo(reads: Reads, tenantId: string, objectType: RelatedType, objectId: string): Promise<LinkRow[]> {
  return reads.all(
    reads.db
      .selectFrom('activity_links')
      .select(['activity_id', 'object_type', 'object_id'])
      .where('tenant_id', '=', tenantId)
      .where('activity_id', 'in', (eb) =>
        eb
          .selectFrom('activity_links as o')
          .select('o.activity_id')
          .where('o.tenant_id', '=', tenantId)
          .where('o.object_type', '=', objectType)
          .where('o.object_id', '=', objectId),
      )
      .where(linkedRecordAlive)
      .orderBy('activity_id')
      .orderBy('object_type')
      .orderBy('position'),
  );
}

/** One UPDATE for a bulk completion; returns how many activities of the tenant matched. */
export async function setCompleted(db: Db, tenantId: string, ids: string[], completed: boolean, now: string): Promise<number> {
  const r = await db
    .updateTable('activities')
    .set({
      completed: completed ? 1 : 0,
      // Completing keeps the completedAt of activities already completed; reopening clears it.
      completed_at: completed ? sql<string>`case when completed = 1 and completed_at is not null then completed_at else ${now} end` : null,
      updated_at: now,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** One UPDATE for a bulk assignment; returns how many activities of the tenant matched. */
export async function setAssignee(db: Db, tenantId: string, ids: string[], assignedToId: string | null, now: string): Promise<number> {
  const r = await db
    .updateTable('activities')
    .set({ assigned_to_id: assignedToId, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** D.5: an erased contact leaves every activity it was linked to (the activities stay, with their other links). */
export async function unlinkContact(db: Db, tenantId: string, contactId: string): Promise<void> {
  await db.deleteFrom('activity_links').where('tenant_id', '=', tenantId).where('object_type', '=', 'contact').where('object_id', '=', contactId).execute();
}

/**
 * D.2: activities linked to `from` are linked to `to` instead, in the same place of their list (one linked to both
 * keeps `to` once); their updatedAt moves.
 */
export async function relinkActivities(db: Db, tenantId: string, objectType: 'contact' | 'company', from: string, to: string, now: string): Promise<void> {
  const linkedTo = async (objectId: string) =>
    (
      await db
        .selectFrom('activity_links')
        .select('activity_id')
        .where('tenant_id', '=', tenantId)
        .where('object_type', '=', objectType)
        .where('object_id', '=', objectId)
        .execute()
    ).map((r) => r.activity_id);
  const linked = await linkedTo(from);
  if (linked.length === 0) return;
  // The activities linked to both lose their link to `from`. Found here from both lists, each read by the links'
  // index, rather than by `activity_id in (select … where object_id = to)`: PostgreSQL, with statistics taken before
  // an import, planned that subquery as a loop over the table per link (1,000 links each side: 920 ms).
  const toLinked = new Set(await linkedTo(to));
  const both = linked.filter((id) => toLinked.has(id));
  for (let i = 0; i < both.length; i += 500) {
    await db
      .deleteFrom('activity_links')
      .where('tenant_id', '=', tenantId)
      .where('object_type', '=', objectType)
      .where('object_id', '=', from)
      .where('activity_id', 'in', both.slice(i, i + 500))
      .execute();
  }
  await db
    .updateTable('activity_links')
    .set({ object_id: to })
    .where('tenant_id', '=', tenantId)
    .where('object_type', '=', objectType)
    .where('object_id', '=', from)
    .execute();
  for (let i = 0; i < linked.length; i += 500) {
    await db
      .updateTable('activities')
      .set({ updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', linked.slice(i, i + 500))
      .execute();
  }
}
