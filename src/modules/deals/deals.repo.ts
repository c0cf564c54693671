import { expressionBuilder, sql, type Expression, type SqlBool } from 'kysely';
import type { DB } from '../../db/tables/schema.js';
import type { Db } from '../../db/index.js';
import { prepared } from '../../db/prepared.js';
import { liveTaggedByIds } from '../shared/record-tags.js';
import { dialectOf, forUpdate, searchMatches, type SqlDialect } from '../../db/dialect.js';
import { nullMemberText, positionSql } from '../../db/json-splice.js';
import { setWithSearchText, withSearchText } from '../../db/search-text.js';
import type { DealsTable } from '../../db/tables/records.js';
import type { DealSortKey } from './deals.schema.js';
import { softDeleteRow, updateLiveRow } from '../../db/live-rows.js';
import {
  BLOB_PAGE,
  JSON_COLUMN,
  PIPELINE_WALK,
  walkWhere,
  type JsonRecords,
  type Listing,
  type RowCondition,
  type SortTable,
} from '../../listing/descriptor.js';
import { liveRecordJsonByIds, recordJson } from '../shared/record-json.js';

const COLUMNS = [
  'id',
  'title',
  'pipeline_id',
  'stage_id',
  'value_cents',
  'currency',
  'contact_id',
  'company_id',
  'owner_id',
  'expected_close_date',
  'custom_properties',
  'is_won',
  'is_lost',
  'closed_at',
  'loss_reason_id',
  'loss_notes',
  'created_at',
  'updated_at',
] as const;
export type DealRow = Pick<DealsTable, (typeof COLUMNS)[number]> & { deleted_at?: string | null };

function liveDeal(db: Db, tenantId: string, id: string) {
  return db.selectFrom('deals').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id).where('deleted_at', 'is', null);
}

/**
 * A live deal and its tag ids, locked for the update that follows (PostgreSQL; dialect.ts forUpdate): read as
 * a concurrent update it waited for left it, `tag_ids` included (a change of its tags rewrites the row).
 */
export function findDealForUpdate(db: Db, dialect: SqlDialect, tenantId: string, id: string): Promise<(DealRow & { tag_ids: string }) | undefined> {
  return forUpdate(dialect, liveDeal(db, tenantId, id).select('tag_ids')).executeTakeFirst();
}

const findDealQuery = prepared((db: Db, tenantId: string, id: string) => liveDeal(db, tenantId, id).select('tag_ids'));

/** A live deal and its tag ids, in one statement compiled once (the single-read path). */
export async function findDeal(db: Db, tenantId: string, id: string): Promise<(DealRow & { tag_ids: string }) | undefined> {
  return (await findDealQuery(db, tenantId, id))[0];
}

/** A deal as the list and the single read answer it: its stored JSON (`doc`, migration 017) and what it expands. */
interface DealJsonRow {
  tenant_id: string;
  id: string;
  contact_id: string | null;
  company_id: string | null;
  [JSON_COLUMN]: string;
}

/** What a deal's JSON needs of its row (spliceDeals, dealRecordSql), with recordJson's `doc`. */
function jsonColumns(db: Db, withDeleted: boolean) {
  return ['tenant_id', 'id', 'contact_id', 'company_id', recordJson(dialectOf(db), 'deals', withDeleted).as(JSON_COLUMN)] as const;
}

/**
 * Where a deal's stored JSON (`doc`, migration 017) holds its contact and company: the first occurrence of each in
 * its text (every field before them is a string, a number or null, and a JSON string holds no unescaped quote),
 * as the database writes a null member (db/json-splice.ts nullMemberText).
 */
function spliceKeys(dialect: SqlDialect): { contact: string; company: string } {
  let keys = spliceKeysOf.get(dialect);
  if (!keys) spliceKeysOf.set(dialect, (keys = { contact: nullMemberText(dialect, 'contact'), company: nullMemberText(dialect, 'company') }));
  return keys;
}
const spliceKeysOf = new WeakMap<SqlDialect, { contact: string; company: string }>();

/**
 * A deal as its answer holds it, in SQL over a row of jsonColumns aliased BLOB_PAGE: its stored JSON with its live
 * contact's and company's stored JSON in place of their nulls, as spliceDeals splices them in JavaScript, each read by
 * primary key. For a row that is already its page's (a subquery in a SELECT list may run before PostgreSQL's OFFSET
 * drops the row): the single read, and on SQLite the pages read as one BLOB (DEAL_LISTING's recordSql). Both
 * databases' instr/strpos and substr count characters.
 */
