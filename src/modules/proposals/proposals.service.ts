import { withTx, type Db } from '../../db/index.js';
import { guardUnique } from '../../db/errors.js';
import { fromCents } from '../../domain/money.js';
import { normalizeIsoDateTime } from '../../domain/dates.js';
import { errors, FieldChecks, fieldRule } from '../../errors.js';
import type { EventType } from '../../events/catalog.js';
import { recordEvent } from '../shared/record-change.js';
import { fieldsSet, recordAudit } from '../audit/audit.service.js';
import { inTx, type Ctx } from '../../http/context.js';
import type { ValueRules } from '../../http/validation.js';
import { pageSizeOf, type Page } from '../../http/pagination.js';
import { rowsPage } from '../../listing/planner.js';
import { newId } from '../../util/ids.js';
import { nowIso } from '../../util/time.js';
import { companiesByIds } from '../companies/companies.service.js';
import { contactsByIds } from '../contacts/contacts.service.js';
import { dealsByIds } from '../deals/deals.service.js';
import { existingIds, type RefKind } from '../shared/refs.js';
import * as repo from './proposals.repo.js';
import {
  checkStatusValue,
  cleanEmail,
  cleanSubject,
  computeTotals,
  formatNumber,
  money,
  prepareItems,
  STATUS_MOVES,
  type PreparedItem,
} from './proposals.rules.js';
import type { ProposalCreateT, ProposalItemInputT, ProposalItemT, ProposalListQueryT, ProposalStatus, ProposalT, ProposalUpdateT } from './proposals.schema.js';

function toItem(r: repo.ItemRow): ProposalItemT {
  return {
    id: r.id,
    order: r.position,
    name: r.name,
    description: r.description,
    qty: r.qty,
    unit: r.unit,
    rate: r.rate,
    discountPct: r.discount_pct,
    taxPct: r.tax_pct,
    total: fromCents(r.total_cents),
  };
}

interface Expansions {
  deals: Map<string, Record<string, unknown>>;
  contacts: Map<string, Record<string, unknown>>;
  companies: Map<string, Record<string, unknown>>;
  items: Map<string, repo.ItemRow[]>;
}

function toProposal(r: repo.ProposalRow, x: Expansions): ProposalT {
  return {
    id: r.id,
    number: r.number,
    subject: r.subject,
    status: r.status as ProposalStatus,
    sentAt: r.sent_at,
    dealId: r.deal_id,
    deal: (r.deal_id && x.deals.get(r.deal_id)) || null,
    contactId: r.contact_id,
    contact: (r.contact_id && x.contacts.get(r.contact_id)) || null,
    clientId: r.client_id,
    company: (r.client_id && x.companies.get(r.client_id)) || null,
    recipientName: r.recipient_name,
    recipientEmail: r.recipient_email,
    items: (x.items.get(r.id) ?? []).map(toItem),
    discount: fromCents(r.discount_cents),
    adjustment: fromCents(r.adjustment_cents),
    subtotal: fromCents(r.subtotal_cents),
    total: fromCents(r.total_cents),
    notes: r.notes,
    ownerId: r.owner_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    // Only listings with includeDeleted select it (C.1); other reads leave it out.
    ...(r.deleted_at !== undefined ? { deletedAt: r.deleted_at } : {}),
  };
}

/** Full proposals for a page of rows: one query for items and one batch per expanded resource. */
async function expand(ctx: Ctx, rows: repo.ProposalRow[]): Promise<ProposalT[]> {
  const ids = (pick: (r: repo.ProposalRow) => string | null) => [...new Set(rows.map(pick).filter((v): v is string => v !== null))];
  const [items, deals, contacts, companies] = await Promise.all([
    repo.itemsOf(
      ctx.db,
      ctx.tenantId,
      rows.map((r) => r.id),
    ),
    dealsByIds(
      ctx,
      ids((r) => r.deal_id),
    ),
    contactsByIds(
      ctx,
      ids((r) => r.contact_id),
    ),
    companiesByIds(
      ctx,
      ids((r) => r.client_id),
    ),
  ]);
  const x = { items, deals, contacts, companies } as unknown as Expansions;
  return rows.map((r) => toProposal(r, x));
}

