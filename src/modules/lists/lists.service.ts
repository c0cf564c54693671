import { withTx, type Db } from '../../db/index.js';
import { errors, FieldChecks } from '../../errors.js';
import { inTx, type Ctx } from '../../http/context.js';
import type { ValueRules } from '../../http/validation.js';
import { pageRequestOf, type Page } from '../../http/pagination.js';
import { rowsPage } from '../../listing/planner.js';
import { newId } from '../../util/ids.js';
import { parseJson } from '../../util/json.js';
import { nowIso } from '../../util/time.js';
import { existingIds } from '../shared/refs.js';
import { companiesByIds } from '../companies/companies.service.js';
import { contactsByIds } from '../contacts/contacts.service.js';
import { dealsByIds } from '../deals/deals.service.js';
import { recordEvent } from '../shared/record-change.js';
import { fieldsSet, recordAudit } from '../audit/audit.service.js';
import * as repo from './lists.repo.js';
import type { ListCreateT, ListObjectType, ListQueryT, ListT, ListUpdateT, MembersAddT, MembersQueryT } from './lists.schema.js';

export function toList(r: repo.ListRow, memberCount: number): ListT {
  return {
    id: r.id,
    name: r.name,
    objectType: r.object_type as ListObjectType,
    kind: r.kind as ListT['kind'],
    description: r.description,
    filters: r.kind === 'dynamic' ? parseJson<unknown>(r.filters, null) : null,
    memberCount,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Lists with their live member counts: at most one grouped count query per object type. */
async function withCounts(ctx: Ctx, rows: repo.ListRow[]): Promise<ListT[]> {
  const counts = new Map<string, number>();
  for (const type of ['contact', 'company', 'deal'] as const) {
    const ids = rows.filter((r) => r.object_type === type).map((r) => r.id);
    for (const [id, n] of await repo.memberCounts(ctx.reads, ctx.tenantId, type, ids)) counts.set(id, n);
  }
  return rows.map((r) => toList(r, counts.get(r.id) ?? 0));
}

async function memberCount(ctx: Ctx, list: repo.ListRow): Promise<number> {
  const counts = await repo.memberCounts(ctx.reads, ctx.tenantId, list.object_type as ListObjectType, [list.id]);
  return counts.get(list.id) ?? 0;
}

async function mustFind(ctx: Ctx, id: string): Promise<repo.ListRow> {
  const row = await repo.findList(ctx.db, ctx.tenantId, id);
  if (!row) throw errors.notFound('List not found');
  return row;
}

/** Spec 3.4 and B.7: dynamic lists are read-only through the API. */
function assertStatic(list: repo.ListRow, what: string): void {
  if (list.kind !== 'static') {
    throw errors.conflict('list_kind_mismatch', `${what} is only possible on static lists; this list is dynamic (defined by filters in the CRM UI)`);
  }
}

function cleanName(name: string): string {
  const n = name.trim();
  if (!n) throw errors.field('name', 'must not be blank');
  return n;
}

/** The value rules of a list body (C.5), run on a body whose shape is refused too. */
export const LIST_VALUE_RULES = { name: cleanName } satisfies ValueRules;

/**
 * B.7: `kind` and `objectType` never change. Checked before schema validation so the answer names
 * them as immutable (rather than as unknown fields), for static and dynamic lists alike.
 */
export function assertImmutableFieldsAbsent(body: unknown): void {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const given = ['kind', 'objectType'].filter((k) => k in body);
  if (given.length) throw errors.validation(given.map((field) => ({ field, message: 'cannot be changed after the list is created' })));
}

export async function listLists(ctx: Ctx, q: ListQueryT): Promise<ListT[]> {
  return withCounts(ctx, await repo.listLists(ctx.db, ctx.tenantId, q.objectType));
}

export async function getList(ctx: Ctx, id: string): Promise<ListT> {
  const row = await mustFind(ctx, id);
  return toList(row, await memberCount(ctx, row));
}

export async function createList(ctx: Ctx, input: ListCreateT): Promise<ListT> {
  // NOTE: spec 2.6 / B.7 — only static lists can be created through the API.
  const checks = new FieldChecks();
  if (input.kind !== 'static') {
    checks.add('kind', input.kind === 'dynamic' ? 'dynamic lists are created only in the CRM UI; use "static"' : 'must be "static"');
  }
  const name = checks.check('name', () => cleanName(input.name));
  checks.assert();
  const now = nowIso();
  const row = {
    tenant_id: ctx.tenantId,
    id: newId('lst'),
    name,
    object_type: input.objectType,
    kind: 'static',
    description: input.description ?? null,
    filters: null,
    member_count: 0,
    recalculated_at: null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  const list = toList(row, 0);
  await withTx(ctx.db, async (tx) => {
    await repo.insertList(tx, row);
    await recordAudit(tx, ctx, {
      action: 'list.created',
      objectType: 'list',
      objectId: row.id,
      changes: fieldsSet(list as unknown as Record<string, unknown>),
    });
  });
  return list;
}

export async function updateList(ctx: Ctx, id: string, input: ListUpdateT): Promise<ListT> {
  const current = await mustFind(ctx, id);
  assertStatic(current, 'Changing a list');
  const set: { name?: string; description?: string | null; updated_at?: string } = {};
  if (input.name !== undefined) set.name = cleanName(input.name);
  if (input.description !== undefined) set.description = input.description;
  if (Object.keys(set).length) {
    set.updated_at = nowIso();
    await withTx(ctx.db, async (tx) => {
      if (!(await repo.updateList(tx, ctx.tenantId, id, set))) throw errors.notFound('List not found');
      await recordAudit(tx, ctx, {
        action: 'list.updated',
        objectType: 'list',
        objectId: id,
        changes: Object.keys(input).filter((k) => k === 'name' || k === 'description'),
      });
    });
  }
  return getList(ctx, id);
}

/** Soft delete; member rows are left as they are (spec 4.6). */
export async function deleteList(ctx: Ctx, id: string): Promise<void> {
  const current = await mustFind(ctx, id);
  assertStatic(current, 'Deleting a list');
  await withTx(ctx.db, async (tx) => {
    if (!(await repo.softDeleteList(tx, ctx.tenantId, id, nowIso()))) throw errors.notFound('List not found');
    await recordAudit(tx, ctx, { action: 'list.deleted', objectType: 'list', objectId: id });
  });
}

/** Records of one object type as their single reads return them, by id (soft-deleted ones are absent). */
export async function recordsByIds(ctx: Ctx, objectType: ListObjectType, ids: string[]): Promise<Map<string, { id: string }>> {
  switch (objectType) {
    case 'contact':
      return contactsByIds(ctx, ids);
    case 'company':
      return companiesByIds(ctx, ids);
    case 'deal':
      return dealsByIds(ctx, ids);
  }
}

/** GET /lists/:id/members: joined time then id, by page or cursor (C.1). */
export async function listMembers(ctx: Ctx, id: string, q: MembersQueryT, keyId = ''): Promise<Page<{ id: string }>> {
  const req = pageRequestOf(q, 'pageSize');
  const list = await mustFind(ctx, id);
  const type = list.object_type as ListObjectType;
  const { data: rows, pagination } = await rowsPage<{ object_id: string }, { listId: string; objectType: ListObjectType }, 'joinedAt'>(
    ctx,
    repo.MEMBER_LISTING,
    {
      ...req,
      sortKey: 'joinedAt',
      order: 'asc',
      filters: { listId: list.id, objectType: type },
      boundFilters: null,
      keyId,
      endpoint: `GET /lists/${list.id}/members`,
    },
  );
  const ids = rows.map((r) => r.object_id);
  const records = await recordsByIds(ctx, type, ids);
  const data = ids.map((i) => records.get(i)).filter((r): r is { id: string } => r !== undefined);
  return { data, pagination };
}

/**
 * B.7: all-or-nothing. Every id must be a live record of the list's object type in the tenant, else
 * 404 naming the offending ids and nothing is added; ids already members are ignored.
 */
export async function addMembers(ctx: Ctx, id: string, input: MembersAddT): Promise<{ added: number; memberCount: number }> {
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const list = await mustFind(c, id);
    assertStatic(list, 'Adding members');
    const type = list.object_type as ListObjectType;
    const ids = [...new Set(input.objectIds)];
    const found = await existingIds(tx, ctx.tenantId, type, ids);
    const missing = ids.filter((i) => !found.has(i));
    if (missing.length) {
      throw errors.missingMembers(type, missing);
    }
    const added = await repo.addMembers(tx, ctx.tenantId, list.id, ids, nowIso());
    const count = await memberCount(c, list);
    // C.4: one list.member_added per new member, `data.list` as GET /lists/:id returns it after the change.
    if (added.length) {
      const record = toList(list, count);
      const order = new Map(ids.map((objectId, i) => [objectId, i]));
      for (const objectId of added.sort((a, b) => order.get(a)! - order.get(b)!)) {
        await recordEvent(tx, ctx, 'list.member_added', record, { objectId });
      }
    }
    return { added: added.length, memberCount: count };
  });
}

export async function removeMember(ctx: Ctx, id: string, objectId: string): Promise<void> {
  await withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const list = await mustFind(c, id);
    assertStatic(list, 'Removing members');
    // A soft-deleted record is no longer a member (B.3), so removing it is a 404 like any non-member.
    const visible = await repo.isVisibleMember(tx, ctx.tenantId, list.id, list.object_type as ListObjectType, objectId);
    if (!visible) throw errors.notFound(`"${objectId}" is not a member of this list`);
    await repo.removeMember(tx, ctx.tenantId, list.id, objectId);
    await recordEvent(tx, ctx, 'list.member_removed', toList(list, await memberCount(c, list)), { objectId });
  });
}

/** D.2: a merged record's list memberships go to the primary. */
export function moveMemberships(db: Db, tenantId: string, from: string, to: string): Promise<void> {
  return repo.moveMemberships(db, tenantId, from, to);
}
