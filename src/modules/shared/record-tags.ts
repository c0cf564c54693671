import { inIdSet, preparedByIdSet, selectInChunks } from '../../db/batch.js';
import type { Db } from '../../db/index.js';

/**
 * The tags carried by contacts, companies and deals (record_tags). Shared by those three resources, so
 * none of them imports the tags module's repo (which owns the tags themselves).
 */
export type TaggableType = 'contact' | 'company' | 'deal';
/**
 * The tables of the taggable records. Each row carries its tag ids in `tag_ids`, a sorted JSON array kept from
 * record_tags by the database (migration 013): a read takes a record and its tags from one row.
 */
export type TaggedTable = 'contacts' | 'companies' | 'deals';

/** Tag ids of each record, in a stable order. One query for a whole page of records. */
export async function tagIdsOf(db: Db, tenantId: string, objectType: TaggableType, objectIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (objectIds.length === 0) return out;
  for (const id of objectIds) out.set(id, []);
  const rows = await selectInChunks(objectIds, (chunk) =>
    db
      .selectFrom('record_tags')
      .select(['object_id', 'tag_id'])
      .where('tenant_id', '=', tenantId)
      .where('object_type', '=', objectType)
      .where('object_id', 'in', chunk)
      .execute(),
  );
  for (const r of rows) out.get(r.object_id)!.push(r.tag_id);
  // Sorted here, not by the database: PostgreSQL's collation orders mixed-case ids otherwise than
  // SQLite and than parseTagIds, and a record must read the same from a list and from a single read.
  for (const ids of out.values()) ids.sort();
  return out;
}

/**
 * The live records of `table` among a set of ids, with their tag ids (`tag_ids`): one
 * statement, compiled once, for any number of ids (the expansions of other records).
 */
export function liveTaggedByIds<R>(table: TaggedTable, columns: readonly string[]) {
  return preparedByIdSet((db: Db, tenantId: string, ids: unknown) =>
    db
      .selectFrom(table as 'contacts')
      .select([...columns, 'tag_ids'] as never)
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .where(inIdSet(db, 'id', ids)),
  ) as (db: Db, tenantId: string, ids: readonly string[]) => Promise<R[]>;
}

/** Parses a row's `tag_ids` (sorted, like tagIdsOf; the order a record's `tags` always have). */
export function parseTagIds(column: string): string[] {
  return column === '[]' ? [] : (JSON.parse(column) as string[]);
}

/** A record's `tags` as every read returns them, from the ids written (de-duplicated, sorted). */
export function sortedTagIds(tagIds: readonly string[]): string[] {
  return [...new Set(tagIds)].sort();
}

/** Replaces the whole tag set of a record (PATCH `tags` replaces the array, B.3). */
export async function replaceRecordTags(db: Db, tenantId: string, objectType: TaggableType, objectId: string, tagIds: string[]): Promise<void> {
  await db.deleteFrom('record_tags').where('tenant_id', '=', tenantId).where('object_type', '=', objectType).where('object_id', '=', objectId).execute();
  const unique = [...new Set(tagIds)];
  if (unique.length === 0) return;
  await db
    .insertInto('record_tags')
    .values(unique.map((tag_id) => ({ tenant_id: tenantId, object_type: objectType, object_id: objectId, tag_id })))
    .execute();
}

/** D.2: `to` carries every tag `from` carries too (the union; `from` keeps its own). */
export async function uniteRecordTags(db: Db, tenantId: string, objectType: TaggableType, from: string, to: string): Promise<void> {
  const have = new Set((await tagIdsOf(db, tenantId, objectType, [to])).get(to) ?? []);
  const add = ((await tagIdsOf(db, tenantId, objectType, [from])).get(from) ?? []).filter((t) => !have.has(t));
  if (add.length === 0) return;
  await db
    .insertInto('record_tags')
    .values(add.map((tag_id) => ({ tenant_id: tenantId, object_type: objectType, object_id: to, tag_id })))
    .execute();
}