export function dealRecordSql(dialect: SqlDialect): string {
  const row = (column: string) => `"${BLOB_PAGE}"."${column}"`;
  const json = row(JSON_COLUMN);
  const { contact, company } = spliceKeys(dialect);
  const at = (key: string) => positionSql(dialect, json, key);
  const doc = (table: string, column: string) =>
    `coalesce((select doc from ${table} where tenant_id = ${row('tenant_id')} and id = ${row(column)} and deleted_at is null), 'null')`;
  const NULL = 'null'.length;
  return (
    `(case when ${row('contact_id')} is null and ${row('company_id')} is null then ${json} else ` +
    `substr(${json}, 1, ${at(contact)} + ${contact.length - NULL - 1}) || ${doc('contacts', 'contact_id')} || ` +
    `substr(${json}, ${at(contact)} + ${contact.length}, ${at(company)} + ${company.length - NULL} - ${at(contact)} - ${contact.length}) || ` +
    `${doc('companies', 'company_id')} || substr(${json}, ${at(company)} + ${company.length}) end)`
  );
}

const findDealJsonQuery = prepared((db: Db, tenantId: string, id: string) =>
  db
    .selectFrom(
      db
        .selectFrom('deals')
        .select(jsonColumns(db, false))
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .as(BLOB_PAGE),
    )
    .select(sql<string>`${sql.raw(dealRecordSql(dialectOf(db)))}`.as(JSON_COLUMN)),
);

/** A live deal as its answer holds it (dealRecordSql: its contact and company in it), in one statement compiled once (`GET /deals/:id`). */
export async function findDealJson(db: Db, tenantId: string, id: string): Promise<string | undefined> {
  return (await findDealJsonQuery(db, tenantId, id))[0]?.[JSON_COLUMN];
}

/** The live deals among `ids` (any order) and their tag ids, in one statement compiled once (expansions). */
export const findDeals = liveTaggedByIds<DealRow & { tag_ids: string }>('deals', COLUMNS);

/** A deal as services write it; the repo adds `search_text`. */
export type NewDealRow = Omit<DealsTable, 'search_text' | 'tag_ids' | 'doc'>;
/** The SET of an update; the repo recomputes `search_text` from it. */
export type DealChanges = Partial<NewDealRow>;

export async function insertDeal(db: Db, row: NewDealRow): Promise<void> {
  await db.insertInto('deals').values(withSearchText('deals', row)).execute();
}

/** Updates a live deal; `current` is the row before (its title refreshes `search_text`). */
export async function updateDeal(db: Db, tenantId: string, id: string, set: DealChanges, current: DealRow): Promise<void> {
  await updateLiveRow(db, 'deals', tenantId, id, setWithSearchText('deals', set, current));
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
  /** Normalized ISO timestamp; strict `>`. */
  updatedAfter?: string;
  /** Soft-deleted deals too, with their `deleted_at` (C.1). */
  includeDeleted?: boolean;
}

const DEAL_SORT: SortTable<DealSortKey> = {
  updatedAt: { column: 'updated_at', nullable: false },
  createdAt: { column: 'created_at', nullable: false },
  title: { column: 'title', nullable: false, text: 'lower' },
  value: { column: 'value_cents', nullable: true },
  expectedCloseDate: { column: 'expected_close_date', nullable: true },
  closedAt: { column: 'closed_at', nullable: true },
};

/** The deals matching the filters (FROM … WHERE, no selection), and how to select a listed row. */
function dealListing(db: Db, tenantId: string, f: DealFilters) {
  let walk = db.selectFrom('deals').where('tenant_id', '=', tenantId);
  if (!f.includeDeleted) walk = walk.where('deleted_at', 'is', null);
  // The pipeline is the walk's: deals__pipeline_updated (migration 016, PIPELINE_WALK). Every other
  // filter is tested on the walk's entries where that index holds its column (state, stage), else on the rows.
  if (f.pipelineId !== undefined) walk = walk.where('pipeline_id', '=', f.pipelineId);
  const eb = expressionBuilder<DB, 'deals'>();
  const conditions: RowCondition[] = [];
  /** A column compared with a value: one comparison a row. */
  const compare = (where: Expression<SqlBool>) => conditions.push({ where, cost: 1 });
  if (f.stageId !== undefined) compare(eb('stage_id', '=', f.stageId));
  if (f.ownerId !== undefined) compare(eb('owner_id', '=', f.ownerId));
  if (f.contactId !== undefined) compare(eb('contact_id', '=', f.contactId));
  if (f.companyId !== undefined) compare(eb('company_id', '=', f.companyId));
  if (f.isWon !== undefined) compare(eb('is_won', '=', f.isWon ? 1 : 0));
  if (f.isLost !== undefined) compare(eb('is_lost', '=', f.isLost ? 1 : 0));
  if (f.valueMinCents !== undefined) compare(eb('value_cents', '>=', f.valueMinCents));
  if (f.valueMaxCents !== undefined) compare(eb('value_cents', '<=', f.valueMaxCents));
  if (f.closedAtFrom !== undefined) compare(eb('closed_at', '>=', f.closedAtFrom));
  if (f.closedAtTo !== undefined) compare(eb('closed_at', '<=', f.closedAtTo));
  if (f.updatedAfter !== undefined) compare(eb('updated_at', '>', f.updatedAfter));
  // The title, folded (db/search-text.ts).
  if (f.search) conditions.push({ where: searchMatches('search_text', f.search) as Expression<SqlBool>, cost: 2 });
  // A page's deals are their stored JSON (DealJsonRow), `deletedAt` appended with includeDeleted (C.1).
  const select = (qb: typeof walk) => qb.select(jsonColumns(db, f.includeDeleted === true));
  return walkWhere('deals', walk, conditions, select);
}

