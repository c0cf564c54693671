import { withTx, type Db } from '../../db/index.js';
import { normalizeIsoDateTime } from '../../domain/dates.js';
import { DomainError } from '../../domain/errors.js';
import { sanitizeHtml } from '../../domain/html.js';
import { errors, FieldChecks } from '../../errors.js';
import { inTx, type Ctx } from '../../http/context.js';
import type { ValueRules } from '../../http/validation.js';
import { newId } from '../../util/ids.js';
import { nowIso } from '../../util/time.js';
import { assertRefArray, existingIds, type RefKind } from '../shared/refs.js';
import { recordEvent, recordUpdated } from '../shared/record-change.js';
import * as repo from './activities.repo.js';
import {
  RELATED_TYPES,
  type ActivityCreateT,
  type ActivityT,
  type ActivityUpdateT,
  type BulkAssignT,
  type BulkCompleteT,
  type RelatedType,
} from './activities.schema.js';

const LINK_FIELDS = { contact: 'contactIds', company: 'companyIds', deal: 'dealIds' } as const;
const notFound = () => errors.notFound('Activity not found');

function toActivity(r: repo.ActivityRow, links: repo.LinkRow[]): ActivityT {
  const ids = (type: RelatedType) => links.filter((l) => l.object_type === type).map((l) => l.object_id);
  return {
    id: r.id,
    type: r.type as ActivityT['type'],
    title: r.title,
    description: r.description,
    dueDate: r.due_date,
    completed: r.completed === 1,
    completedAt: r.completed_at,
    priority: r.priority as ActivityT['priority'],
    assignedToId: r.assigned_to_id,
    ownerId: r.owner_id,
    contactIds: ids('contact'),
    companyIds: ids('company'),
    dealIds: ids('deal'),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function assemble(rows: repo.ActivityRow[], links: repo.LinkRow[]): ActivityT[] {
  const byActivity = new Map<string, repo.LinkRow[]>(rows.map((r) => [r.id, []]));
  for (const l of links) byActivity.get(l.activity_id)?.push(l);
  return rows.map((r) => toActivity(r, byActivity.get(r.id)!));
}

export async function getActivity(ctx: Ctx, id: string): Promise<ActivityT> {
  const row = await repo.findActivity(ctx.db, ctx.tenantId, id);
  if (!row) throw notFound();
  return assemble([row], await repo.linksOf(ctx.db, ctx.tenantId, [id]))[0];
}

/** Activities of the tenant among `ids`, by id, as single reads return them (two statements). */
async function activitiesByIds(ctx: Ctx, ids: string[]): Promise<Map<string, ActivityT>> {
  const rows = await repo.findActivities(ctx.db, ctx.tenantId, ids);
  const activities = assemble(
    rows,
    await repo.linksOf(
      ctx.db,
      ctx.tenantId,
      rows.map((r) => r.id),
    ),
  );
  return new Map(activities.map((a) => [a.id, a]));
}

/**
 * `GET /activities?relatedType&relatedId` (spec 4.2, B.6): every activity linked to the record, newest
 * first, not paginated; 404 when the record is missing or soft-deleted. Two queries in all.
 */
export async function listRelated(ctx: Ctx, relatedType: RelatedType, relatedId: string): Promise<ActivityT[]> {
  const kind: RefKind = relatedType;
  if (!(await existingIds(ctx.db, ctx.tenantId, kind, [relatedId])).has(relatedId)) {
    throw errors.notFound(`relatedId: ${relatedType} not found`);
  }
  const rows = await repo.activitiesLinkedTo(ctx.reads, ctx.tenantId, relatedType, relatedId);
  if (rows.length === 0) return [];
  return assemble(rows, await repo.linksOfActivitiesLinkedTo(ctx.reads, ctx.tenantId, relatedType, relatedId));
}

// ---------------------------------------------------------------------------------------------
// Field rules

function cleanTitle(title: string): string {
  const t = title.trim();
  if (!t) throw errors.field('title', 'must not be blank');
  return t;
}

/** Spec 7: `dueDate` / `completedAt` not ISO 8601 → 400 `invalid_format` naming the field. */
function instant(field: 'dueDate' | 'completedAt', s: string | null | undefined): string | null | undefined {
  if (s === null || s === undefined) return s;
  try {
    return normalizeIsoDateTime(s);
  } catch (err) {
    if (err instanceof DomainError) throw errors.invalidFormat(field, err.message);
    throw err;
  }
}

/** The value rules of an activity body (C.5), run on a body whose shape is refused too. */
export const ACTIVITY_VALUE_RULES = {
  title: cleanTitle,
  dueDate: (v: string) => instant('dueDate', v),
  completedAt: (v: string) => instant('completedAt', v),
} satisfies ValueRules;

const description = (d: string | null | undefined) => (d === null || d === undefined ? d : sanitizeHtml(d));

/**
 * Completion (spec 3.3, B.6): `completed: true` without `completedAt` sets now (an activity already
 * completed keeps its time); `completed: false` clears it; a given `completedAt` is kept.
 * NOTE: spec gap — `completedAt` on an activity that ends up pending is 400 rather than silently dropped.
 */
function completion(
  cur: { completed: boolean; completedAt: string | null },
  completed: boolean | undefined,
  completedAt: string | null | undefined,
  now: string,
) {
  const done = completed ?? cur.completed;
  if (!done) {
    if (completedAt != null) throw errors.field('completedAt', 'can only be set on a completed activity (send completed: true)');
    return { completed: 0, completed_at: null };
  }
  return { completed: 1, completed_at: completedAt ?? (cur.completed && cur.completedAt ? cur.completedAt : now) };
}

/** Checks body references: users, and every linked contact/company/deal (404 naming e.g. `dealIds[1]`). */
async function checkRefs(ctx: Ctx, input: ActivityCreateT | ActivityUpdateT): Promise<void> {
  for (const field of ['assignedToId', 'ownerId'] as const) {
    const id = input[field];
    if (id === undefined || id === null) continue;
    if (!(await existingIds(ctx.db, ctx.tenantId, 'user', [id])).has(id)) throw errors.refNotFound(field, id);
  }
  for (const type of RELATED_TYPES) {
    const field = LINK_FIELDS[type];
    const ids = input[field];
    if (!ids) continue;
    await assertRefArray(ctx.db, ctx.tenantId, type, field, ids);
  }
}

async function writeLinks(ctx: Ctx, activityId: string, input: ActivityCreateT | ActivityUpdateT): Promise<void> {
  for (const type of RELATED_TYPES) {
    const ids = input[LINK_FIELDS[type]];
    if (ids !== undefined) await repo.replaceLinks(ctx.db, ctx.tenantId, activityId, type, [...new Set(ids)]);
  }
}

// ---------------------------------------------------------------------------------------------
// Writing

export async function createActivity(ctx: Ctx, input: ActivityCreateT): Promise<ActivityT> {
  const checks = new FieldChecks();
  const title = checks.check('title', () => cleanTitle(input.title));
  const dueDate = checks.check('dueDate', () => instant('dueDate', input.dueDate));
  const completedAt = checks.check('completedAt', () => instant('completedAt', input.completedAt));
  const now = nowIso();
  const done = checks.check('completedAt', () => completion({ completed: false, completedAt: null }, input.completed, completedAt, now));
  checks.assert();
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    await checkRefs(c, input);
    const id = newId('act');
    await repo.insertActivity(tx, {
      tenant_id: ctx.tenantId,
      id,
      type: input.type,
      title,
      description: description(input.description) ?? null,
      due_date: dueDate ?? null,
      ...done,
      priority: input.priority ?? null,
      assigned_to_id: input.assignedToId ?? null,
      // NOTE: B.1 — the creating user is the user the key belongs to.
      owner_id: input.ownerId === undefined ? ctx.userId : input.ownerId,
      created_at: now,
      updated_at: now,
    });
    await writeLinks(c, id, input);
    const activity = await getActivity(c, id);
    await recordEvent(tx, ctx, 'activity.created', activity);
    return activity;
  });
}