async function mustFind(ctx: Ctx, id: string): Promise<repo.ProposalRow> {
  const row = await repo.findProposal(ctx.db, ctx.tenantId, id);
  if (!row) throw errors.notFound('Proposal not found');
  return row;
}

export async function getProposal(ctx: Ctx, id: string): Promise<ProposalT> {
  const [p] = await expand(ctx, [await mustFind(ctx, id)]);
  return p;
}

/** GET /proposals (spec 4.7, B.8, C.1). `keyId` binds cursors to the caller's key. */
export async function listProposals(ctx: Ctx, q: ProposalListQueryT, keyId = ''): Promise<Page<ProposalT>> {
  const req = { page: q.page, pageSize: pageSizeOf(q, 'limit'), cursor: q.cursor };
  const updatedAfter = q.updatedAfter === undefined ? undefined : fieldRule('updatedAfter', () => normalizeIsoDateTime(q.updatedAfter!));
  const f: repo.ProposalFilter = {
    status: q.status,
    search: q.search,
    contactId: q.contactId,
    clientId: q.clientId,
    dealId: q.dealId,
    updatedAfter,
    includeDeleted: q.includeDeleted === true,
  };
  const sortKey = q.sortKey ?? 'createdAt';
  const order = q.sortOrder ?? 'desc';
  const { data: rows, pagination } = await rowsPage<repo.ProposalRow, repo.ProposalFilter, typeof sortKey>(ctx, repo.PROPOSAL_LISTING, {
    ...req,
    sortKey,
    order,
    filters: f,
    keyId,
    endpoint: 'GET /proposals',
  });
  return { data: await expand(ctx, rows), pagination };
}

/** Body references (B.2): 404 naming the field when missing or soft-deleted in the tenant. */
async function assertReferences(ctx: Ctx, refs: Record<string, [RefKind, string | null | undefined]>): Promise<void> {
  for (const [field, [kind, id]] of Object.entries(refs)) {
    if (id === undefined || id === null) continue;
    if (!(await existingIds(ctx.db, ctx.tenantId, kind, [id])).has(id)) throw errors.refNotFound(field, id);
  }
}

// ---------------------------------------------------------------------------------------------------
// Writes

/** The value rules of a proposal body (C.5), run on a body whose shape is refused too. */
export const PROPOSAL_VALUE_RULES = {
  subject: cleanSubject,
  recipientEmail: cleanEmail,
  discount: (v: number) => money('discount', v, { negative: false }),
  adjustment: (v: number) => money('adjustment', v, { negative: true }),
  items: (v: ProposalItemInputT[]) => {
    const checks = new FieldChecks();
    prepareItems(v, checks);
    checks.assert();
  },
} satisfies ValueRules;