const contactsJson = liveRecordJsonByIds('contacts');
const companiesJson = liveRecordJsonByIds('companies');
const NULL_LENGTH = 'null'.length;

/** The distinct ids of a column of deal rows, nulls left out. */
const distinctIds = (rows: readonly DealJsonRow[], column: 'contact_id' | 'company_id') => [
  ...new Set(rows.map((r) => r[column]).filter((x): x is string => x !== null)),
];

/**
 * Deals as their answer holds them, for the pages whose statement does not splice them itself (the read pool's and
 * PostgreSQL's; dealRecordSql does the same in SQL for the others and the single read): each deal's JSON as its row
 * stores it (`doc`, migration 017: the deal's fields, its contact and company null), and its contact and company as
 * the JSON their rows store (`doc`, migration 014), put in place of those two nulls (spliceKeys).
 *
 * Why: a page of 50 deals expanded 50 contacts and up to 50 companies into objects and built 50 deals, each read
 * from the driver a value per column (~0.25 µs each on SQLite, db/row-objects.ts), then serialized them all again.
 * The stored JSON is one value a record, sent as it is.
 *
 * The splice is exact: the first `"contact":null` of the text is the deal's own key, because every field before
 * it (id, title, pipelineId, stageId, value, currency, contactId) holds a string, a number or null, and a string
 * cannot hold an unescaped quote; `"company":null` likewise, found before anything goes in. test/db/json-records
 * reads every deal so made against the service's expanded objects.
 */
async function spliceDeals(db: Db, tenantId: string, listed: readonly Record<string, unknown>[]): Promise<string[]> {
  const rows = listed as unknown as readonly DealJsonRow[];
  if (rows.length === 0) return [];
  const contacts = await contactsJson(db, tenantId, distinctIds(rows, 'contact_id'));
  const companies = await companiesJson(db, tenantId, distinctIds(rows, 'company_id'));
  const keys = spliceKeys(dialectOf(db));
  return rows.map((r) => {
    const text = r[JSON_COLUMN];
    const contact = r.contact_id === null ? undefined : contacts.get(r.contact_id);
    const company = r.company_id === null ? undefined : companies.get(r.company_id);
    if (contact === undefined && company === undefined) return text;
    const c = text.indexOf(keys.contact) + keys.contact.length;
    const k = text.indexOf(keys.company) + keys.company.length;
    return text.slice(0, c - NULL_LENGTH) + (contact ?? 'null') + text.slice(c, k - NULL_LENGTH) + (company ?? 'null') + text.slice(k);
  });
}

/**
 * The deals' list (GET /deals): its records are the deals' stored JSON with their contact and company spliced in
 * (by the statement, dealRecordSql, where the database joins a page's records itself; else spliceDeals); the
 * pipeline's index (deals__pipeline_updated) and the time indexes are walked.
 */
export const DEAL_LISTING: Listing<DealFilters, DealSortKey> & { json: JsonRecords } = {
  sort: DEAL_SORT,
  query: dealListing,
  compiledOnce: true,
  countCache: 'deal',
  timeIndexes: { equality: PIPELINE_WALK },
  json: { recordSql: dealRecordSql, complete: spliceDeals },
};

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

/** D.5: the tenant's deals (deleted ones too) that named an erased contact lose it (their updatedAt moves); their ids. */
export async function clearContactReferences(db: Db, tenantId: string, contactId: string, now: string): Promise<string[]> {
  const rows = await db
    .updateTable('deals')
    .set({ contact_id: null, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('contact_id', '=', contactId)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** D.2: deals (deleted ones too) that named `from` in `column` name `to` (their updatedAt moves); how many. */
export async function repointDeals(db: Db, tenantId: string, column: 'contact_id' | 'company_id', from: string, to: string, now: string): Promise<number> {
  const r = await db
    .updateTable('deals')
    .set({ [column]: to, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where(column, '=', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
