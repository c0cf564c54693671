import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { searchMatches } from '../../db/dialect.js';
import { softDeleteRow } from '../../db/live-rows.js';
import { setWithSearchText, withSearchText } from '../../db/search-text.js';
import type { ProposalItemsTable, ProposalsTable } from '../../db/tables/records.js';
import type { Listing, SortTable } from '../../listing/descriptor.js';
import type { ProposalSortKey } from './proposals.schema.js';
import { extended } from '../../util/objects.js';

const COLUMNS = [
  'id',
  'number',
  'subject',
  'status',
  'sent_at',
  'deal_id',
  'contact_id',
  'client_id',
  'recipient_name',
  'recipient_email',
  'discount_cents',
  'adjustment_cents',
  'subtotal_cents',
  'total_cents',
  'notes',
  'owner_id',
  'created_at',
  'updated_at',
] as const;
export type ProposalRow = Pick<ProposalsTable, (typeof COLUMNS)[number]> & { deleted_at?: string | null };
const ITEM_COLUMNS = ['proposal_id', 'id', 'position', 'name', 'description', 'qty', 'unit', 'rate', 'discount_pct', 'tax_pct', 'total_cents'] as const;
export type ItemRow = Pick<ProposalItemsTable, (typeof ITEM_COLUMNS)[number]>;

export function findProposal(db: Db, tenantId: string, id: string): Promise<ProposalRow | undefined> {
  return db.selectFrom('proposals').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

export interface ProposalFilter {
  status?: string;
  search?: string;
  contactId?: string;
  clientId?: string;
  dealId?: string;
  /** Normalized ISO timestamp; strict `>`. */
  updatedAfter?: string;
  /** Soft-deleted proposals too, with their `deleted_at` (C.1). */
  includeDeleted?: boolean;
}

const PROPOSAL_SORT: SortTable<ProposalSortKey> = {
  createdAt: { column: 'created_at', nullable: false },
  updatedAt: { column: 'updated_at', nullable: false },
  number: { column: 'number', nullable: false, text: 'plain' },
  subject: { column: 'subject', nullable: false, text: 'lower' },
  status: { column: 'status', nullable: false, text: 'plain' },
  sentAt: { column: 'sent_at', nullable: true },
  subtotal: { column: 'subtotal_cents', nullable: false },
  total: { column: 'total_cents', nullable: false },
};

function filtered(db: Db, tenantId: string, f: ProposalFilter) {
  let q = db.selectFrom('proposals').where('tenant_id', '=', tenantId);
  if (!f.includeDeleted) q = q.where('deleted_at', 'is', null);
  if (f.updatedAfter !== undefined) q = q.where('updated_at', '>', f.updatedAfter);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.contactId !== undefined) q = q.where('contact_id', '=', f.contactId);
  if (f.clientId !== undefined) q = q.where('client_id', '=', f.clientId);
  if (f.dealId !== undefined) q = q.where('deal_id', '=', f.dealId);
  if (f.search) {
    const needle = f.search;
    // Number and subject, folded (db/search-text.ts).
    q = q.where(searchMatches('search_text', needle));
  }
  return q;
}

/** The proposals matching a filter (FROM … WHERE, no selection), and how to select a listed row. */
function proposalListing(db: Db, tenantId: string, f: ProposalFilter) {
  const base = filtered(db, tenantId, f);
  const select = (qb: typeof base) => (f.includeDeleted ? qb.select([...COLUMNS, 'deleted_at']) : qb.select(COLUMNS));
  return { base, select };
}

/** The proposals' list (GET /proposals): their rows, which the service expands. */
export const PROPOSAL_LISTING: Listing<ProposalFilter, ProposalSortKey> = { sort: PROPOSAL_SORT, query: proposalListing };

/** Items of several proposals, each list in position order. */
export async function itemsOf(db: Db, tenantId: string, proposalIds: string[]): Promise<Map<string, ItemRow[]>> {
  const out = new Map<string, ItemRow[]>(proposalIds.map((id) => [id, []]));
  if (proposalIds.length === 0) return out;
  const rows = await db
    .selectFrom('proposal_items')
    .select(ITEM_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('proposal_id', 'in', proposalIds)
    .orderBy('proposal_id')
    .orderBy('position')
    .execute();
  for (const r of rows) out.get(r.proposal_id)?.push(r);
  return out;
}

/**
 * Next number of the tenant's sequence for `year`, atomically: the upsert takes the counter row's lock
 * until the caller's transaction ends, so concurrent creations get distinct consecutive numbers.
 */
export async function nextSequence(db: Db, tenantId: string, year: number): Promise<number> {
  const r = await db
    .insertInto('proposal_counters')
    .values({ tenant_id: tenantId, year, last_seq: 1 })
    .onConflict((oc) => oc.columns(['tenant_id', 'year']).doUpdateSet({ last_seq: sql<number>`proposal_counters.last_seq + 1` }))
    .returning('last_seq')
    .executeTakeFirstOrThrow();
  return Number(r.last_seq);
}

/** A proposal as services write it; the repo adds `search_text`. */
export type NewProposalRow = Omit<ProposalsTable, 'search_text'>;
/** The SET of an update; the repo recomputes `search_text` from it. */
export type ProposalChanges = Partial<NewProposalRow>;

export async function insertProposal(db: Db, row: NewProposalRow): Promise<void> {
  await db.insertInto('proposals').values(withSearchText('proposals', row)).execute();
}

/**
 * Updates a live proposal as it was read (`current`): only while its status is still `current.status`;
 * its number and subject refresh `search_text`.
 */
export async function updateProposal(db: Db, tenantId: string, id: string, set: ProposalChanges, current: ProposalRow): Promise<number> {
  const r = await db
    .updateTable('proposals')
    .set(setWithSearchText('proposals', set, current))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .where('status', '=', current.status)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export function softDeleteProposal(db: Db, tenantId: string, id: string, now: string): Promise<number> {
  return softDeleteRow(db, 'proposals', tenantId, id, now);
}

export async function replaceItems(
  db: Db,
  tenantId: string,
  proposalId: string,
  items: Omit<ProposalItemsTable, 'tenant_id' | 'proposal_id'>[],
): Promise<void> {
  await db.deleteFrom('proposal_items').where('tenant_id', '=', tenantId).where('proposal_id', '=', proposalId).execute();
  for (let i = 0; i < items.length; i += 200) {
    await db
      .insertInto('proposal_items')
      .values(items.slice(i, i + 200).map((it) => extended(it, { tenant_id: tenantId, proposal_id: proposalId })))
      .execute();
  }
}

/** D.5: the tenant's proposals (deleted ones too) that named an erased contact lose it (their updatedAt moves). */
export async function clearContactReferences(db: Db, tenantId: string, contactId: string, now: string): Promise<void> {
  await db.updateTable('proposals').set({ contact_id: null, updated_at: now }).where('tenant_id', '=', tenantId).where('contact_id', '=', contactId).execute();
}

/** D.2: proposals (deleted ones too) that named `from` in `column` name `to` (their updatedAt moves). */
export async function repointProposals(db: Db, tenantId: string, column: 'contact_id' | 'client_id', from: string, to: string, now: string): Promise<void> {
  await db
    .updateTable('proposals')
    .set({ [column]: to, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where(column, '=', from)
    .execute();
}
