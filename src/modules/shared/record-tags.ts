import { sql, type SelectQueryBuilder } from 'kysely';
import { inIdSet, preparedByIdSet, selectInChunks } from '../../db/batch.js';
import type { Db } from '../../db/index.js';
import type { SqlDialect } from '../../db/dialect.js';

/**
 * The tags carried by contacts, companies and deals (record_tags). Shared by those three resources, so
 * none of them imports the tags module's repo (which owns the tags themselves).
 */
export type TaggableType = 'contact' | 'company' | 'deal';

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
 * The tag ids of the outer query's record as one comma-separated column (null when none): lets a single
 * read fetch the record and its tags in one statement. `string_agg` exists on PostgreSQL and SQLite ≥ 3.44.
 */
export function tagIdsColumn(objectType: TaggableType, table: 'contacts' | 'companies' | 'deals') {
  return sql<string | null>`(select string_agg(rt.tag_id, ',') from record_tags rt where rt.tenant_id = ${sql.ref(`${table}.tenant_id`)} and rt.object_type = ${sql.lit(objectType)} and rt.object_id = ${sql.ref(`${table}.id`)})`;
}

/**
 * The tag ids of the outer query's record as a sorted JSON array (`[]` when none), to embed in the record's
 * JSON (http/replies.ts sendJsonText): the `tags` of every read. Sorted by code point, as parseTagIds sorts the ids
 * (they are ASCII: newId).
 */
export function tagIdsJson(dialect: SqlDialect, objectType: TaggableType, table: 'contacts' | 'companies' | 'deals') {
  return dialect.jsonArrayOf(
    'rt.tag_id',
    sql`from record_tags rt where rt.tenant_id = ${sql.ref(`${table}.tenant_id`)} and rt.object_type = ${sql.lit(objectType)} and rt.object_id = ${sql.ref(`${table}.id`)}`,
  );
}

/** A page's tags as `tag_ids` (tagIdsColumn), computed per row of the page (listing.ts ListingQuery.perRow). */
export function tagIdsPerRow(objectType: TaggableType, table: 'contacts' | 'companies' | 'deals') {
  return { table, select: <Q extends SelectQueryBuilder<any, any, any>>(qb: Q) => qb.select(tagIdsColumn(objectType, table).as('tag_ids')) };
}

/**
 * The live records of `table` among a set of ids, with their tag ids (`tag_ids`, as tagIdsColumn): one
 * statement, compiled once, for any number of ids (the expansions of other records).
 */
export function liveTaggedByIds<R>(table: 'contacts' | 'companies' | 'deals', objectType: TaggableType, columns: readonly string[]) {
  return preparedByIdSet((db: Db, tenantId: string, ids: unknown) =>
    db
      .selectFrom(table as 'contacts')
      .select(columns as never)
      .select(tagIdsColumn(objectType, table).as('tag_ids'))
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .where(inIdSet(db, 'id', ids)),
  ) as (db: Db, tenantId: string, ids: readonly string[]) => Promise<R[]>;
}

/** Parses `tagIdsColumn` (sorted, like tagIdsOf; the order a record's `tags` always have). */
export function parseTagIds(column: string | null): string[] {
  return column ? column.split(',').sort() : [];
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
