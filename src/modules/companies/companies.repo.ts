import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../db/index.js';
import { prepared } from '../../db/prepared.js';
import { containsExactly, dialectOf, searchMatches } from '../../db/dialect.js';
import { setWithSearchText, withSearchText } from '../../db/search-text.js';
import type { CompaniesTable } from '../../db/tables/records.js';
import type { CompanySortKey } from './companies.schema.js';
import { liveIdBy, softDeleteRow, updateLiveRow } from '../../db/live-rows.js';
import { JSON_COLUMN, OWNER_WALK, walkWhere, type JsonRecords, type Listing, type RowCondition, type SortTable } from '../../listing/descriptor.js';
import { liveRecordJsonById, recordJson } from '../shared/record-json.js';
import { liveTaggedByIds } from '../shared/record-tags.js';

const COLUMNS = ['id', 'name', 'cnpj', 'website', 'domain', 'phone', 'industry', 'owner_id', 'custom_properties', 'created_at', 'updated_at'] as const;
export type CompanyRow = Pick<CompaniesTable, (typeof COLUMNS)[number]> & { deleted_at?: string | null };
/** A row of a page: the company and its tag ids (`tag_ids`). */
export type ListedCompanyRow = CompanyRow & { tag_ids: string };

/** A live company as the API answers it, the JSON text its row stores (the single read's route). */
export const findCompanyJson = liveRecordJsonById('companies');

const findCompanyQuery = prepared((db: Db, tenantId: string, id: string) =>
  db
    .selectFrom('companies')
    .select([...COLUMNS, 'tag_ids'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null),
);

/** A live company and its tag ids, in one statement compiled once (the single-read path). */
export async function findCompany(db: Db, tenantId: string, id: string): Promise<ListedCompanyRow | undefined> {
  return (await findCompanyQuery(db, tenantId, id))[0];
}

/** The live companies among `ids` (any order) and their tag ids, in one statement compiled once (expansions). */
export const findCompanies = liveTaggedByIds<ListedCompanyRow>('companies', COLUMNS);

/** Live company holding a CNPJ / domain (both stored normalized). */
export function companyIdBy(db: Db, tenantId: string, column: 'cnpj' | 'domain', value: string): Promise<string | undefined> {
  return liveIdBy(db, 'companies', tenantId, column, value);
}

/** A company as services write it; the repo adds `search_text`. */
export type NewCompanyRow = Omit<CompaniesTable, 'search_text' | 'tag_ids' | 'doc'>;
/** The SET of an update; the repo recomputes `search_text` from it. */
export type CompanyChanges = Partial<NewCompanyRow>;

export async function insertCompany(db: Db, row: NewCompanyRow): Promise<void> {
  await db.insertInto('companies').values(withSearchText('companies', row)).execute();
}

/** Updates a live company; `current` is the row before (its searched fields refresh `search_text`). */
export function updateCompany(db: Db, tenantId: string, id: string, set: CompanyChanges, current: CompanyRow): Promise<number> {
  return updateLiveRow(db, 'companies', tenantId, id, setWithSearchText('companies', set, current));
}

export function softDeleteCompany(db: Db, tenantId: string, id: string, now: string): Promise<number> {
  return softDeleteRow(db, 'companies', tenantId, id, now);
}

/**
 * Clears `company_id` on the live contacts and deals of the tenant that point at the company and moves
 * their `updated_at`, so `updatedAfter` sync sees the change (B.3). Returns the ids of each that changed.
 */
export async function clearCompanyReferences(db: Db, tenantId: string, companyId: string, now: string): Promise<{ contacts: string[]; deals: string[] }> {
  const clear = async (table: 'contacts' | 'deals') => {
    const rows = await db
      .updateTable(table)
      .set({ company_id: null, updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('company_id', '=', companyId)
      .where('deleted_at', 'is', null)
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  };
  return { contacts: await clear('contacts'), deals: await clear('deals') };
}

export interface CompanyFilter {
  search?: string;
  /** `search` stripped of CNPJ punctuation and upper-cased (matched against the stored CNPJ). */
  cnpjSearch?: string;
  ownerId?: string;
  updatedAfter?: string;
  /** Soft-deleted companies too, with their `deleted_at` (C.1). */
  includeDeleted?: boolean;
}

const COMPANY_SORT: SortTable<CompanySortKey> = {
  createdAt: { column: 'created_at', nullable: false },
  updatedAt: { column: 'updated_at', nullable: false },
  name: { column: 'name', nullable: false, text: 'lower' },
  // Domains and CNPJs are stored normalized (lower-case host, upper-case CNPJ).
  domain: { column: 'domain', nullable: true, text: 'plain' },
  cnpj: { column: 'cnpj', nullable: true, text: 'plain' },
  industry: { column: 'industry', nullable: true, text: 'lower' },
};

/** The companies matching a filter (FROM … WHERE, no selection), and how to select a listed row. */
function companyListing(db: Db, tenantId: string, f: CompanyFilter) {
  let walk = db.selectFrom('companies').where('tenant_id', '=', tenantId);
  if (!f.includeDeleted) walk = walk.where('deleted_at', 'is', null);
  if (f.ownerId !== undefined) walk = walk.where('owner_id', '=', f.ownerId);
  const conditions: RowCondition[] = [];
  if (f.updatedAfter !== undefined) conditions.push({ where: sql<SqlBool>`(updated_at > ${f.updatedAfter})`, cost: 1 });
  if (f.search) {
    // Name, CNPJ, website and domain, folded (db/search-text.ts).
    const matches = searchMatches('search_text', f.search) as Expression<SqlBool>;
    // The CNPJ typed with its punctuation, against the stored CNPJ alone (digits and upper-case letters).
    conditions.push(f.cnpjSearch ? { where: sql<SqlBool>`(${matches} or ${containsExactly('cnpj', f.cnpjSearch)})`, cost: 4 } : { where: matches, cost: 2 });
  }
  // A page answers each row as the JSON its row stores (record-json.ts), tags included: one statement, one snapshot.
  const select = (qb: typeof walk) => qb.select(['id', recordJson(dialectOf(db), 'companies', f.includeDeleted === true).as(JSON_COLUMN)]);
  return walkWhere('companies', walk, conditions, select);
}

/** The companies' list (GET /companies): its records are the JSON their rows store; the owner's index and the time indexes are walked. */
export const COMPANY_LISTING: Listing<CompanyFilter, CompanySortKey> & { json: JsonRecords } = {
  sort: COMPANY_SORT,
  query: companyListing,
  compiledOnce: true,
  countCache: 'company',
  timeIndexes: { equality: OWNER_WALK },
  json: {},
};
