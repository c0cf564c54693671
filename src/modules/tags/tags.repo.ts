import type { Db } from '../../db/index.js';
import type { Reads } from '../../db/reads.js';
import type { SqlDialect } from '../../db/dialect.js';
import { searchMatches } from '../../db/dialect.js';
import { setWithSearchText, withSearchText } from '../../db/search-text.js';
import type { TagsTable } from '../../db/tables/records.js';

const COLUMNS = ['id', 'name', 'color', 'created_at', 'updated_at'] as const;
export type TagRow = Pick<TagsTable, (typeof COLUMNS)[number]>;

export function findTag(db: Db, tenantId: string, id: string): Promise<TagRow | undefined> {
  return db.selectFrom('tags').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export function listTags(reads: Reads, _dialect: SqlDialect, tenantId: string, search?: string): Promise<TagRow[]> {
  let q = reads.db.selectFrom('tags').select(COLUMNS).where('tenant_id', '=', tenantId);
  // The name, folded (db/search-text.ts).
  if (search) q = q.where(searchMatches('search_text', search));
  return reads.all(q.orderBy('name_key').orderBy('id'));
}

/** A tag as services write it; the repo adds `search_text`. */
export type NewTagRow = Omit<TagsTable, 'search_text'>;
/** The SET of an update; the repo recomputes `search_text` from it. */
export type TagChanges = Partial<NewTagRow>;

export async function insertTag(db: Db, row: NewTagRow): Promise<void> {
  await db.insertInto('tags').values(withSearchText('tags', row)).execute();
}

/** Updates a tag; `current` is the row before (its name refreshes `search_text`). */
export async function updateTag(db: Db, tenantId: string, id: string, set: TagChanges, current: TagRow): Promise<void> {
  await db
    .updateTable('tags')
    .set(setWithSearchText('tags', set, current))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
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
