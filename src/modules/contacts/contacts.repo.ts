import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../db/index.js';
import { dialectOf, forUpdate, searchMatches } from '../../db/dialect.js';
import { setWithSearchText, withSearchText } from '../../db/search-text.js';
import { phoneSearchDigits } from '../../domain/phone.js';
import type { ContactsTable } from '../../db/tables/records.js';
import type { ContactSortKey } from './contacts.schema.js';
import { prepared } from '../../db/prepared.js';
import { liveTaggedByIds, parseTagIds } from '../shared/record-tags.js';
import { liveIdBy, softDeleteRow, updateLiveRow } from '../../db/live-rows.js';
import { JSON_COLUMN, OWNER_WALK, walkWhere, type JsonRecords, type Listing, type RowCondition, type SortTable } from '../../listing/descriptor.js';
import { liveRecordJsonById, recordJson } from '../shared/record-json.js';

const COLUMNS = [
  'id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'company_id',
  'owner_id',
  'score',
  'custom_properties',
  'created_at',
  'updated_at',
] as const;
export type ContactRow = Pick<ContactsTable, (typeof COLUMNS)[number]> & { deleted_at?: string | null };
/** A contact and its tag ids (`tag_ids`), as pages and single reads select it. */
export type ListedContactRow = ContactRow & { tag_ids: string };

/** Sort keys → columns. Names sort case-insensitively; e-mails are stored lower-cased already. */
const CONTACT_SORT: SortTable<ContactSortKey> = {
  createdAt: { column: 'created_at', nullable: false },
  updatedAt: { column: 'updated_at', nullable: false },
  firstName: { column: 'first_name', nullable: false, text: 'lower' },
  lastName: { column: 'last_name', nullable: true, text: 'lower' },
  email: { column: 'email', nullable: true, text: 'plain' },
  score: { column: 'score', nullable: true },
};

const live = (db: Db, tenantId: string) => db.selectFrom('contacts').where('tenant_id', '=', tenantId).where('deleted_at', 'is', null);

const findContactQuery = prepared((db: Db, tenantId: string, id: string) =>
  live(db, tenantId)
    .select([...COLUMNS, 'tag_ids'])
    .where('id', '=', id),
);

/** A live contact and its tag ids, in one statement (the single-read path). */
export async function findContact(db: Db, tenantId: string, id: string): Promise<ListedContactRow | undefined> {
  return (await findContactQuery(db, tenantId, id))[0];
}

/** A live contact as the API answers it, the JSON text its row stores (the single read's route). */
export const findContactJson = liveRecordJsonById('contacts');

/**
 * The same row, locked for the rest of the transaction where rows lock (PostgreSQL: forUpdate; PATCH merges
 * into it). Compiled once per database (prepared), so the dialect is asked once.
 */
const lockContactQuery = prepared((db: Db, tenantId: string, id: string) =>
  forUpdate(
    dialectOf(db),
    live(db, tenantId)
      .select([...COLUMNS, 'tag_ids'])
      .where('id', '=', id),
  ),
);

/**
 * A live contact and its tag ids (sorted), for the update that follows. PostgreSQL: the row is locked
 * (`FOR UPDATE`), and read as the concurrent update it waited for left it, its `tag_ids` included (a change
 * of its tags rewrites the row: migration 013). SQLite's writer holds the database's write lock already.
 */
export async function findContactForUpdate(db: Db, tenantId: string, id: string): Promise<{ row: ContactRow; tags: string[] } | undefined> {
  const row = (await lockContactQuery(db, tenantId, id))[0];
  return row && { row, tags: parseTagIds(row.tag_ids) };
}

/** The live contacts among `ids` (any order) and their tag ids, in one statement compiled once (expansions). */
export const findContacts = liveTaggedByIds<ListedContactRow>('contacts', COLUMNS);

/** A contact as services write it; the repo adds `search_text`. */
export type NewContactRow = Omit<ContactsTable, 'search_text' | 'tag_ids' | 'doc'>;
/** The SET of an update; the repo recomputes `search_text` from it. */
export type ContactChanges = Partial<NewContactRow>;

const INSERT_COLUMNS = [
  'tenant_id',
  'id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'company_id',
  'owner_id',
  'score',
  'custom_properties',
  'created_at',
  'updated_at',
  'deleted_at',
  'search_text',
] as const satisfies readonly (keyof ContactsTable)[];
// Compiled once: the insert of every create (a batch runs it 100 times).
const insertContactQuery = prepared((db: Db, ...v: unknown[]) =>
  db.insertInto('contacts').values(Object.fromEntries(INSERT_COLUMNS.map((c, i) => [c, v[i]])) as unknown as Omit<ContactsTable, 'tag_ids'>),
);