export async function updateActivity(ctx: Ctx, id: string, input: ActivityUpdateT): Promise<ActivityT> {
  const checks = new FieldChecks();
  const title = input.title === undefined ? undefined : checks.check('title', () => cleanTitle(input.title!));
  const dueDate = checks.check('dueDate', () => instant('dueDate', input.dueDate));
  const completedAt = checks.check('completedAt', () => instant('completedAt', input.completedAt));
  checks.assert();
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const cur = await repo.findActivity(tx, ctx.tenantId, id);
    if (!cur) throw notFound();
    const previous = assemble([cur], await repo.linksOf(tx, ctx.tenantId, [id]))[0];
    if (Object.keys(input).length === 0) return previous;
    const now = nowIso();
    const touchesCompletion = input.completed !== undefined || input.completedAt !== undefined;
    const done = touchesCompletion ? completion({ completed: cur.completed === 1, completedAt: cur.completed_at }, input.completed, completedAt, now) : {};
    await checkRefs(c, input);
    await repo.updateActivity(tx, ctx.tenantId, id, {
      ...(input.type !== undefined && { type: input.type }),
      ...(title !== undefined && { title }),
      ...(input.description !== undefined && { description: description(input.description) }),
      ...(dueDate !== undefined && { due_date: dueDate }),
      ...done,
      ...(input.priority !== undefined && { priority: input.priority }),
      ...(input.assignedToId !== undefined && { assigned_to_id: input.assignedToId }),
      ...(input.ownerId !== undefined && { owner_id: input.ownerId }),
      updated_at: now,
    });
    await writeLinks(c, id, input);
    const activity = await getActivity(c, id);
    await recordUpdated(tx, ctx, 'activity.updated', previous, activity);
    return activity;
  });
}

