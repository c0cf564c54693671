import Big from 'big.js';
import { withTx, type Db } from '../../db/index.js';
import { normalizeIsoDateTime, isIsoDate } from '../../domain/dates.js';
import { fromCents, isIsoCurrency, MAX_AMOUNT, toCents } from '../../domain/money.js';
import { errors, FieldChecks, fieldRule } from '../../errors.js';
import { recordEvent, recordUpdated } from '../shared/record-change.js';
import { inTx, type Ctx } from '../../http/context.js';
import type { ValueRules } from '../../http/validation.js';
import { pageSizeOf } from '../../http/pagination.js';
import type { JsonText } from '../../http/replies.js';
import type { ListPage } from '../../listing/page.js';
import { recordsPage } from '../../listing/planner.js';
import { newId } from '../../util/ids.js';
import { nowIso } from '../../util/time.js';
import { markChanged } from '../shared/changes.js';
import { checkCustomProperties, customPropertiesJson, customPropertiesRules, readCustomProperties } from '../shared/custom-properties.js';
import { assertRefs, existingIds, type RefKind } from '../shared/refs.js';
import { companiesByIds } from '../companies/companies.service.js';
import { contactsByIds } from '../contacts/contacts.service.js';
import { getStage } from '../pipelines/pipelines.service.js';
import { parseTagIds, replaceRecordTags, tagIdsOf } from '../shared/record-tags.js';
import { assertTagsExist } from '../tags/tags.service.js';
import * as repo from './deals.repo.js';
import type { ContactDealT, DealCreateT, DealListQueryT, DealT, DealUpdateT } from './deals.schema.js';

export { Deal } from './deals.schema.js';

// ---------------------------------------------------------------------------------------------
// Reading

export function toDeal(r: repo.DealRow, tags: string[], contact: DealT['contact'], company: DealT['company']): DealT {
  return {
    id: r.id,
    title: r.title,
    pipelineId: r.pipeline_id,
    stageId: r.stage_id,
    value: r.value_cents === null ? null : fromCents(r.value_cents),
    currency: r.currency,
    contactId: r.contact_id,
    contact,
    companyId: r.company_id,
    company,
    ownerId: r.owner_id,
    expectedCloseDate: r.expected_close_date,
    customProperties: readCustomProperties(r.custom_properties),
    tags,
    isWon: r.is_won === 1,
    isLost: r.is_lost === 1,
    closedAt: r.closed_at,
    lossReasonId: r.loss_reason_id,
    lossNotes: r.loss_notes,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    // Only listings with includeDeleted select it (C.1); other reads leave it out.
    ...(r.deleted_at !== undefined ? { deletedAt: r.deleted_at } : {}),
  };
}

/** The distinct contact and company ids that rows expand. */
function expandedIds(rows: readonly Pick<repo.DealRow, 'contact_id' | 'company_id'>[]): { contactIds: string[]; companyIds: string[] } {
  return {
    contactIds: [...new Set(rows.map((r) => r.contact_id).filter((x): x is string => x !== null))],
    companyIds: [...new Set(rows.map((r) => r.company_id).filter((x): x is string => x !== null))],
  };
}

/**
 * Full deals for rows: tags, contacts and companies in one query per kind, not per row; rows read with their
 * `tag_ids` (the single read) need no query for their tags.
 */
async function expand(ctx: Ctx, rows: (repo.DealRow & { tag_ids?: string | null })[]): Promise<DealT[]> {
  if (rows.length === 0) return [];
  const tags = rows.every((r) => r.tag_ids !== undefined)
    ? new Map(rows.map((r) => [r.id, parseTagIds(r.tag_ids!)]))
    : await tagIdsOf(
        ctx.db,
        ctx.tenantId,
        'deal',
        rows.map((r) => r.id),
      );
  const { contactIds, companyIds } = expandedIds(rows);
  const contacts = contactIds.length ? await contactsByIds(ctx, contactIds) : new Map();
  const companies = companyIds.length ? await companiesByIds(ctx, companyIds) : new Map();
  return rows.map((r) =>
    toDeal(r, tags.get(r.id) ?? [], (r.contact_id && contacts.get(r.contact_id)) || null, (r.company_id && companies.get(r.company_id)) || null),
  );
}

