import { guardUnique } from '../../db/errors.js';
import { withTx } from '../../db/index.js';
import { errors } from '../../errors.js';
import { inTx, type Ctx } from '../../http/context.js';
import type { ValueRules } from '../../http/validation.js';
import { newId } from '../../util/ids.js';
import { nowIso } from '../../util/time.js';
import * as repo from './tags.repo.js';
import { DEFAULT_TAG_COLOR, type TagCreateT, type TagT, type TagUpdateT } from './tags.schema.js';
import { forEachChunk } from '../../db/batch.js';
import { markChanged } from '../shared/changes.js';
import { recordEvent, recordUpdated } from '../shared/record-change.js';
import { sortedTagIds } from '../shared/record-tags.js';
import { recordsOf, type RecordReaders } from '../shared/records.js';

const TABLE_OF = { contact: 'contacts', company: 'companies', deal: 'deals' } as const;

export function toTag(r: repo.TagRow): TagT {
  return { id: r.id, name: r.name, color: r.color, createdAt: r.created_at, updatedAt: r.updated_at };
}

const nameKey = (name: string) => name.trim().normalize('NFC').toLowerCase();

function cleanName(name: string): string {
  const n = name.trim();
  if (!n) throw errors.field('name', 'must not be blank');
  return n;
}

/** The value rules of a tag body (C.5), run on a body whose shape is refused too. */
export const TAG_VALUE_RULES = { name: cleanName } satisfies ValueRules;

export async function listTags(ctx: Ctx, search?: string): Promise<TagT[]> {
  return (await repo.listTags(ctx.reads, ctx.dialect, ctx.tenantId, search)).map(toTag);
}

export async function getTag(ctx: Ctx, id: string): Promise<TagT> {
  const row = await repo.findTag(ctx.db, ctx.tenantId, id);
  if (!row) throw errors.notFound('Tag not found');
  return toTag(row);
}

export async function createTag(ctx: Ctx, input: TagCreateT): Promise<TagT> {
  const name = cleanName(input.name);
  const now = nowIso();
  const row = {
    tenant_id: ctx.tenantId,
    id: newId('tag'),
    name,
    name_key: nameKey(name),
    color: (input.color ?? DEFAULT_TAG_COLOR).toLowerCase(),
    created_at: now,
    updated_at: now,
  };
  return withTx(ctx.db, async (tx) => {
    await guardUnique(tx, ctx.tenantId, { name_key: row.name_key }, () => repo.insertTag(tx, row), { name_key: name });
    const tag = toTag(row);
    await recordEvent(tx, ctx, 'tag.created', tag);
    return tag;
  });
}

export async function updateTag(ctx: Ctx, id: string, input: TagUpdateT): Promise<TagT> {
  const set: repo.TagChanges = {};
  if (input.name !== undefined) {
    set.name = cleanName(input.name);
    set.name_key = nameKey(set.name);
  }
  if (input.color !== undefined) set.color = input.color.toLowerCase();
  return withTx(ctx.db, async (tx) => {
    const current = await repo.findTag(tx, ctx.tenantId, id);
    if (!current) throw errors.notFound('Tag not found');
    if (Object.keys(set).length === 0) return toTag(current);
    set.updated_at = nowIso();
    await guardUnique(tx, ctx.tenantId, { name_key: set.name_key }, () => repo.updateTag(tx, ctx.tenantId, id, set, current), { name_key: set.name });
    const tag = await getTag(inTx(ctx, tx), id);
    await recordUpdated(tx, ctx, 'tag.updated', toTag(current), tag);
    return tag;
  });
}

/**
 * Removes the tag and its associations; tagged records remain and their updatedAt moves (B.3). `readers`
 * read the tagged records whose `*.updated` it raises.
 */
export async function deleteTag(ctx: Ctx, id: string, readers: RecordReaders): Promise<void> {
  await withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const last = await getTag(c, id);
    const tagged = await repo.taggedRecords(tx, ctx.tenantId, id);
    const deleted = await repo.deleteTag(tx, ctx.tenantId, id);
    if (!deleted) throw errors.notFound('Tag not found');
    await recordEvent(tx, ctx, 'tag.deleted', last);
    await repo.removeTagLinks(tx, ctx.tenantId, id);
    const now = nowIso();
    for (const type of ['contact', 'company', 'deal'] as const) {
      const ids = tagged.filter((t) => t.object_type === type).map((t) => t.object_id);
      if (ids.length === 0) continue;
      await forEachChunk(ids, (chunk) =>
        tx.updateTable(TABLE_OF[type]).set({ updated_at: now }).where('tenant_id', '=', ctx.tenantId).where('id', 'in', chunk).execute(),
      );
      // Tag filters of searches, dynamic lists and cached totals see the change.
      await markChanged(tx, ctx.tenantId, type);
    }
    // B.9, C.4: a tag change on a record is its `*.updated` (changes: tags), whichever endpoint made it.
    for (const type of ['contact', 'company', 'deal'] as const) {
      const ids = tagged.filter((t) => t.object_type === type).map((t) => t.object_id);
      for (const record of (await recordsOf(readers[type], c, ids)).values()) {
        const tags = record.tags as string[];
        await recordUpdated(tx, ctx, `${type}.updated`, { ...record, tags: sortedTagIds([...tags, id]) }, record, ['contact', 'company']);
      }
    }
  });
}

/**
 * Checks that every id of a record's `tags` names a tag of the tenant; 404 naming `tags[i]` otherwise
 * (B.2). Used by contacts, companies and deals.
 */
export async function assertTagsExist(ctx: Ctx, tagIds: string[]): Promise<void> {
  const found = await repo.existingTagIds(ctx.db, ctx.tenantId, [...new Set(tagIds)]);
  const missing = tagIds.findIndex((t) => !found.has(t));
  if (missing >= 0) throw errors.refNotFound(`tags[${missing}]`, tagIds[missing]);
}
