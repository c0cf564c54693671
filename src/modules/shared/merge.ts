/**
 * CONTRACT D.2: `POST /contacts/merge` and `POST /companies/merge`, one piece for both. In one transaction: the
 * primary keeps every value it has and takes the merged record's where its own is empty (null, absent, `""`; a
 * unique one — e-mail, phone, CNPJ, domain — moves: the merged record reads null there), custom properties alike;
 * tags are united; every reference to the merged record points to the primary (the resource's `repoint`); the
 * merged record is soft-deleted with `merged_into_id` (its id answers 404 with `mergedIntoId`, never restorable);
 * one `<type>.merged` event with its audit entry. Re-pointed records' updatedAt moves; they raise no event.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { withTx } from '../../db/index.js';
import { anyRow, markMerged, mergedInto, updateLiveRow } from '../../db/live-rows.js';
import { setWithSearchText } from '../../db/search-text.js';
import type { Db } from '../../db/index.js';
import { errors, type ApiError } from '../../errors.js';
import { recordDiff } from '../../events/outbox.js';
import { ctxOf, inTx, type Ctx } from '../../http/context.js';
import { errorResponses } from '../../http/schemas.js';
import { nowIso } from '../../util/time.js';
import { markChanged, type ChangedType } from './changes.js';
import { recordEvent } from './record-change.js';
import { uniteRecordTags } from './record-tags.js';

export interface MergeableResource {
  path: 'contacts' | 'companies';
  type: 'contact' | 'company';
  tag: string;
  /** `Contact`, `Company`. */
  noun: string;
  schema: TSchema;
  /** Columns the primary takes from the merged record where its own is empty; `unique` ones move. */
  fill: readonly string[];
  unique: readonly string[];
  /** Every column the search text is made of (db/search-text.ts SEARCH_SOURCES). */
  searched: readonly string[];
  /** The record as its single read answers it. */
  read: (ctx: Ctx, id: string) => Promise<object>;
  /** Makes every reference to `from` point to `to` (their updatedAt moves, no event); the types whose records moved. */
  repoint: (ctx: Ctx, from: string, to: string, now: string) => Promise<ChangedType[]>;
}

export interface MergeBody {
  primaryId: string;
  mergedId: string;
}

const isEmpty = (v: unknown) => v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);

/** The primary's custom properties with the merged record's where the primary's is empty. */
function mergedCustom(primary: string, merged: string): string {
  const p = JSON.parse(primary) as Record<string, unknown>;
  const m = JSON.parse(merged) as Record<string, unknown>;
  let changed = false;
  for (const [k, v] of Object.entries(m)) {
    if (isEmpty(p[k]) && !isEmpty(v)) {
      p[k] = v;
      changed = true;
    }
  }
  return changed ? JSON.stringify(p) : primary;
}

/** The 404 of a missing contact or company: with `mergedIntoId` when a merge folded it into another (D.2). */
export async function notFoundOrMerged(db: Db, table: 'contacts' | 'companies', tenantId: string, id: string, what: string): Promise<ApiError> {
  const into = await mergedInto(db, table, tenantId, id);
  return into ? errors.mergedAway(what, into) : errors.notFound(what);
}

export async function mergeRecords(ctx: Ctx, r: MergeableResource, body: MergeBody): Promise<object> {
  const { primaryId, mergedId } = body;
  if (primaryId === mergedId) throw errors.field('mergedId', 'must name another record than primaryId');
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const columns = [...new Set([...r.fill, ...r.searched, 'custom_properties'])];
    const live = async (field: string, id: string) => {
      const row = await anyRow(tx, r.path, ctx.tenantId, id, columns);
      if (!row || row.deleted_at !== null) throw errors.refNotFound(field, id);
      return row;
    };
    const primary = await live('primaryId', primaryId);
    const merged = await live('mergedId', mergedId);
    const before = (await r.read(c, primaryId)) as Record<string, unknown>;
    const mergedBefore = await r.read(c, mergedId);
    const set: Record<string, unknown> = {};
    const released: Record<string, null> = {};
    for (const col of r.fill) {
      if (!isEmpty(primary[col]) || isEmpty(merged[col])) continue;
      set[col] = merged[col];
      if (r.unique.includes(col)) released[col] = null;
    }
    const custom = mergedCustom(String(primary.custom_properties), String(merged.custom_properties));
    if (custom !== primary.custom_properties) set.custom_properties = custom;
    const now = nowIso();
    // The merged record lets go of the unique values the primary takes, then is folded (soft-deleted), so that
    // the primary can hold them (the unique indexes count live rows only).
    if (Object.keys(released).length > 0)
      await updateLiveRow(tx, r.path, ctx.tenantId, mergedId, setWithSearchText(r.path, released, merged as never) as never);
    await markMerged(tx, r.path, ctx.tenantId, mergedId, primaryId, now);
    await updateLiveRow(tx, r.path, ctx.tenantId, primaryId, setWithSearchText(r.path, { ...set, updated_at: now } as never, primary as never) as never);
    await uniteRecordTags(tx, ctx.tenantId, r.type, mergedId, primaryId);
    const moved = await r.repoint(c, mergedId, primaryId, now);
    const after = (await r.read(c, primaryId)) as Record<string, unknown>;
    await recordEvent(tx, ctx, `${r.type}.merged`, after, { mergedId, merged: mergedBefore, ...recordDiff(before, after) });
    for (const type of new Set<ChangedType>([r.type, ...moved])) await markChanged(tx, ctx.tenantId, type);
    return after;
  });
}

/** Registers `POST /<path>/merge` (scope `<path>:write`), which runs `merge` (the resource's mergeRecords). */
export function registerMergeRoute(app: FastifyInstance, r: MergeableResource, merge: (ctx: Ctx, body: MergeBody) => Promise<object>): void {
  const noun = r.noun.toLowerCase();
  const id = (what: string) => Type.String({ minLength: 1, maxLength: 255, description: what });
  app.post(
    `/${r.path}/merge`,
    {
      config: { scopes: [`${r.path}:write`] },
      schema: {
        operationId: `merge${r.tag}`,
        tags: [r.tag],
        summary: `Merge two ${r.path}`,
        description:
          `Requires scope \`${r.path}:write\`. Folds \`mergedId\` into \`primaryId\` in one transaction, and answers 200 with the primary as \`GET /${r.path}/:id\` answers it afterwards. ` +
          `Every field and custom property keeps the primary's value; where the primary's is empty (\`null\`, absent, \`""\`) the merged ${noun}'s is taken (a unique value moves: the merged ${noun} reads \`null\` there). \`tags\` is the union. ` +
          `Every reference to the merged ${noun} points to the primary afterwards (their \`updatedAt\` moves; they raise no events of their own). ` +
          `The merged ${noun} is deleted with \`mergedIntoId\`: its id answers 404 \`not_found\` with \`mergedIntoId\`, \`includeDeleted=true\` lists it, and it can never be restored. ` +
          `One \`${r.type}.merged\` event: \`data\` holds the primary after, \`mergedId\`, \`merged\` (the merged ${noun} as it was), \`changes\` and \`previous\`. ` +
          '`primaryId` equal to `mergedId`: 400 `validation_failed`; either one missing or deleted: 404 `not_found` naming the field.',
        body: Type.Object({ primaryId: id(`The ${noun} that stays`), mergedId: id(`The ${noun} folded into it`) }, { additionalProperties: false }),
        response: { 200: r.schema, ...errorResponses(400, 404) },
      },
    },
    async (req) => merge(ctxOf(req), req.body as MergeBody),
  );
}