export async function getDeal(ctx: Ctx, id: string): Promise<DealT> {
  const row = await repo.findDeal(ctx.db, ctx.tenantId, id);
  if (!row) throw errors.notFound('Deal not found');
  return (await expand(ctx, [row]))[0];
}

/** `GET /deals/:id`: the deal as JSON text, its contact and company spliced in by its statement (dealRecordSql), sent as it is. */
export async function getDealJson(ctx: Ctx, id: string): Promise<JsonText<DealT>> {
  const json = await repo.findDealJson(ctx.db, ctx.tenantId, id);
  if (json === undefined) throw errors.notFound('Deal not found');
  return json as JsonText<DealT>;
}

/** Deals by id (missing and soft-deleted ones absent), expanded; for other modules' expansions. */
export async function dealsByIds(ctx: Ctx, ids: string[]): Promise<Map<string, DealT>> {
  const rows = await repo.findDeals(ctx.db, ctx.tenantId, ids);
  return new Map((await expand(ctx, rows)).map((d) => [d.id, d]));
}

const CENTS_LIMIT = MAX_AMOUNT * 100 + 1;

/** Inclusive bound on cents for a filter amount: ceil for a lower bound, floor for an upper one. */
function boundCents(field: string, n: number, lower: boolean): number {
  if (!Number.isFinite(n)) throw errors.field(field, 'must be a finite number');
  const c = new Big(n).times(100);
  const mode = (c.gte(0) ? lower : !lower) ? Big.roundUp : Big.roundDown;
  const cents = Number(c.round(0, mode).toString());
  return Math.max(-CENTS_LIMIT, Math.min(CENTS_LIMIT, cents));
}

function instant(field: string, s: string): string {
  return fieldRule(field, () => normalizeIsoDateTime(s));
}

/** GET /deals (spec 4.3, B.4, C.1). `keyId` binds cursors to the caller's key. */
export async function listDeals(ctx: Ctx, q: DealListQueryT, keyId = ''): Promise<ListPage<DealT>> {
  const filters: repo.DealFilters = {
    pipelineId: q.pipelineId,
    stageId: q.stageId,
    ownerId: q.ownerId,
    contactId: q.contactId,
    companyId: q.companyId,
    isWon: q.isWon,
    isLost: q.isLost,
    valueMinCents: q.valueMin === undefined ? undefined : boundCents('valueMin', q.valueMin, true),
    valueMaxCents: q.valueMax === undefined ? undefined : boundCents('valueMax', q.valueMax, false),
    closedAtFrom: q.closedAtFrom === undefined ? undefined : instant('closedAtFrom', q.closedAtFrom),
    closedAtTo: q.closedAtTo === undefined ? undefined : instant('closedAtTo', q.closedAtTo),
    updatedAfter: q.updatedAfter === undefined ? undefined : instant('updatedAfter', q.updatedAfter),
    // An empty search is no filter (dealListing): unset, so that the page may walk its index.
    search: q.search || undefined,
    includeDeleted: q.includeDeleted === true,
  };
  const sortKey = q.sortKey ?? 'updatedAt';
  const order = q.sortOrder ?? 'desc';
  return recordsPage(ctx, repo.DEAL_LISTING, {
    page: q.page,
    pageSize: pageSizeOf(q, 'pageSize'),
    cursor: q.cursor,
    sortKey,
    order,
    filters,
    keyId,
    endpoint: 'GET /deals',
  });
}

/** `GET /contacts/:id/deals`: open deals first, then most recently updated (spec 4.1). */
export async function contactDeals(ctx: Ctx, contactId: string): Promise<ContactDealT[]> {
  const found = await existingIds(ctx.db, ctx.tenantId, 'contact', [contactId]);
  if (!found.has(contactId)) throw errors.notFound('Contact not found');
  const rows = await repo.dealsOfContact(ctx.db, ctx.tenantId, contactId);
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    stageId: r.stage_id,
    pipelineId: r.pipeline_id,
    value: r.value_cents === null ? null : fromCents(r.value_cents),
    currency: r.currency,
    isWon: r.is_won === 1,
    isLost: r.is_lost === 1,
    updatedAt: r.updated_at,
  }));
}