/** Hard delete (spec 4.2), links included; records `activity.deleted` with the activity as last read. */
export async function deleteActivity(ctx: Ctx, id: string): Promise<void> {
  await withTx(ctx.db, async (tx) => {
    const last = await getActivity(inTx(ctx, tx), id);
    if (!(await repo.deleteActivity(tx, ctx.tenantId, id))) throw notFound();
    await recordEvent(tx, ctx, 'activity.deleted', last);
  });
}

/** A bulk write (B.6) in one transaction, and an `activity.updated` for each activity it changed. */
async function bulkUpdate(ctx: Ctx, ids: string[], write: (tx: Ctx['db'], now: string) => Promise<number>): Promise<{ updated: number }> {
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const before = await activitiesByIds(c, ids);
    const updated = await write(tx, nowIso());
    for (const after of (await activitiesByIds(c, [...before.keys()])).values()) {
      await recordUpdated(tx, ctx, 'activity.updated', before.get(after.id)!, after);
    }
    return { updated };
  });
}

const bulkIds = (ids: string[]) => [...new Set(ids)];

/** `POST /activities/bulk/complete` (B.6): one UPDATE; ids not in the tenant are skipped. */
export async function bulkComplete(ctx: Ctx, input: BulkCompleteT): Promise<{ updated: number }> {
  const ids = bulkIds(input.ids);
  return bulkUpdate(ctx, ids, (tx, now) => repo.setCompleted(tx, ctx.tenantId, ids, input.completed, now));
}

/** `POST /activities/bulk/assign` (B.6): the assignee must be a user of the tenant (404); null unassigns. */
export async function bulkAssign(ctx: Ctx, input: BulkAssignT): Promise<{ updated: number }> {
  const { assignedToId } = input;
  if (assignedToId !== null && !(await existingIds(ctx.db, ctx.tenantId, 'user', [assignedToId])).has(assignedToId)) {
    throw errors.refNotFound('assignedToId', assignedToId);
  }
  const ids = bulkIds(input.ids);
  return bulkUpdate(ctx, ids, (tx, now) => repo.setAssignee(tx, ctx.tenantId, ids, assignedToId, now));
}

/** D.5: an erased contact leaves every activity it was linked to. */
export function forgetContact(db: Db, tenantId: string, contactId: string): Promise<void> {
  return repo.unlinkContact(db, tenantId, contactId);
}

/** D.2: activities linked to a merged contact or company are linked to the primary. */
export function relinkActivities(db: Db, tenantId: string, objectType: 'contact' | 'company', from: string, to: string, now: string): Promise<void> {
  return repo.relinkActivities(db, tenantId, objectType, from, to, now);
}