export async function createProposal(ctx: Ctx, input: ProposalCreateT): Promise<ProposalT> {
  // NOTE: B.8 — a proposal starts as a draft; `status` on create may only say so.
  if (input.status !== undefined && checkStatusValue(input.status) !== 'draft') {
    throw errors.businessRule(`A proposal is created as a draft; move it to "${input.status}" with PATCH afterwards`);
  }
  const checks = new FieldChecks();
  const subject = checks.check('subject', () => cleanSubject(input.subject));
  const recipientEmail = checks.check('recipientEmail', () => cleanEmail(input.recipientEmail)) ?? null;
  const items = prepareItems(input.items ?? [], checks);
  const discountCents = checks.check('discount', () => money('discount', input.discount ?? 0, { negative: false }));
  const adjustmentCents = checks.check('adjustment', () => money('adjustment', input.adjustment ?? 0, { negative: true }));
  checks.assert();
  const totals = computeTotals(items, discountCents, adjustmentCents);
  const ownerId = input.ownerId === undefined ? ctx.userId : input.ownerId;

  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    await assertReferences(c, {
      dealId: ['deal', input.dealId],
      contactId: ['contact', input.contactId],
      clientId: ['company', input.clientId],
      ...(input.ownerId !== undefined ? { ownerId: ['user', input.ownerId] as [RefKind, string | null] } : {}),
    });
    const now = nowIso();
    const year = new Date(now).getUTCFullYear();
    const seq = await repo.nextSequence(tx, ctx.tenantId, year);
    const id = newId('prp');
    const dealId = input.dealId ?? null;
    const insert = () =>
      repo.insertProposal(tx, {
        tenant_id: ctx.tenantId,
        id,
        number: formatNumber(year, seq),
        subject,
        status: 'draft',
        sent_at: null,
        deal_id: dealId,
        contact_id: input.contactId ?? null,
        client_id: input.clientId ?? null,
        recipient_name: input.recipientName ?? null,
        recipient_email: recipientEmail,
        discount_cents: discountCents,
        adjustment_cents: adjustmentCents,
        ...totals,
        notes: input.notes ?? null,
        owner_id: ownerId,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      });
    await guardUnique(tx, ctx.tenantId, { deal_id: dealId }, insert);
    await repo.replaceItems(tx, ctx.tenantId, id, items);
    const proposal = await getProposal(c, id);
    await recordAudit(tx, ctx, {
      action: 'proposal.created',
      objectType: 'proposal',
      objectId: id,
      changes: fieldsSet(proposal as unknown as Record<string, unknown>),
    });
    return proposal;
  });
}

/** Raised when the row changed under a PATCH between its read and its write; the PATCH is retried. */
class ConcurrentChange extends Error {}

export async function updateProposal(ctx: Ctx, id: string, input: ProposalUpdateT): Promise<ProposalT> {
  const target = input.status === undefined ? undefined : checkStatusValue(input.status);
  const checks = new FieldChecks();
  const subject = input.subject === undefined ? undefined : checks.check('subject', () => cleanSubject(input.subject!));
  const recipientEmail = checks.check('recipientEmail', () => cleanEmail(input.recipientEmail));
  const items = input.items === undefined ? undefined : prepareItems(input.items, checks);
  const discountCents = input.discount === undefined ? undefined : checks.check('discount', () => money('discount', input.discount!, { negative: false }));
  const adjustmentCents =
    input.adjustment === undefined ? undefined : checks.check('adjustment', () => money('adjustment', input.adjustment!, { negative: true }));
  checks.assert();

  for (let attempt = 0; ; attempt++) {
    try {
      return await withTx(ctx.db, (tx) => applyUpdate(inTx(ctx, tx), id, input, { target, subject, recipientEmail, items, discountCents, adjustmentCents }));
    } catch (err) {
      if (err instanceof ConcurrentChange && attempt < 5) continue;
      if (err instanceof ConcurrentChange) throw errors.concurrentUpdate('The proposal changed during this update; retry');
      throw err;
    }
  }
}

interface CleanUpdate {
  target?: ProposalStatus;
  subject?: string;
  recipientEmail?: string | null;
  items?: PreparedItem[];
  discountCents?: number;
  adjustmentCents?: number;
}