// ---------------------------------------------------------------------------------------------
// Field rules (pure; 400 validation_failed naming the field)

function cleanTitle(title: string): string {
  const t = title.trim();
  if (!t) throw errors.field('title', 'must not be blank');
  return t;
}

function cents(value: number): number {
  return fieldRule('value', () => toCents(value));
}

function currencyCode(c: string): string {
  const code = c.trim().toUpperCase();
  if (!isIsoCurrency(code)) throw errors.field('currency', 'must be an ISO 4217 currency code (e.g. BRL, USD, EUR)');
  return code;
}

function closeDate(d: string | null): string | null {
  if (d !== null && !isIsoDate(d)) throw errors.field('expectedCloseDate', 'must be a date in YYYY-MM-DD format');
  return d;
}

/** The value rules of a deal body (C.5), run on a body whose shape is refused too. */
export const DEAL_VALUE_RULES = {
  title: cleanTitle,
  value: cents,
  currency: currencyCode,
  expectedCloseDate: closeDate,
  closedAt: (v: string) => instant('closedAt', v),
} satisfies ValueRules;

/** C.5: the rules of a refused body that read the tenant's property definitions. */
export const DEAL_DATA_RULES = customPropertiesRules('deal');

/** Body references must name records of the tenant (404 naming the field, B.2). */
async function checkRefs(ctx: Ctx, refs: Record<string, [RefKind, string | null | undefined]>, tags?: string[]): Promise<void> {
  await assertRefs(ctx.db, ctx.tenantId, refs);
  if (tags) await assertTagsExist(ctx, tags);
}

const stageInvalid = (stageId: string, pipelineId: string) =>
  errors.conflict('stage_invalid', `Stage "${stageId}" does not belong to pipeline "${pipelineId}"`);

// ---------------------------------------------------------------------------------------------
// The deal state machine (spec 3.1, CONTRACT B.5)

interface Closing {
  isWon: boolean;
  isLost: boolean;
  closedAt: string | null;
  lossReasonId: string | null;
  lossNotes: string | null;
}

type Stage = NonNullable<Awaited<ReturnType<typeof getStage>>>;

interface ClosingInput {
  isWon?: boolean;
  isLost?: boolean;
  /** Normalized; null or undefined = not given. */
  closedAt?: string | null;
  lossReasonId?: string | null;
  lossNotes?: string | null;
}

const OPEN: Closing = { isWon: false, isLost: false, closedAt: null, lossReasonId: null, lossNotes: null };

/**
 * The resulting closing state of a write, or a 4xx. Rules:
 * - flags not given keep their value; entering a stage with `isWonStage` / `isLostStage` sets that flag
 *   (contradicting it explicitly in the same request is 422);
 * - both flags true in the result → 422 (a lost deal is won with `{ isLost: false, isWon: true }`);
 * - becoming won sets `closedAt` (given, else now); a won deal may have its `closedAt` corrected;
 * - becoming lost sets `closedAt` to now and takes `lossReasonId` / `lossNotes`;
 * - a flag set back to false reopens: `closedAt`, `lossReasonId`, `lossNotes` are cleared.
 * NOTE: spec gap — `closedAt` only on a won deal and loss fields only on a lost one (400 otherwise),
 * so a value is never silently dropped.
 */
