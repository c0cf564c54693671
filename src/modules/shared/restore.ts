/**
 * CONTRACT D.1: `POST /<resource>/:id/restore` for every resource with soft delete (contacts, companies, deals,
 * proposals, lists), one piece for all five: each resource's routes file registers it with its own descriptor.
 */
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { guardUnique } from '../../db/errors.js';
import { withTx } from '../../db/index.js';
import { anyRow, clearDeadReference, mergedInto, restoreRow, type SoftDeleteTable } from '../../db/live-rows.js';
import { errors } from '../../errors.js';
import { recordEvent } from './record-change.js';
import type { EventType } from '../../events/catalog.js';
import { ctxOf, inTx, type Ctx } from '../../http/context.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { nowIso } from '../../util/time.js';
import { markChanged, type ChangedType } from './changes.js';

const DAY_MS = 86_400_000;

/** What restore needs of a resource. */
export interface RestorableResource {
  path: SoftDeleteTable;
  type: 'contact' | 'company' | 'deal' | 'proposal' | 'list';
  /** The OpenAPI tag of its routes, and its name in messages (`Contact`). */
  tag: string;
  noun: string;
  /** The record's schema (the single read's). */
  schema: TSchema;
  /**
   * Columns under a unique index among live rows: a value that a live record took meanwhile answers the create's
   * error for it (db/errors.ts UNIQUE_CONFLICTS: 409 `duplicate_email` with `existingContactId`, …), nothing restored.
   */
  unique?: readonly string[];
  /** References that another record's deletion clears on live rows (`company_id` → companies): cleared at restore when that record is not live. */
  references?: readonly { column: string; target: SoftDeleteTable }[];
  /** The record as its single read answers it (read in the restore's transaction). */
  read: (ctx: Ctx, id: string) => Promise<object>;
}

/**
 * Brings back a record deleted within RESTORE_WINDOW_DAYS: `deletedAt` gone, `updatedAt` moved, and its
 * `<type>.restored` event in the same transaction. Its tag links and static-list memberships were never removed
 * (a deletion only hides them), so they show again; references that other deletions cleared stay cleared.
 * Not deleted → 409 `not_deleted`; missing, another tenant's or deleted longer ago than the window → 404.
 */
export async function restoreRecord(ctx: Ctx, r: RestorableResource, id: string): Promise<object> {
  const since = new Date(Date.now() - ctx.config.restoreWindowDays * DAY_MS).toISOString();
  const notFound = () => errors.notFound(`${r.noun} not found`);
  return withTx(ctx.db, async (tx) => {
    const unique = r.unique ?? [];
    const row = await anyRow(tx, r.path, ctx.tenantId, id, unique);
    if (!row) throw notFound();
    if (row.deleted_at === null) throw errors.notDeleted(r.noun.toLowerCase());
    // A record a merge folded into another (D.2) can never come back.
    if ((r.path === 'contacts' || r.path === 'companies') && (await mergedInto(tx, r.path, ctx.tenantId, id))) throw notFound();
    const values = Object.fromEntries(unique.map((c) => [c, row[c] as string | null]));
    const restored = await guardUnique(tx, ctx.tenantId, values, () => restoreRow(tx, r.path, ctx.tenantId, id, since, nowIso()));
    if (!restored) throw notFound(); // deleted longer ago than the window
    for (const { column, target } of r.references ?? []) await clearDeadReference(tx, r.path, ctx.tenantId, id, column, target);
    const record = await r.read(inTx(ctx, tx), id);
    await recordEvent(tx, ctx, `${r.type}.restored` as EventType, record as Record<string, unknown>);
    if (r.type === 'contact' || r.type === 'company' || r.type === 'deal') await markChanged(tx, ctx.tenantId, r.type satisfies ChangedType);
    return record;
  });
}

/** What a restore brings back beside the record, by resource (for its reference). */
const COMES_BACK: Record<SoftDeleteTable, string> = {
  contacts: 'Its tags and static-list memberships show again. ',
  companies: 'Its tags and static-list memberships show again. ',
  deals: 'Its tags and static-list memberships show again. ',
  lists: 'Its members show again. ',
  proposals: '',
};

/** Registers `POST /<path>/:id/restore` (scope `<path>:write`). */
export function registerRestoreRoute(app: FastifyInstance, r: RestorableResource): void {
  const duplicate = r.path === 'proposals' ? [400] : [];
  app.post(
    `/${r.path}/:id/restore`,
    {
      config: { scopes: [`${r.path}:write`] },
      schema: {
        operationId: `restore${r.noun}`,
        tags: [r.tag],
        summary: `Restore a deleted ${r.noun.toLowerCase()}`,
        description:
          `Requires scope \`${r.path}:write\`. Brings back a ${r.noun.toLowerCase()} deleted within the restore window (90 days unless the operator set another): 200 with it as ` +
          `\`GET /${r.path}/:id\` answers it (\`updatedAt\` moves), and a \`${r.type}.restored\` event. ${COMES_BACK[r.path]}References that other deletions cleared meanwhile stay ` +
          `cleared. Not deleted: 409 \`not_deleted\`. Missing, deleted longer ago than the ` +
          `window, or purged: 404 \`not_found\`.` +
          (r.unique?.length ? ' A unique value a live record took meanwhile: the create’s duplicate error naming that record, nothing restored.' : ''),
        params: IdParams,
        response: { 200: r.schema, ...errorResponses(...duplicate, 404, 409) },
      },
    },
    async (req) => restoreRecord(ctxOf(req), r, (req.params as { id: string }).id),
  );
}
