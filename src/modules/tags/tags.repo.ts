import type { Db } from '../../db/index.js';
import type { Reads } from '../../db/reads.js';
import type { SqlDialect } from '../../db/dialect.js';
import { containsInsensitive } from '../../db/dialect.js';
import type { TagsTable } from '../../db/tables/records.js';
import { selectInChunks } from '../../db/batch.js';
import { sql } from 'kysely';

export type TaggableType = 'contact' | 'company' | 'deal';
const COLUMNS = ['id', 'name', 'color', 'created_at', 'updated_at'] as const;
export type TagRow = Pick<TagsTable, (typeof COLUMNS)[number]>;

export function findTag(db: Db, tenantId: string, id: string): Promise<TagRow | undefined> {
  return db.selectFrom('tags').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export function listTags(reads: Reads, _dialect: SqlDialect, tenantId: string, search?: string): Promise<TagRow[]> {
  let q = reads.db.selectFrom('tags').select(COLUMNS).where('tenant_id', '=', tenantId);
  if (search) q = q.where(containsInsensitive('name', search));
  return reads.all(q.orderBy('name_key').orderBy('id'));
}

export async function insertTag(db: Db, row: TagsTable): Promise<void> {
  await db.insertInto('tags').values(row).execute();
}

export async function updateTag(db: Db, tenantId: string, id: string, set: Partial<TagsTable>): Promise<void> {
  await db.updateTable('tags').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export async function deleteTag(db: Db, tenantId: string, id: string): Promise<number> {
  const r = await db.deleteFrom('tags').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Records carrying a tag, by type (used to move their updatedAt when the tag goes). */
export async function taggedRecords(db: Db, tenantId: string, tagId: string): Promise<{ object_type: string; object_id: string }[]> {
  return db.selectFrom('record_tags').select(['object_type', 'object_id']).where('tenant_id', '=', tenantId).where('tag_id', '=', tagId).execute();
}

export async function removeTagLinks(db: Db, tenantId: string, tagId: string): Promise<void> {
  await db.deleteFrom('record_tags').where('tenant_id', '=', tenantId).where('tag_id', '=', tagId).execute();
}

/** Which of `ids` are tags of the tenant. */
export async function existingTagIds(db: Db, tenantId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('tags').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

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
      .orderBy('object_id')
      .orderBy('tag_id')
      .execute(),
  );
  for (const r of rows) out.get(r.object_id)!.push(r.tag_id);
  return out;
}

/**
 * The tag ids of the outer query's record as one comma-separated column (null when none): lets a single
 * read fetch the record and its tags in one statement. `string_agg` exists on PostgreSQL and SQLite ≥ 3.44.
 */
export function tagIdsColumn(objectType: TaggableType, table: 'contacts' | 'companies' | 'deals') {
  return sql<string | null>`(select string_agg(rt.tag_id, ',') from record_tags rt where rt.tenant_id = ${sql.ref(`${table}.tenant_id`)} and rt.object_type = ${sql.lit(objectType)} and rt.object_id = ${sql.ref(`${table}.id`)})`;
}

/** Parses `tagIdsColumn` (sorted, like tagIdsOf). */
export function parseTagIds(column: string | null): string[] {
  return column ? column.split(',').sort() : [];
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