function resolveClosing(cur: Closing, input: ClosingInput, enteredStage: Stage | undefined, now: string): Closing {
  let isWon = input.isWon ?? cur.isWon;
  let isLost = input.isLost ?? cur.isLost;
  if (enteredStage?.isWonStage) {
    if (input.isWon === false) throw errors.businessRule('The stage is a won stage: moving a deal there wins it, so isWon cannot be false');
    isWon = true;
  }
  if (enteredStage?.isLostStage) {
    if (input.isLost === false) throw errors.businessRule('The stage is a lost stage: moving a deal there loses it, so isLost cannot be false');
    isLost = true;
  }
  if (isWon && isLost) {
    throw errors.businessRule('A deal cannot be both won and lost; to switch, set the other flag to false in the same request');
  }
  if (input.closedAt != null && !isWon) throw errors.field('closedAt', 'can only be set on a won deal (send isWon: true)');
  if (!isLost) {
    if (input.lossReasonId != null) throw errors.field('lossReasonId', 'can only be set on a lost deal (send isLost: true)');
    if (input.lossNotes != null) throw errors.field('lossNotes', 'can only be set on a lost deal (send isLost: true)');
  }
  if (isWon) {
    const closedAt = input.closedAt ?? (cur.isWon && cur.closedAt ? cur.closedAt : now);
    return { isWon, isLost, closedAt, lossReasonId: null, lossNotes: null };
  }
  if (isLost) {
    if (!cur.isLost) return { isWon, isLost, closedAt: now, lossReasonId: input.lossReasonId ?? null, lossNotes: input.lossNotes ?? null };
    return {
      isWon,
      isLost,
      closedAt: cur.closedAt ?? now,
      lossReasonId: input.lossReasonId !== undefined ? input.lossReasonId : cur.lossReasonId,
      lossNotes: input.lossNotes !== undefined ? input.lossNotes : cur.lossNotes,
    };
  }
  return OPEN;
}

/**
 * NOTE: C.5 — flags and stage never disagree. A write that sets a flag back to false (reopening, or
 * switching between won and lost) must leave the deal in a stage that fits the result: a won stage only
 * when won, a lost stage only when lost. Otherwise it must move the deal with `stageId`.
 */
function assertStageFits(closing: Closing, stage: Stage): void {
  const kind = stage.isWonStage ? 'won' : stage.isLostStage ? 'lost' : undefined;
  if (kind === undefined || (kind === 'won' && closing.isWon) || (kind === 'lost' && closing.isLost)) return;
  if (!closing.isWon && !closing.isLost) {
    throw errors.businessRule(`The deal sits in a ${kind} stage ("${stage.id}"): to reopen it, also give a stageId of a stage that is neither won nor lost`);
  }
  const result = closing.isWon ? 'won' : 'lost';
  throw errors.businessRule(
    `The deal sits in a ${kind} stage ("${stage.id}"): to mark it ${result}, also give a stageId of a ${result} stage or of one that is neither won nor lost`,
  );
}

/**
 * The fields of a write, normalized (undefined when not given) with its custom property values; one 400
 * naming every invalid field (C.5).
 */
async function checkedFields(ctx: Ctx, input: DealCreateT | DealUpdateT) {
  const checks = new FieldChecks();
  const given = <T, R>(value: T | undefined, field: string, rule: (v: T) => R): R | undefined =>
    value === undefined ? undefined : checks.check(field, () => rule(value));
  const fields = {
    title: given(input.title, 'title', DEAL_VALUE_RULES.title),
    valueCents: given(input.value, 'value', (v) => (v === null ? null : DEAL_VALUE_RULES.value(v))),
    currency: given(input.currency, 'currency', DEAL_VALUE_RULES.currency),
    expectedCloseDate: given(input.expectedCloseDate, 'expectedCloseDate', DEAL_VALUE_RULES.expectedCloseDate),
    closing: {
      isWon: input.isWon,
      isLost: input.isLost,
      closedAt: input.closedAt == null ? input.closedAt : checks.check('closedAt', () => DEAL_VALUE_RULES.closedAt(input.closedAt!)),
      lossReasonId: input.lossReasonId,
      lossNotes: input.lossNotes,
    } satisfies ClosingInput,
    customValues: await checkCustomProperties(ctx, 'deal', input.customProperties, checks),
  };
  // NOTE: B.5 — moving to another pipeline needs a stage of that pipeline.
  if (input.pipelineId !== undefined && input.stageId === undefined) {
    checks.add('stageId', 'is required when pipelineId is given (a stage of the new pipeline)');
  }
  checks.assert();
  return fields;
}

