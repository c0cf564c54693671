import type { Db } from '../../db/index.js';
import type { Reads } from '../../db/reads.js';
import type { ListsTable } from '../../db/tables/records.js';
import type { ListObjectType } from './lists.schema.js';
import { softDeleteRow, updateLiveRow } from '../../db/live-rows.js';
import type { Listing, SortColumn } from '../../listing/descriptor.js';

const COLUMNS = ['id', 'name', 'object_type', 'kind', 'description', 'filters', 'created_at', 'updated_at'] as const;
export type ListRow = Pick<ListsTable, (typeof COLUMNS)[number]>;

/** The table of each list object type; member rows only count while their record is not soft-deleted. */
export const RECORD_TABLE = { contact: 'contacts', company: 'companies', deal: 'deals' } as const;

export function findList(db: Db, tenantId: string, id: string): Promise<ListRow | undefined> {
  return db.selectFrom('lists').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

export function listLists(db: Db, tenantId: string, objectType?: ListObjectType): Promise<ListRow[]> {
  let q = db.selectFrom('lists').select(COLUMNS).where('tenant_id', '=', tenantId).where('deleted_at', 'is', null);
  if (objectType) q = q.where('object_type', '=', objectType);
  return q.orderBy('created_at').orderBy('id').execute();
}

export async function insertList(db: Db, row: ListsTable): Promise<void> {
  await db.insertInto('lists').values(row).execute();
}

export function updateList(db: Db, tenantId: string, id: string, set: Partial<ListsTable>): Promise<number> {
  return updateLiveRow(db, 'lists', tenantId, id, set);
}

export function softDeleteList(db: Db, tenantId: string, id: string, now: string): Promise<number> {
  return softDeleteRow(db, 'lists', tenantId, id, now);
}

/**
 * Live member counts of lists of one object type: one grouped query joining the records, so a
 * soft-deleted record stops counting the moment it is deleted.
 */
export async function memberCounts(reads: Reads, tenantId: string, objectType: ListObjectType, listIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (listIds.length === 0) return out;
  const table = RECORD_TABLE[objectType];
  const rows = await reads.all(
    reads.db
      .selectFrom('list_members as m')
      .innerJoin(`${table} as r` as 'contacts as r', (j) => j.onRef('r.tenant_id', '=', 'm.tenant_id').onRef('r.id', '=', 'm.object_id'))
      .select(['m.list_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('m.tenant_id', '=', tenantId)
      .where('m.list_id', 'in', listIds)
      .where('r.deleted_at', 'is', null)
      .groupBy('m.list_id'),
  );
  for (const r of rows) out.set(r.list_id, Number(r.n));
  return out;
}

/**
 * The visible members of a list (FROM … WHERE, no selection): soft-deleted records are skipped. Their
 * fixed order is when they joined, then id (MEMBER_SORT).
 */
function memberListing(db: Db, tenantId: string, listId: string, objectType: ListObjectType) {
  const table = RECORD_TABLE[objectType];
  const base = db
    .selectFrom('list_members as m')
    .innerJoin(`${table} as r` as 'contacts as r', (j) => j.onRef('r.tenant_id', '=', 'm.tenant_id').onRef('r.id', '=', 'm.object_id'))
    .where('m.tenant_id', '=', tenantId)
    .where('m.list_id', '=', listId)
    .where('r.deleted_at', 'is', null);
  return { base, select: (qb: typeof base) => qb.select('m.object_id') };
}

const MEMBER_SORT: SortColumn = { column: 'm.created_at', nullable: false };

/** The members of a list (GET /lists/:id/members): their ids, in the order they joined. */
export const MEMBER_LISTING: Listing<{ listId: string; objectType: ListObjectType }, 'joinedAt'> = {
  sort: { joinedAt: MEMBER_SORT },
  query: (db, tenantId, f) => memberListing(db, tenantId, f.listId, f.objectType),
  idColumn: 'm.object_id',
};

/** True when the record is a member and not soft-deleted. */
export async function isVisibleMember(db: Db, tenantId: string, listId: string, objectType: ListObjectType, objectId: string): Promise<boolean> {
  const table = RECORD_TABLE[objectType];
  const row = await db
    .selectFrom('list_members as m')
    .innerJoin(`${table} as r` as 'contacts as r', (j) => j.onRef('r.tenant_id', '=', 'm.tenant_id').onRef('r.id', '=', 'm.object_id'))
    .select('m.object_id')
    .where('m.tenant_id', '=', tenantId)
    .where('m.list_id', '=', listId)
    .where('m.object_id', '=', objectId)
    .where('r.deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Adds members, ignoring those already there; returns the ids that were new. */
export async function addMembers(db: Db, tenantId: string, listId: string, objectIds: string[], now: string): Promise<string[]> {
  const added: string[] = [];
  for (let i = 0; i < objectIds.length; i += 500) {
    const chunk = objectIds.slice(i, i + 500);
    const rows = await db
      .insertInto('list_members')
      .values(chunk.map((object_id) => ({ tenant_id: tenantId, list_id: listId, object_id, created_at: now })))
      .onConflict((oc) => oc.columns(['tenant_id', 'list_id', 'object_id']).doNothing())
      .returning('object_id')
      .execute();
    added.push(...rows.map((r) => r.object_id));
  }
  return added;
}

export async function removeMember(db: Db, tenantId: string, listId: string, objectId: string): Promise<number> {
  const r = await db
    .deleteFrom('list_members')
    .where('tenant_id', '=', tenantId)
    .where('list_id', '=', listId)
    .where('object_id', '=', objectId)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** D.2: the static lists `from` belongs to hold `to` instead (a list holding both keeps `to`, once). */
export async function moveMemberships(db: Db, tenantId: string, from: string, to: string): Promise<void> {
  const both = db.selectFrom('list_members').select('list_id').where('tenant_id', '=', tenantId).where('object_id', '=', to);
  await db.deleteFrom('list_members').where('tenant_id', '=', tenantId).where('object_id', '=', from).where('list_id', 'in', both).execute();
  await db.updateTable('list_members').set({ object_id: to }).where('tenant_id', '=', tenantId).where('object_id', '=', from).execute();
}
