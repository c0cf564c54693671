import { sql, type SelectQueryBuilder } from 'kysely';
import type { Reads } from '../../db/reads.js';
import type { Db } from '../../db/index.js';
import { containsInsensitive, forUpdate, type SqlDialect } from '../../db/dialect.js';
import type { DealsTable } from '../../db/tables/records.js';
import type { DB } from '../../db/tables/schema.js';
import type { DealSortKey } from './deals.schema.js';
import { selectInChunks } from '../../db/batch.js';
import { cachedCount } from '../../db/count-cache.js';
import { softDeleteRow, updateLiveRow } from '../../db/live-rows.js';

const COLUMNS = [
  'id', 'title', 'pipeline_id', 'stage_id', 'value_cents', 'currency', 'contact_id', 'company_id', 'owner_id',
  'expected_close_date', 'custom_properties', 'is_won', 'is_lost', 'closed_at', 'loss_reason_id', 'loss_notes',
  'created_at', 'updated_at',
] as const;
export type DealRow = Pick<DealsTable, (typeof COLUMNS)[number]>;

export function findDeal(db: Db, dialect: SqlDialect, tenantId: string, id: string, lock = false): Promise<DealRow | undefined> {
  const q = db.selectFrom('deals').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id).where('deleted_at', 'is', null);
  return (lock ? forUpdate(dialect, q) : q).executeTakeFirst();
}

export function findDeals(db: Db, tenantId: string, ids: string[]): Promise<DealRow[]> {
  return selectInChunks(ids, (chunk) =>
    db.selectFrom('deals').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', 'in', chunk).where('deleted_at', 'is', null).execute(),
  );
}

export async function insertDeal(db: Db, row: DealsTable): Promise<void> {
  await db.insertInto('deals').values(row).execute();
}

export async function updateDeal(db: Db, tenantId: string, id: string, set: Partial<DealsTable>): Promise<void> {
  await updateLiveRow(db, 'deals', tenantId, id, set);
}

export function softDeleteDeal(db: Db, tenantId: string, id: string, now: string): Promise<number> {
  return softDeleteRow(db, 'deals', tenantId, id, now);
}

export interface StageRow {
  id: string;
  pipeline_id: string;
  is_won_stage: number;
  is_lost_stage: number;
}

export interface DealFilters {
  pipelineId?: string;
  stageId?: string;
  ownerId?: string;
  contactId?: string;
  companyId?: string;
  isWon?: boolean;
  isLost?: boolean;
  /** Inclusive bounds in cents. */
  valueMinCents?: number;
  valueMaxCents?: number;
  /** Inclusive bounds, normalized UTC ISO timestamps. */
  closedAtFrom?: string;
  closedAtTo?: string;
  search?: string;
}

const SORT_COLUMNS: Record<DealSortKey, 'updated_at' | 'created_at' | 'title' | 'value_cents' | 'expected_close_date' | 'closed_at'> = {
  updatedAt: 'updated_at',
  createdAt: 'created_at',
  title: 'title',
  value: 'value_cents',
  expectedCloseDate: 'expected_close_date',
  closedAt: 'closed_at',
};
const NULLABLE_SORT = new Set(['value_cents', 'expected_close_date', 'closed_at']);

function filtered(db: Db, tenantId: string, f: DealFilters): SelectQueryBuilder<DB, 'deals', {}> {
  let q = db.selectFrom('deals').where('tenant_id', '=', tenantId).where('deleted_at', 'is', null);
  if (f.pipelineId !== undefined) q = q.where('pipeline_id', '=', f.pipelineId);
  if (f.stageId !== undefined) q = q.where('stage_id', '=', f.stageId);
  if (f.ownerId !== undefined) q = q.where('owner_id', '=', f.ownerId);
  if (f.contactId !== undefined) q = q.where('contact_id', '=', f.contactId);
  if (f.companyId !== undefined) q = q.where('company_id', '=', f.companyId);
  if (f.isWon !== undefined) q = q.where('is_won', '=', f.isWon ? 1 : 0);
  if (f.isLost !== undefined) q = q.where('is_lost', '=', f.isLost ? 1 : 0);
  if (f.valueMinCents !== undefined) q = q.where('value_cents', '>=', f.valueMinCents);
  if (f.valueMaxCents !== undefined) q = q.where('value_cents', '<=', f.valueMaxCents);
  if (f.closedAtFrom !== undefined) q = q.where('closed_at', '>=', f.closedAtFrom);
  if (f.closedAtTo !== undefined) q = q.where('closed_at', '<=', f.closedAtTo);
  if (f.search) q = q.where(containsInsensitive('title', f.search));
  return q;
}

export async function countDeals(reads: Reads, tenantId: string, f: DealFilters): Promise<number> {
  return cachedCount(reads, tenantId, 'deal', filtered(reads.db, tenantId, f).select((eb) => eb.fn.countAll<number>().as('n')));
}

export async function listDeals(
  reads: Reads,
  tenantId: string,
  f: DealFilters,
  sort: { key: DealSortKey; order: 'asc' | 'desc' },
  limit: number,
  offset: number,
): Promise<DealRow[]> {
  const column = SORT_COLUMNS[sort.key];
  let q = filtered(reads.db, tenantId, f).select(COLUMNS);
  // NOTE: SQLite sorts NULL first and PostgreSQL last; empty values go last in both, whatever the direction.
  if (NULLABLE_SORT.has(column)) q = q.orderBy(sql`case when ${sql.ref(column)} is null then 1 else 0 end`);
  // Titles sort case-insensitively (same order on both dialects for ASCII letters).
  q = column === 'title' ? q.orderBy(sql`lower(title)`, sort.order) : q.orderBy(column, sort.order);
  return reads.all(q.orderBy('id', sort.order).limit(limit).offset(offset));
}

export interface ContactDealRow {
  id: string;
  title: string;
  stage_id: string;
  pipeline_id: string;
  value_cents: number | null;
  currency: string;
  is_won: number;
  is_lost: number;
  updated_at: string;
}

/** Deals of a contact: open first, then most recently updated (spec 4.1). */
export function dealsOfContact(db: Db, tenantId: string, contactId: string): Promise<ContactDealRow[]> {
  return db
    .selectFrom('deals')
    .select(['id', 'title', 'stage_id', 'pipeline_id', 'value_cents', 'currency', 'is_won', 'is_lost', 'updated_at'])
    .where('tenant_id', '=', tenantId)
    .where('contact_id', '=', contactId)
    .where('deleted_at', 'is', null)
    .orderBy(sql`case when is_won = 0 and is_lost = 0 then 0 else 1 end`)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Stage lookup, used only until/unless the pipelines service answers (same shape). */
export function findStage(db: Db, tenantId: string, stageId: string): Promise<StageRow | undefined> {
  return db
    .selectFrom('stages')
    .select(['id', 'pipeline_id', 'is_won_stage', 'is_lost_stage'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', stageId)
    .executeTakeFirst();
}