export async function insertContact(db: Db, row: NewContactRow): Promise<void> {
  const full = withSearchText('contacts', row);
  await insertContactQuery(db, ...INSERT_COLUMNS.map((c) => full[c]));
}

/** Updates a live contact; `current` is the row before (its searched fields refresh `search_text`). */
export async function updateContact(db: Db, tenantId: string, id: string, set: ContactChanges, current: ContactRow): Promise<void> {
  await updateLiveRow(db, 'contacts', tenantId, id, setWithSearchText('contacts', set, current));
}

export function softDeleteContact(db: Db, tenantId: string, id: string, now: string): Promise<number> {
  return softDeleteRow(db, 'contacts', tenantId, id, now);
}

/** Live contact holding an e-mail / phone (both stored normalized). */
export function contactIdBy(db: Db, tenantId: string, column: 'email' | 'phone', value: string): Promise<string | undefined> {
  return liveIdBy(db, 'contacts', tenantId, column, value);
}

/** Live companies whose `domain` is `domain` (at most 2: the caller only needs to know "exactly one"). */
const companiesByDomainQuery = prepared((db: Db, tenantId: string, domain: string, limit: number) =>
  db.selectFrom('companies').select('id').where('tenant_id', '=', tenantId).where('domain', '=', domain).where('deleted_at', 'is', null).limit(limit),
);

export async function companyIdsByDomain(db: Db, tenantId: string, domain: string): Promise<string[]> {
  return (await companiesByDomainQuery(db, tenantId, domain, 2)).map((r) => r.id);
}

export interface ContactFilter {
  /** Compiled filter of POST /contacts/search, with its cost (db/filter-sql.ts FilterParts.rowCost). */
  filter?: RowCondition;
  search?: string;
  ownerId?: string;
  /** Normalized ISO timestamp; strict `>`. */
  updatedAfter?: string;
  /** Soft-deleted contacts too, with their `deleted_at` (C.1). */
  includeDeleted?: boolean;
}

/** The contacts matching a filter (FROM … WHERE, no selection), and how to select a listed row. */
function contactListing(db: Db, tenantId: string, q: ContactFilter) {
  let walk = q.includeDeleted ? db.selectFrom('contacts').where('tenant_id', '=', tenantId) : live(db, tenantId);
  if (q.ownerId !== undefined) walk = walk.where('owner_id', '=', q.ownerId);
  const conditions: RowCondition[] = [];
  if (q.updatedAfter !== undefined) conditions.push({ where: sql<SqlBool>`(updated_at > ${q.updatedAfter})`, cost: 1 });
  if (q.filter) conditions.push(q.filter);
  const needle = q.search?.trim();
  if (needle) {
    const digits = phoneSearchDigits(needle);
    // Full name "first last" and e-mail, folded (db/search-text.ts).
    const matches = searchMatches('search_text', needle) as Expression<SqlBool>;
    conditions.push(digits ? { where: sql<SqlBool>`(${matches} or (phone like ${'%' + digits + '%'}))`, cost: 3 } : { where: matches, cost: 2 });
  }
  // A page answers each row as the JSON its row stores (record-json.ts), tags included: one statement, one snapshot.
  const select = (qb: typeof walk) => qb.select(['id', recordJson(dialectOf(db), 'contacts', q.includeDeleted === true).as(JSON_COLUMN)]);
  return walkWhere('contacts', walk, conditions, select);
}

/**
 * The contacts' list (GET /contacts, POST /contacts/search): its records are the JSON their rows store; the owner's
 * index (contacts__owner) and the time indexes are walked.
 */
export const CONTACT_LISTING: Listing<ContactFilter, ContactSortKey> & { json: JsonRecords } = {
  sort: CONTACT_SORT,
  query: contactListing,
  compiledOnce: true,
  countCache: 'contact',
  timeIndexes: { equality: OWNER_WALK },
  json: {},
};

/** D.2: contacts (deleted ones too) of a merged company belong to the primary (their updatedAt moves); how many. */
export async function repointCompany(db: Db, tenantId: string, from: string, to: string, now: string): Promise<number> {
  const r = await db
    .updateTable('contacts')
    .set({ company_id: to, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('company_id', '=', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
