/**
 * What a resource tells the listing about itself (STYLE "One listing layer", CONTRACT B.4 and C.1): one
 * descriptor, its sort keys, its query for a set of filters, the indexes its table walks by time, and how a
 * listed record is read. The planner (planner.ts) alone decides from it how each page is read.
 */
import { sql, type Expression, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { CountedType } from '../db/count-cache.js';
import type { Db } from '../db/types.js';
import type { ListingQuery, SortColumn, SortOrder } from '../db/pages.js';
import type { RecordSql } from '../db/fast-pages.js';

export { BLOB_PAGE, JSON_COLUMN, type ListingQuery, type SortColumn, type SortOrder } from '../db/pages.js';
export type { RecordSql } from '../db/fast-pages.js';

export type SortTable<K extends string> = Record<K, SortColumn>;

/** What the client asked for: a page number or a cursor (never both), and the page size. */
export interface PageRequest {
  page?: number;
  pageSize: number;
  cursor?: string;
}

/**
 * A condition tested on each row of a listing's index walk (walkWhere), and what testing one row costs, in
 * simple comparisons: a column against a value 1, a folded text search 2–4, a list of n values n, a condition
 * that reads another table (a tag) Infinity. A page is probed only when their sum is at most PROBE_MAX_ROW_COST.
 */
export interface RowCondition {
  where: Expression<SqlBool>;
  cost: number;
}

/**
 * The index a table has over its live rows for one filter set to one value, in a list's time order then id: a
 * walk of Listing.timeIndexes when that filter is set.
 */
export interface EqualityWalk {
  /** The filter whose column leads the index after the tenant. */
  filter: 'ownerId' | 'pipelineId';
  /** The sort key whose column follows it in the index. */
  sortKey: 'createdAt' | 'updatedAt';
}

/** contacts__owner and companies__owner (tenant_id, owner_id, created_at, id; migration 011). */
export const OWNER_WALK: EqualityWalk = { filter: 'ownerId', sortKey: 'createdAt' };
/** deals__pipeline_updated (tenant_id, pipeline_id, updated_at, id, is_won, is_lost, stage_id; migration 016). */
export const PIPELINE_WALK: EqualityWalk = { filter: 'pipelineId', sortKey: 'updatedAt' };

/** A listed record read as the JSON text its row stores (JSON_COLUMN), as the API answers it. */
export interface JsonRecords {
  /**
   * SQL over a page statement's row that gives the whole record, for the pages whose records the database joins
   * itself (db/pages-sqlite.ts pageAsBlob). Unset: the record is JSON_COLUMN as selected.
   */
  recordSql?: RecordSql;
  /**
   * The records of a page read row by row, in order, when JSON_COLUMN alone is not the record (a deal's contact and
   * company: modules/deals/deals.repo.ts). Unset: each row's JSON_COLUMN.
   */
  complete?: (db: Db, tenantId: string, rows: readonly Record<string, unknown>[]) => Promise<string[]>;
}

/** A resource's list: everything the planner needs to know of it. `F`: its filters; `K`: its sort keys. */
export interface Listing<F, K extends string = string> {
  /** Sort keys → columns. */
  sort: SortTable<K>;
  /**
   * The list's query for a tenant and filters (ListingQuery: FROM … WHERE, and the row's columns); `db` is the
   * database the page is read from. The same filters must give the same query, unless the request says otherwise
   * (ListingRequest.readsDefinitions).
   */
  query: (db: Db, tenantId: string, filters: F) => ListingQuery;
  /**
   * Set when `query` depends on nothing but the tenant and the filters (no clock, no per-tenant definitions): its
   * statements are then built and compiled once per list and re-bound with each page's values. Unset: built on every page.
   */
  compiledOnce?: boolean;
  /** Tie-breaking unique column (`id`, or `m.object_id` for list members). */
  idColumn?: string;
  /** Totals of this object type are cached against their change version (db/count-cache.ts). */
  countCache?: CountedType;
  /**
   * The table has, over its live rows, an index on (tenant_id, created_at, id), one on (tenant_id, updated_at, id),
   * and one on a filter's column then a time (`equality`), and `query` splits its filters with walkWhere.
   * test/db/list-index.test.ts checks the plans of every shape a resource declares.
   */
  timeIndexes?: { equality: EqualityWalk };
  /** Set when each row's record is JSON text (JSON_COLUMN); unset, the rows are the page's data as selected. */
  json?: JsonRecords;
}

/** A page of a Listing as a service asks for it. */
export interface ListingRequest<F, K extends string = string> extends PageRequest {
  sortKey: K;
  order: SortOrder;
  filters: F;
  /** Bound into every cursor: the API key, the endpoint (with its path ids) and the filters (`boundFilters`). */
  keyId: string;
  endpoint: string;
  /** What cursors bind of the filters when it is not `filters` (a search binds its body's filters). */
  boundFilters?: unknown;
  /** The query reads definitions that can change under the same filters (custom properties' types): built anew every page. */
  readsDefinitions?: boolean;
}

/**
 * A listing's `base` from its index walk over `table` (selected from it, not aliased) and the conditions tested
 * on each row (ANDed), with its probe (ListingQuery.probe) when there are any, priced by the sum of their costs,
 * and the columns a page selects (`select`): the one way contacts, companies and deals split their filters.
 */
export function walkWhere<Q extends SelectQueryBuilder<any, any, {}>, S>(
  table: string,
  walk: Q,
  conditions: RowCondition[],
  select: (qb: Q) => S,
): Pick<ListingQuery, 'probe' | 'table'> & { base: Q; select: (qb: Q) => S } {
  if (conditions.length === 0) return { base: walk, table, select };
  const rowFilter =
    conditions.length === 1
      ? conditions[0].where
      : sql<SqlBool>`(${sql.join(
          conditions.map((c) => c.where),
          sql` and `,
        )})`;
  const rowCost = conditions.reduce((sum, c) => sum + c.cost, 0);
  return { base: walk.where(rowFilter) as Q, table, probe: { walk, rowFilter, rowCost }, select };
}