async function stageById(ctx: Ctx, stageId: string): Promise<Stage> {
  const stage = await getStage(ctx, stageId);
  if (!stage) throw errors.refNotFound('stageId', stageId);
  return stage;
}

/** Events of a write, inside its transaction (B.9): the record as a single read returns it. */
async function emitDealEvents(ctx: Ctx, deal: DealT, before: { stageId: string; isWon: boolean; isLost: boolean } | null): Promise<void> {
  const record = deal as unknown as Record<string, unknown>;
  if (!before) await recordEvent(ctx.db, ctx, 'deal.created', record);
  else if (before.stageId !== deal.stageId) await recordEvent(ctx.db, ctx, 'deal.stage_changed', record, { previousStageId: before.stageId });
  if (deal.isWon && !before?.isWon) await recordEvent(ctx.db, ctx, 'deal.won', record);
  if (deal.isLost && !before?.isLost) await recordEvent(ctx.db, ctx, 'deal.lost', record);
}

// ---------------------------------------------------------------------------------------------
// Writing

export async function createDeal(ctx: Ctx, input: DealCreateT): Promise<DealT> {
  const f = await checkedFields(ctx, input);
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    await checkRefs(c, { pipelineId: ['pipeline', input.pipelineId] });
    const stage = await stageById(c, input.stageId);
    if (stage.pipelineId !== input.pipelineId) throw stageInvalid(input.stageId, input.pipelineId);
    await checkRefs(
      c,
      {
        contactId: ['contact', input.contactId],
        companyId: ['company', input.companyId],
        ownerId: ['user', input.ownerId],
        lossReasonId: ['lossReason', input.lossReasonId],
      },
      input.tags,
    );
    const now = nowIso();
    const closing = resolveClosing(OPEN, f.closing, stage, now);
    const id = newId('deal');
    await repo.insertDeal(tx, {
      tenant_id: ctx.tenantId,
      id,
      title: f.title!,
      pipeline_id: input.pipelineId,
      stage_id: stage.id,
      value_cents: f.valueCents ?? null,
      currency: f.currency ?? 'BRL',
      contact_id: input.contactId ?? null,
      company_id: input.companyId ?? null,
      owner_id: input.ownerId ?? null,
      expected_close_date: f.expectedCloseDate ?? null,
      custom_properties: customPropertiesJson(f.customValues),
      is_won: closing.isWon ? 1 : 0,
      is_lost: closing.isLost ? 1 : 0,
      closed_at: closing.closedAt,
      loss_reason_id: closing.lossReasonId,
      loss_notes: closing.lossNotes,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    });
    if (input.tags?.length) await replaceRecordTags(tx, ctx.tenantId, 'deal', id, input.tags);
    await markChanged(tx, ctx.tenantId, 'deal');
    const deal = await getDeal(c, id);
    await emitDealEvents(c, deal, null);
    return deal;
  });
}

