/**
 * The statements of a list's page that every database runs (the planner: src/listing/planner.ts): a list's rows in
 * its order, by offset or after a keyset position, compiled once with markers where a page's own values go and
 * re-bound with each page's (`slotted`/`rebound`, prepared.ts). SQLite's further statements (probes, counted pages,
 * pages read as one BLOB) are in pages-sqlite.ts.
 */
import { RawNode, sql, type CompiledQuery, type Expression, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { sortableText, type SqlDialect } from './dialect.js';
import type { Db } from './types.js';
import { flatSql, slotted, type SlottedQuery } from './prepared.js';

export type SortOrder = 'asc' | 'desc';

/** One sort key of a resource: its column, whether it may be empty, and how text compares. */
export interface SortColumn {
  column: string;
  nullable: boolean;
  /** Text keys compare by code point (`sortableText`); `lower` also ignores case. */
  text?: 'lower' | 'plain';
}

/** A list's query: the filtered FROM … WHERE (no selection; the same query counts the total), and the row's columns. */
export interface ListingQuery {
  base: SelectQueryBuilder<any, any, {}>;
  /**
   * Adds the row's columns to a query built on `base`. Contacts, companies and deals select their id and the record
   * as the API answers it, the JSON text their row stores (JSON_COLUMN: modules/shared/record-json.ts).
   */
  select: (q: SelectQueryBuilder<any, any, {}>) => SelectQueryBuilder<any, any, any>;
  /**
   * `base` split for a probe (pages-sqlite.ts compileProbe): `walk` holds only the conditions of the index walk
   * (tenant, live, an owner), `rowFilter` every other one. `walk` where `rowFilter` selects the rows `base` selects.
   */
  probe?: { walk: SelectQueryBuilder<any, any, {}>; rowFilter: Expression<SqlBool>; rowCost: number };
  /** The table `base` selects from, unaliased: its rows are looked up by rowid (SQLite; compileProbe, compileCounted). */
  table?: string;
}

/** What a page's statements need to know of its list: its order, and its tie-breaking unique column. */
export interface PageOrder {
  sort: { order: SortOrder; column: SortColumn };
  /** Tie-breaking unique column (`id`, or `m.object_id` for list members). */
  idColumn?: string;
}

/** The database a page is read from. */
export interface PageDb {
  db: Db;
  dialect: SqlDialect;
}

/** The column of a JSON listing's rows (ListingQuery.select) that holds the record. */
export const JSON_COLUMN = '__json';
/** The alias of the page statement's row in the SQL that makes a record of it (pages-sqlite.ts pageAsBlob, a deal's splice). */
export const BLOB_PAGE = '__page';
/** The column of a page's rows that holds the row's sort value (the next cursor's position). */
export const SORT_VALUE = '__sort_value';

/** A page's rows as read: with the list's total when the statement told it, and their records as one BLOB (pageAsBlob). */
export interface PageRows {
  rows: Record<string, unknown>[];
  total?: number;
  json?: Buffer;
}

/** A position in a list's order: the last row's sort value (null when empty) and its id. */
export type Position = [value: string | number | null, id: string];

/** Stand-ins compiled where a page's own values go; each found again among the compiled parameters. */
export const LIMIT = Symbol('limit');
export const OFFSET = Symbol('offset');
const AFTER_VALUE = Symbol('after value');
const AFTER_ID = Symbol('after id');
/** The change version a sampled page's statement expects to see (its guard: page-samples.ts versionGuard). */
export const VERSION = Symbol('version');
const MARKERS = [LIMIT, OFFSET, AFTER_VALUE, AFTER_ID, VERSION] as const;

/** A page's values in the order of MARKERS. */
export function pageValues(after: Position | undefined, limit: number, offset: number | undefined, version?: number): unknown[] {
  return [limit, offset, after?.[0], after?.[1], version];
}

/**
 * A page's statement: first page by keyset, by offset, or after a position with a value or with none; `*Skip`:
 * after a position, then an offset, under a guard on the change version (a page by number read from a sampled
 * position: page-samples.ts).
 */
export type Mode = 'first' | 'offset' | 'after' | 'afterNull' | 'afterSkip' | 'afterNullSkip';

export function modeOf(after: Position | undefined, offset: number | undefined): Mode {
  return after ? (after[0] === null ? 'afterNull' : 'after') : offset === undefined ? 'first' : 'offset';
}

export type Selection = SelectQueryBuilder<any, any, any>;

/** The name a selected column has in a row: `m.object_id` → `object_id`. */
export const columnName = (ref: string) => ref.replace(/^.*\./, '');

/**
 * A compiled statement as a list keeps it: its SQL and parameters, without the tree of operation nodes Kysely
 * compiled it from (only the builders of writes read it back, to shape their results). The trees were most of a
 * list's memory: 1,100 name searches, each a list of its own, held 16.5 MiB more once a list kept a third
 * statement (compileCounted).
 */
export function kept<R>(compiled: CompiledQuery<R>): CompiledQuery<R> {
  return { ...compiled, sql: flatSql(compiled.sql), query: SHAPE_NODE };
}
const SHAPE_NODE = RawNode.createWithSql('');

/** The list's sort key, and `q` limited to the rows after the page's position (modes `after*`) in its order. */
export function ordering(dialect: SqlDialect, spec: PageOrder, mode: Mode) {
  const { order, column } = spec.sort;
  const idColumn = spec.idColumn ?? 'id';
  const idRef = sql.ref(idColumn);
  const key: RawBuilder<unknown> = column.text ? sortableText(dialect, column.column, column.text === 'lower') : sql`${sql.ref(column.column)}`;
  // Sorted by the unique column itself (the event log's position): one key, so `(key, id) > (v, id)`
  // would only hide the index range from the planner.
  const byId = column.column === idColumn && !column.text && !column.nullable;
  const inOrder = (q: Selection): Selection => {
    if (mode.startsWith('after')) {
      const pos: [unknown, unknown] = [mode.startsWith('afterNull') ? null : AFTER_VALUE, AFTER_ID];
      q = q.where(byId ? sql<boolean>`${idRef} ${sql.raw(order === 'asc' ? '>' : '<')} ${AFTER_ID}` : keysetAfter(key, idRef, column.nullable, order, pos));
    }
    return sortBy(q, key, idRef);
  };
  /**
   * `q` in the list's order, by `keyRef` then `idRef`: the key and id themselves, or the columns of a selection
   * that holds them (compileCounted).
   */
  const sortBy = <Q extends Selection>(q: Q, keyRef: Expression<unknown>, idRef: Expression<unknown>): Q => {
    // NOTE: empty values sort last in both directions on both dialects (B.4 leaves it open; SQLite's
    // default is first ascending, PostgreSQL's first descending). SQLite has NULLS LAST since 3.30.
    if (!byId) {
      q = q.orderBy(keyRef, (ob) => {
        const o = order === 'asc' ? ob.asc() : ob.desc();
        return column.nullable ? o.nullsLast() : o;
      }) as Q;
    }
    return q.orderBy(idRef, order) as Q;
  };
  return { key, byId, inOrder, sortBy };
}

/**
 * Rows strictly after `pos` in the order (key [nulls last], id). Row values keep the predicate an index
 * range on (tenant_id, key, id) where such an index exists: page 10,000 costs what page 1 costs.
 */
function keysetAfter(
  key: RawBuilder<unknown>,
  id: RawBuilder<unknown>,
  nullable: boolean,
  order: SortOrder,
  pos: [value: unknown, id: unknown],
): RawBuilder<boolean> {
  const op = sql.raw(order === 'asc' ? '>' : '<');
  const [value, lastId] = pos;
  // Past the last non-empty value only empty ones remain, ordered by id.
  if (value === null) return sql<boolean>`(${key} is null and ${id} ${op} ${lastId})`;
  const beyond = sql<boolean>`((${key}, ${id}) ${op} (${value}, ${lastId}))`;
  return nullable ? sql<boolean>`(${beyond} or ${key} is null)` : beyond;
}

/** Checks that every value of a page was compiled as a parameter, and keeps where each one goes. */
export function slottedPage(q: Selection, mode: Mode, byId: boolean): SlottedQuery {
  const plan = slotted(kept(q.compile()), MARKERS);
  const skips = mode.endsWith('Skip');
  const expected = [
    0,
    ...(mode === 'offset' || skips ? [1] : []),
    ...((mode === 'after' || mode === 'afterSkip') && !byId ? [2] : []),
    ...(mode.startsWith('after') ? [3] : []),
    ...(skips ? [4] : []),
  ];
  if (expected.some((m) => !plan.slots.includes(m))) throw new Error(`listing: a page's own value was not compiled as a parameter (${mode})`);
  return plan;
}

/**
 * The rows of a list in its order (after a position in modes `after*`), with markers for the page's values; in
 * modes `*Skip`, only while `guard` holds (page-samples.ts versionGuard, with the VERSION marker).
 */
export function compilePlan(dialect: SqlDialect, spec: PageOrder, built: ListingQuery, mode: Mode, guard?: Expression<SqlBool>): SlottedQuery {
  const { key, byId, inOrder } = ordering(dialect, spec, mode);
  const skips = mode.endsWith('Skip');
  if (skips && !guard) throw new Error(`listing: a page in mode ${mode} needs its guard`);
  const base = skips ? built.base.where(guard!) : built.base;
  let q = inOrder(built.select(base).select(key.as(SORT_VALUE))).limit(LIMIT as unknown as number);
  if (mode === 'offset' || skips) q = q.offset(OFFSET as unknown as number);
  return slottedPage(q, mode, byId);
}