async function applyUpdate(ctx: Ctx, id: string, input: ProposalUpdateT, v: CleanUpdate): Promise<ProposalT> {
  const current = await mustFind(ctx, id);
  const set: repo.ProposalChanges = {};
  let event: EventType | undefined;
  const from = current.status as ProposalStatus;
  if (v.target !== undefined && v.target !== from) {
    if (!STATUS_MOVES[from].includes(v.target)) {
      const allowed = STATUS_MOVES[from];
      throw errors.businessRule(
        `A proposal cannot move from "${from}" to "${v.target}"` +
          (allowed.length ? ` (from "${from}" it may move to ${allowed.map((s) => `"${s}"`).join(', ')})` : ` ("${from}" is final)`),
      );
    }
    set.status = v.target;
    if (v.target === 'sent') set.sent_at = nowIso();
    // A move back to draft raises no event (the catalog has none for it).
    if (v.target !== 'draft') event = `proposal.${v.target}` as EventType;
  }
  await assertReferences(ctx, {
    dealId: ['deal', input.dealId !== current.deal_id ? input.dealId : undefined],
    contactId: ['contact', input.contactId !== current.contact_id ? input.contactId : undefined],
    clientId: ['company', input.clientId !== current.client_id ? input.clientId : undefined],
    ownerId: ['user', input.ownerId !== current.owner_id ? input.ownerId : undefined],
  });
  if (v.subject !== undefined) set.subject = v.subject;
  if (input.dealId !== undefined) set.deal_id = input.dealId;
  if (input.contactId !== undefined) set.contact_id = input.contactId;
  if (input.clientId !== undefined) set.client_id = input.clientId;
  if (input.ownerId !== undefined) set.owner_id = input.ownerId;
  if (input.recipientName !== undefined) set.recipient_name = input.recipientName;
  if (v.recipientEmail !== undefined) set.recipient_email = v.recipientEmail;
  if (input.notes !== undefined) set.notes = input.notes;
  if (v.discountCents !== undefined) set.discount_cents = v.discountCents;
  if (v.adjustmentCents !== undefined) set.adjustment_cents = v.adjustmentCents;
  if (v.items !== undefined || v.discountCents !== undefined || v.adjustmentCents !== undefined) {
    const items = v.items ?? (await repo.itemsOf(ctx.db, ctx.tenantId, [id])).get(id) ?? [];
    Object.assign(set, computeTotals(items, v.discountCents ?? current.discount_cents, v.adjustmentCents ?? current.adjustment_cents));
  }
  if (Object.keys(set).length === 0 && v.items === undefined) return getProposal(ctx, id);

  set.updated_at = nowIso();
  // The status read above must still hold when writing, or two concurrent moves could both pass.
  const updated = await guardUnique(ctx.db, ctx.tenantId, { deal_id: set.deal_id }, () => repo.updateProposal(ctx.db, ctx.tenantId, id, set, current));
  if (updated === 0) throw new ConcurrentChange();
  if (v.items !== undefined) await repo.replaceItems(ctx.db, ctx.tenantId, id, v.items);
  const proposal = await getProposal(ctx, id);
  if (event) await recordEvent(ctx.db, ctx, event, proposal as unknown as Record<string, unknown>, { previousStatus: from });
  // The fields this PATCH set beside a status move that raised its own event (and audit entry).
  const fields = Object.keys(input).filter((k) => (input as Record<string, unknown>)[k] !== undefined && !(k === 'status' && event));
  if (fields.length > 0) await recordAudit(ctx.db, ctx, { action: 'proposal.updated', objectType: 'proposal', objectId: id, changes: fields });
  return proposal;
}

/** Soft delete; the linked deal is untouched and free for a new proposal (partial unique index). */
export async function deleteProposal(ctx: Ctx, id: string): Promise<void> {
  await withTx(ctx.db, async (tx) => {
    const n = await repo.softDeleteProposal(tx, ctx.tenantId, id, nowIso());
    if (!n) throw errors.notFound('Proposal not found');
    await recordAudit(tx, ctx, { action: 'proposal.deleted', objectType: 'proposal', objectId: id });
  });
}

/** D.5: proposals that named an erased contact keep their other fields, without it. */
export function forgetContact(db: Db, tenantId: string, contactId: string, now: string): Promise<void> {
  return repo.clearContactReferences(db, tenantId, contactId, now);
}

/** D.2: proposals that named a merged contact (`contact_id`) or company (`client_id`) name the primary. */
export function repointProposals(db: Db, tenantId: string, column: 'contact_id' | 'client_id', from: string, to: string, now: string): Promise<void> {
  return repo.repointProposals(db, tenantId, column, from, to, now);
}