export async function updateDeal(ctx: Ctx, id: string, input: DealUpdateT): Promise<DealT> {
  const { title, valueCents, currency, expectedCloseDate, closing: closingIn, customValues } = await checkedFields(ctx, input);
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const cur = await repo.findDealForUpdate(tx, ctx.dialect, ctx.tenantId, id);
    if (!cur) throw errors.notFound('Deal not found');
    if (Object.keys(input).length === 0) return (await expand(c, [cur]))[0];
    // The state before, for deal.updated: the expansions are left out of the diff (they follow their ids),
    // so they are not read for it.
    const previous = toDeal(cur, parseTagIds(cur.tag_ids), null, null);
    let pipelineId = cur.pipeline_id;
    let stage: Stage | undefined;
    if (input.pipelineId !== undefined) {
      await checkRefs(c, { pipelineId: ['pipeline', input.pipelineId] });
      stage = await stageById(c, input.stageId!);
      if (stage.pipelineId !== input.pipelineId) throw stageInvalid(stage.id, input.pipelineId);
      pipelineId = input.pipelineId;
    } else if (input.stageId !== undefined) {
      stage = await stageById(c, input.stageId);
      if (stage.pipelineId !== cur.pipeline_id) {
        throw errors.businessRule(`Stage "${stage.id}" belongs to another pipeline; send pipelineId with it to move the deal to that pipeline`);
      }
    }
    const entered = stage && stage.id !== cur.stage_id ? stage : undefined;
    await checkRefs(
      c,
      {
        contactId: ['contact', input.contactId],
        companyId: ['company', input.companyId],
        ownerId: ['user', input.ownerId],
        lossReasonId: ['lossReason', input.lossReasonId],
      },
      input.tags,
    );
    const customProperties = customValues === undefined ? undefined : customPropertiesJson(customValues, cur.custom_properties);
    const now = nowIso();
    const before: Closing = {
      isWon: cur.is_won === 1,
      isLost: cur.is_lost === 1,
      closedAt: cur.closed_at,
      lossReasonId: cur.loss_reason_id,
      lossNotes: cur.loss_notes,
    };
    const closing = resolveClosing(before, closingIn, entered, now);
    if (input.isWon === false || input.isLost === false) {
      const at = stage ?? (await getStage(c, cur.stage_id));
      if (at) assertStageFits(closing, at);
    }
    await repo.updateDeal(
      tx,
      ctx.tenantId,
      id,
      {
        ...(title !== undefined && { title }),
        pipeline_id: pipelineId,
        stage_id: stage?.id ?? cur.stage_id,
        ...(valueCents !== undefined && { value_cents: valueCents }),
        ...(currency !== undefined && { currency }),
        ...(input.contactId !== undefined && { contact_id: input.contactId }),
        ...(input.companyId !== undefined && { company_id: input.companyId }),
        ...(input.ownerId !== undefined && { owner_id: input.ownerId }),
        ...(expectedCloseDate !== undefined && { expected_close_date: expectedCloseDate }),
        ...(customProperties !== undefined && { custom_properties: customProperties }),
        is_won: closing.isWon ? 1 : 0,
        is_lost: closing.isLost ? 1 : 0,
        closed_at: closing.closedAt,
        loss_reason_id: closing.lossReasonId,
        loss_notes: closing.lossNotes,
        updated_at: now,
      },
      cur,
    );
    if (input.tags !== undefined) await replaceRecordTags(tx, ctx.tenantId, 'deal', id, input.tags);
    await markChanged(tx, ctx.tenantId, 'deal');
    const deal = await getDeal(c, id);
    // C.4: every change is a deal.updated (expansions follow their ids); the spec's events keep theirs.
    await recordUpdated(tx, ctx, 'deal.updated', previous, deal, EXPANSIONS);
    await emitDealEvents(c, deal, { stageId: cur.stage_id, isWon: before.isWon, isLost: before.isLost });
    return deal;
  });
}

/** Fields of a deal read that expand one of its ids: a change of the id is the change. */
export const EXPANSIONS = ['contact', 'company'] as const;

/** Soft delete (spec 4.3); linked activities remain. Records `deal.deleted` with the deal as last read. */
export async function deleteDeal(ctx: Ctx, id: string): Promise<void> {
  await withTx(ctx.db, async (tx) => {
    const last = await getDeal(inTx(ctx, tx), id);
    const n = await repo.softDeleteDeal(tx, ctx.tenantId, id, nowIso());
    if (!n) throw errors.notFound('Deal not found');
    await recordEvent(tx, ctx, 'deal.deleted', last);
    await markChanged(tx, ctx.tenantId, 'deal');
  });
}

/** D.5: deals that named an erased contact keep their other fields, without it. Their ids. */
export function forgetContact(db: Db, tenantId: string, contactId: string, now: string): Promise<string[]> {
  return repo.clearContactReferences(db, tenantId, contactId, now);
}

/** D.2: deals that named a merged contact or company name the primary. How many moved. */
export function repointDeals(db: Db, tenantId: string, column: 'contact_id' | 'company_id', from: string, to: string, now: string): Promise<number> {
  return repo.repointDeals(db, tenantId, column, from, to, now);
}
