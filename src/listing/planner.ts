/**
 * The page planner (STYLE "One listing layer", CONTRACT B.4 and C.1): every paginated endpoint's page is read
 * here, from its resource's descriptor (descriptor.ts Listing), so empty values, text collation, the offset guard,
 * the cached total and keyset cursors follow one rule everywhere. It alone decides where a page is read (the main
 * connection or the read pool) and how (an index walk, a probe, a counted page, records as one BLOB); the
 * statements are db/pages.ts's and, on SQLite, db/pages-sqlite.ts's.
 */
import { LRUCache } from 'lru-cache';
import type { Compilable, CompiledQuery } from 'kysely';
import { cachedCount, peekCount, type CountedType } from '../db/count-cache.js';
import { COUNTED_ROWS, PROBE_ROWS, sqlitePagesOf, type RecordSql } from '../db/fast-pages.js';
import {
  columnName,
  compilePlan,
  JSON_COLUMN,
  kept,
  modeOf,
  pageValues,
  SORT_VALUE,
  type ListingQuery,
  type Mode,
  type PageRows,
  type Position,
  type SortColumn,
  type SortOrder,
} from '../db/pages.js';
import { currentSamples, PAGE_SAMPLES, sampleLater, samplesQuery, sampleStats, versionGuard } from '../db/page-samples.js';
import { rebound, type SlottedQuery } from '../db/prepared.js';
import { directReads } from '../db/reads.js';
import type { Ctx } from '../http/context.js';
import { assertCursorOrPage, type Page } from '../http/pagination.js';
import type { JsonText } from '../http/replies.js';
import type { PaginationT } from '../http/schemas.js';
import { cursorBinding, decodeCursor, encodeCursor, filtersDigest, sortValueOf, stableJson } from './cursor.js';
import type { EqualityWalk, JsonRecords, Listing, ListingRequest, PageRequest } from './descriptor.js';
import { jsonBytesPage, jsonPage, type ListPage } from './page.js';

export { COUNTED_ROWS, PROBE_ROWS } from '../db/fast-pages.js';

/**
 * A page of a resource's records as JSON (Listing.json): the records the database made, as one BLOB when the page
 * came as one, else their texts (completed by Listing.json.complete when the row's JSON is not the whole record).
 */
export async function recordsPage<T, F, K extends string>(
  ctx: Ctx,
  listing: Listing<F, K> & { json: JsonRecords },
  req: ListingRequest<F, K>,
): Promise<ListPage<T>> {
  const listed = await listPage<Record<string, unknown>>(ctx, specOf(ctx, listing, req), req);
  if (listed.json) return jsonBytesPage<T>(listed.json, listed.pagination);
  const { complete } = listing.json;
  const records = complete ? await complete(ctx.db, ctx.tenantId, listed.rows) : listed.rows.map((r) => r[JSON_COLUMN] as string);
  return jsonPage(records as JsonText<T>[], listed.pagination);
}

/** A page of a resource's rows as its query selects them (a Listing without `json`): the service makes its records of them. */
export async function rowsPage<R, F, K extends string>(ctx: Ctx, listing: Listing<F, K>, req: ListingRequest<F, K>): Promise<Page<R>> {
  const { rows, pagination } = await listPage<R>(ctx, specOf(ctx, listing, req), req);
  return { data: rows, pagination };
}

/** The plan of a page of `listing`: where and how it may be read (see ListingSpec). */
function specOf<F, K extends string>(ctx: Ctx, listing: Listing<F, K>, req: Omit<ListingRequest<F, K>, 'page' | 'pageSize' | 'cursor'>): ListingSpec {
  const { sortKey, filters } = req;
  const walks = listing.timeIndexes;
  return {
    query: () => listing.query(ctx.reads.db, ctx.tenantId, filters),
    compiledOnce: listing.compiledOnce === true && req.readsDefinitions !== true,
    idColumn: listing.idColumn,
    sort: { key: sortKey, order: req.order, column: listing.sort[sortKey] },
    countCache: listing.countCache,
    walksIndex: walks !== undefined && walksTimeIndex(sortKey, filters as object, walks.equality),
    probes: walks !== undefined && probesTimeIndex(sortKey, filters as object, walks.equality),
    jsonBlob: listing.json !== undefined,
    blobRecord: listing.json?.recordSql,
    keyId: req.keyId,
    endpoint: req.endpoint,
    filters: req.boundFilters === undefined ? filters : req.boundFilters,
  };
}

/** How a page of one list is read: what a resource's descriptor and a request tell the planner. */
export interface ListingSpec {
  /** Builds the list's query; called only when its statements are not compiled already (`compiledOnce`). */
  query: () => ListingQuery;
  /**
   * Set when `query()` depends on nothing but the tenant, `endpoint` and `filters` (no clock, no per-tenant
   * definitions such as custom property types): its statements are then built and compiled once per shape and
   * re-bound with each page's limit, offset and cursor position (compiledShape). Unset: built on every page.
   */
  compiledOnce?: boolean;
  /** Tie-breaking unique column (`id`, or `m.object_id` for list members). */
  idColumn?: string;
  sort: { key: string; order: SortOrder; column: SortColumn };
  /** Bound into every cursor: the API key, the endpoint (with its path ids) and the normalized filters. */
  keyId: string;
  endpoint: string;
  filters: unknown;
  /** Totals of these object types are cached against their change version (db/count-cache.ts). */
  countCache?: CountedType;
  /**
   * Set when `base` has no condition but its index's own (tenant, live, an owner) and an index of that table is
   * ordered by the sort key then id (walksTimeIndex): a page then reads at most offset + pageSize + 1 entries of
   * that index, whatever the tenant's size, and runs on the main connection (reads.ts).
   */
  walksIndex?: boolean;
  /**
   * Set when `query().probe`'s walk is an index walk as walksIndex describes (tenant, live, an owner; sorted by that
   * index: probesTimeIndex). When testing a row against its `rowFilter` is cheap too (`rowCost` at most
   * PROBE_MAX_ROW_COST), a page of the filtered list is first looked for among the first PROBE_ROWS entries of the
   * walk, on the main connection (SQLite); only when they do not hold it does it go to the read pool.
   */
  probes?: boolean;
  /**
   * The rows' records are JSON text (JSON_COLUMN). On SQLite, a page read on the main connection (walksIndex,
   * probes) then comes from one statement row: the records joined by commas as one BLOB (ListedPage.json), and
   * each row's id, sort value and byte length (db/pages-sqlite.ts pageAsBlob).
   */
  jsonBlob?: boolean;
  /** With jsonBlob: the record a BLOB holds in place of its JSON_COLUMN (JsonRecords.recordSql). */
  blobRecord?: RecordSql;
}

export interface ListedPage<R> {
  rows: R[];
  pagination: PaginationT;
  /**
   * With ListingSpec.jsonBlob, when the page came as one BLOB: the records of `rows`, in order, their JSON joined by
   * commas, as UTF-8 bytes; `rows` then hold no JSON_COLUMN.
   */
  json?: Buffer;
}

/** Offsets past this are answered without reading rows (`page` has no upper bound; B.2 never 5xx). */
const MAX_OFFSET = 2 ** 48;
/**
 * The deepest offset a page that walks its index (ListingSpec.walksIndex) reads on the main connection.
 * Skipping an index entry costs ~50 ns on SQLite (a page of 50 takes 170–200 µs at offsets 0 to 1,000, 430 µs at
 * 5,000, 2.6 ms at 50,000), so up to here a page costs what a page costs. Deeper pages by number are read after
 * their list's samples (sampledRows) on the main connection or, while the list has none, on the read pool, with
 * its deadline (cursors stay on the main connection at any depth).
 */
export const MAIN_MAX_OFFSET = 1_000;
/** The most a probe's row filter may cost per row (the sum of its RowCondition costs: simple comparisons). */
export const PROBE_MAX_ROW_COST = 8;
/** After a probe of a list found too few rows, its pages as deep or deeper go straight to the pool this long. */
const PROBE_RETRY_MS = 10_000;

/** One page, by number (offset) or after a cursor (keyset on sort key, id). */
export async function listPage<R>(ctx: Ctx, spec: ListingSpec, req: PageRequest): Promise<ListedPage<R>> {
  assertCursorOrPage(req);
  const shape = compiledShape(ctx, spec);
  const after = req.cursor === undefined ? undefined : decodeCursor(ctx.config, shape.binding(spec.keyId), req.cursor);
  const { reads } = ctx;
  const { pageSize } = req;
  const page = req.page ?? 1;
  const offset = (page - 1) * pageSize;
  // Bounded by the page (see walksIndex): the hop to a read process would cost more than the statement.
  const onMain = spec.walksIndex && (after || offset <= MAIN_MAX_OFFSET);
  const rowReads = onMain ? directReads(ctx.db) : reads;
  const sqlite = sqlitePagesOf(ctx.dialect);
  const pooledSqlite = !onMain && reads.pooled && sqlite !== undefined;
  const asBlob = spec.jsonBlob === true && sqlite !== undefined;
  /**
   * The page's rows: from a probe when it holds them (ListingSpec.probes), or by its statement; for a page by
   * number whose total is not cached, with the total when one statement can tell both (db/pages-sqlite.ts compileCounted).
   */
  const read = async (limit: number, at: number | undefined): Promise<PageRows> => {
    if (pooledSqlite && spec.probes && (at ?? 0) + limit <= PROBE_ROWS) {
      const found = await shape.probe(after, limit, at, asBlob);
      if (found) return found;
    }
    if (pooledSqlite && spec.countCache && at !== undefined && at + limit <= COUNTED_ROWS) {
      const counted = await shape.counted(spec.countCache, limit, at);
      if (counted) return counted;
    }
    if (onMain && asBlob) return shape.blobRows(after, limit, at);
    return { rows: (await rowReads.all(shape.rows(after, limit, at))) as Record<string, unknown>[] };
  };

  const count = async (): Promise<number> => {
    const { query, key } = shape.count();
    if (spec.countCache) return cachedCount(reads, ctx.tenantId, spec.countCache, query, key);
    return Number((await reads.first({ compile: () => query }))?.n ?? 0);
  };

  if (after) {
    // One extra row tells whether another page follows, without a second query.
    const { rows: fetched, json: fetchedJson } = await read(pageSize + 1, undefined);
    const more = fetched.length > pageSize;
    const rows = fetched.slice(0, pageSize);
    const json = fetchedJson && more ? sqlite!.withoutLast(fetchedJson, fetched) : fetchedJson;
    const total = await count();
    return {
      rows: rows as R[],
      pagination: { page: null, pageSize, total, totalPages: null, hasNext: more, hasPrev: null, nextCursor: shape.next(rows, more) },
      json,
    };
  }

  const inRange = Number.isSafeInteger(offset) && offset <= MAX_OFFSET;
  // Past the pages read on the main connection or probed: from the list's samples, when it has current ones.
  const sampled = inRange && spec.countCache && offset + pageSize > MAIN_MAX_OFFSET ? await shape.sampled(spec, pageSize, offset, asBlob) : undefined;
  const { rows, total: told, json } = sampled ?? (inRange ? await read(pageSize, offset) : ({ rows: [] } as PageRows));
  // A partial page (or an empty first page) already tells the total; count only otherwise.
  const total = told ?? ((rows.length > 0 || offset === 0) && rows.length < pageSize ? offset + rows.length : await count());
  const totalPages = Math.ceil(total / pageSize);
  const hasNext = page < totalPages;
  return {
    rows: rows as R[],
    pagination: { page, pageSize, total, totalPages, hasNext, hasPrev: page > 1, nextCursor: shape.next(rows, hasNext) },
    json,
  };
}

/**
 * One page of a resource's rows by keyset only, from the start of its list or after a cursor, with no total: for a
 * log that grows without bound (the event log), where counting would cost what reading it all costs. Same cursors,
 * binding and order as recordsPage and rowsPage.
 */
export function keysetPage<R, F, K extends string>(
  ctx: Ctx,
  listing: Listing<F, K>,
  req: Omit<ListingRequest<F, K>, 'page'>,
): Promise<{ rows: R[]; hasNext: boolean; nextCursor: string | null }> {
  return keysetRows<R>(ctx, specOf(ctx, listing, req), req);
}

/** The cursor that continues a keysetPage of `listing` after `row`, one of its rows (read with any key's request). */
export function keysetCursor<F, K extends string>(
  ctx: Ctx,
  listing: Listing<F, K>,
  req: Omit<ListingRequest<F, K>, 'page'>,
  row: Record<string, unknown>,
): string {
  const spec = specOf(ctx, listing, req);
  return cursorAfter(ctx, compiledShape(ctx, spec).binding(spec.keyId), spec.idColumn ?? 'id', row);
}

/** keysetPage of a ListingSpec. */
async function keysetRows<R>(
  ctx: Ctx,
  spec: Omit<ListingSpec, 'countCache'>,
  req: { pageSize: number; cursor?: string },
): Promise<{ rows: R[]; hasNext: boolean; nextCursor: string | null }> {
  const shape = compiledShape(ctx, spec);
  const after = req.cursor === undefined ? undefined : decodeCursor(ctx.config, shape.binding(spec.keyId), req.cursor);
  const fetched = await ctx.reads.all(shape.rows(after, req.pageSize + 1, undefined));
  const more = fetched.length > req.pageSize;
  const rows = fetched.slice(0, req.pageSize) as Record<string, unknown>[];
  return { rows: rows as R[], hasNext: more, nextCursor: shape.next(rows, more) };
}

function cursorAfter(ctx: Ctx, binding: string, idColumn: string, row: Record<string, unknown>): string {
  return encodeCursor(ctx.config, binding, [sortValueOf(row[SORT_VALUE]), String(row[columnName(idColumn)])]);
}

/**
 * ListingSpec.walksIndex for a Listing with timeIndexes (contacts, companies, deals): a page walks one of its
 * table's time indexes when every filter is unset but that index's equality filter, and it sorts by that index's
 * time. Any other filter, set to anything, sends the page to the read pool.
 */
function walksTimeIndex(sortKey: string, filters: object, equality: EqualityWalk): boolean {
  return timeWalk(sortKey, filters as Record<string, unknown>, equality, false);
}

/**
 * ListingSpec.probes for the same tables: the page's walk (tenant, live, the equality filter when set) is one
 * that walksTimeIndex allows. Whether its row conditions are cheap enough is the query's to tell (walkWhere).
 */
function probesTimeIndex(sortKey: string, filters: object, equality: EqualityWalk): boolean {
  return timeWalk(sortKey, filters as Record<string, unknown>, equality, true);
}

/** Both of the above, on every page: a loop over the filters' keys, no copy of them. */
function timeWalk(sortKey: string, filters: Record<string, unknown>, equality: EqualityWalk, othersAllowed: boolean): boolean {
  if (filters.includeDeleted) return false;
  if (!othersAllowed) {
    for (const key in filters) if (key !== equality.filter && key !== 'includeDeleted' && filters[key] !== undefined) return false;
  }
  if (filters[equality.filter] !== undefined) return sortKey === equality.sortKey;
  return sortKey === 'createdAt' || sortKey === 'updatedAt';
}

// ------------------------------------------------------------------------------------------------
// Statements compiled once per shape. Building and compiling a page's query with Kysely cost about a third
// of a page's CPU on SQLite (a page of 50: ~740 µs of server CPU with it, ~520 without; the builders copy and
// freeze their nodes at every call), and a page of a given list differs
// from the next one only in its limit, offset and cursor position. So a list whose query depends on nothing
// but the tenant, its endpoint and its filters (ListingSpec.compiledOnce) keeps, per shape, each statement
// compiled with markers in those places, and re-binds them (`slotted`/`rebound`, db/prepared.ts, which single
// reads' `prepared()` uses too): the same SQL text and the same values Kysely would give.

interface Shape {
  /** The cursor binding's digest of the filters (the rest is bound per call: the statements do not depend on it). */
  filtersHash: string;
  plans: Partial<Record<Mode, SlottedQuery>>;
  /** The probes' statements (db/pages-sqlite.ts probePlan), by mode. */
  probes: Partial<Record<Mode, SlottedQuery>>;
  /**
   * The last probe of this list that found too few rows, by page number and by cursor: when (epoch ms), and how
   * deep its page ended (offset + rows; for a cursor, the rows). A page as deep or deeper skips the probe for a while.
   */
  probeMissed: { byPage?: { at: number; depth: number }; byCursor?: { at: number; depth: number } };
  /** Set when the list's query has no probe (ListingQuery.probe). */
  unprobed?: boolean;
  /** The counted page's statement (compileCounted), and when one last read COUNTED_ROWS rows (its total then counted apart). */
  counted?: SlottedQuery;
  countedFull?: number;
  count?: { query: CompiledQuery<{ n: number | string | bigint }>; key: string };
}

/**
 * Shapes per database adapter (SQLite and PostgreSQL compile differently), the least recently used dropped first
 * (lru-cache: db/count-cache.ts says why not a Map).
 */
const shapes = new WeakMap<object, LRUCache<string, Shape>>();
const MAX_SHAPES = 2_000;

interface CompiledShape {
  binding(keyId: string): string;
  rows(after: Position | undefined, limit: number, offset: number | undefined): Compilable<Record<string, unknown>>;
  /** The page's rows from a probe on the main connection, or undefined when the probe cannot tell them. */
  probe(after: Position | undefined, limit: number, offset: number | undefined, asBlob: boolean): Promise<PageRows | undefined>;
  /** The page's rows by its statement on the main connection, their records as one BLOB (pageAsBlob; SQLite). */
  blobRows(after: Position | undefined, limit: number, offset: number | undefined): Promise<PageRows>;
  /**
   * A page by number and the list's total (when under COUNTED_ROWS) from one statement on the read pool, the total
   * then cached; undefined when the total is cached already or the list has no table to look its rows up in.
   */
  counted(type: CountedType, limit: number, offset: number): Promise<PageRows | undefined>;
  /** A page by number read after the list's sample before it, with its total (sampledRows); undefined when it cannot be. */
  sampled(spec: ListingSpec, limit: number, offset: number, asBlob: boolean): Promise<PageRows | undefined>;
  count(): { query: CompiledQuery<{ n: number | string | bigint }>; key: string };
  next(rows: Record<string, unknown>[], more: boolean): string | null;
}

/** The shape of `spec`'s list: kept per tenant, endpoint, order and filters when it is compiled once, else new. */
function shapeOf(ctx: Ctx, spec: Omit<ListingSpec, 'countCache'>): Shape {
  const filtersJson = stableJson(spec.filters);
  if (!spec.compiledOnce) return newShape(filtersJson);
  const adapter = ctx.db.getExecutor().adapter;
  let byKey = shapes.get(adapter);
  if (!byKey) shapes.set(adapter, (byKey = new LRUCache({ max: MAX_SHAPES })));
  const key = JSON.stringify([ctx.tenantId, spec.endpoint, spec.sort.key, spec.sort.order, spec.idColumn ?? 'id', filtersJson]);
  let shape = byKey.get(key);
  if (!shape) byKey.set(key, (shape = newShape(filtersJson)));
  return shape;
}

function compiledShape(ctx: Ctx, spec: Omit<ListingSpec, 'countCache'>): CompiledShape {
  const s = shapeOf(ctx, spec);
  let built: ListingQuery | undefined;
  const query = () => (built ??= spec.query());
  const idColumn = spec.idColumn ?? 'id';
  /** The page's statement of a mode, compiled at its first use. */
  const planOf = (mode: Mode) => (s.plans[mode] ??= compilePlan(ctx.dialect, spec, query(), mode));
  const binding = (keyId: string) => cursorBinding(ctx.tenantId, keyId, spec.endpoint, spec.sort.key, spec.sort.order, s.filtersHash);
  const sqlite = () => sqlitePagesOf(ctx.dialect)!;
  return {
    binding,
    rows(after, limit, offset) {
      const plan = planOf(modeOf(after, offset));
      const compiled = rebound<Record<string, unknown>>(plan, pageValues(after, limit, offset));
      return { compile: () => compiled };
    },
    async probe(after, limit, offset, asBlob) {
      if (s.unprobed) return undefined;
      const depth = (offset ?? 0) + limit;
      const missedHere = after ? 'byCursor' : 'byPage';
      const missed = s.probeMissed[missedHere];
      if (missed && depth >= missed.depth && Date.now() - missed.at < PROBE_RETRY_MS) return undefined;
      const mode = modeOf(after, offset);
      if (!s.probes[mode]) {
        // A list with nothing to test on its rows has no probe (its statement is the walk), nor one whose test costs too much.
        const p = query().probe;
        if (!p || p.rowCost > PROBE_MAX_ROW_COST) return void (s.unprobed = true);
        s.probes[mode] = await sqlite().probePlan(ctx, spec, query(), mode);
      }
      const found = await sqlite().probePage(ctx.db, s.probes[mode]!, pageValues(after, limit, offset), idColumn, asBlob, spec.blobRecord);
      if (found) return found;
      s.probeMissed[missedHere] = { at: Date.now(), depth };
      return undefined;
    },
    blobRows(after, limit, offset) {
      return sqlite().pageAsBlob(ctx.db, planOf(modeOf(after, offset)), pageValues(after, limit, offset), idColumn, false, spec.blobRecord);
    },
    async counted(type, limit, offset) {
      if (s.countedFull !== undefined && Date.now() - s.countedFull < PROBE_RETRY_MS) return undefined;
      if (!s.counted && !query().table) return undefined;
      const { reads } = ctx;
      const cached = await peekCount(reads.db, ctx.tenantId, type, this.count().key);
      if (!cached || cached.total !== undefined) return undefined;
      const plan = (s.counted ??= sqlite().compileCounted(ctx, spec, query()));
      const { rows, read } = await sqlite().countedPage(reads, plan, limit, offset);
      // No row, no total (a page past the list's end): counted apart.
      if (read === undefined) return { rows };
      if (read < COUNTED_ROWS) {
        cached.remember(read);
        return { rows, total: read };
      }
      s.countedFull = Date.now();
      return { rows };
    },
    sampled(full, limit, offset, asBlob) {
      return sampledRows(ctx, full, s, query, this.count().key, limit, offset, asBlob);
    },
    count() {
      if (!s.count) {
        const compiled = kept(
          query()
            .base.select((eb) => eb.fn.countAll<number>().as('n'))
            .compile(),
        );
        s.count = { query: compiled, key: `${compiled.sql}\u0001${JSON.stringify(compiled.parameters)}` };
      }
      return s.count;
    },
    next(rows, more) {
      const last = rows[rows.length - 1];
      if (!more || !last) return null;
      return cursorAfter(ctx, binding(spec.keyId), idColumn, last);
    },
  };
}

/**
 * A page by number of a list whose total is cached, read after the sample (db/page-samples.ts) just before its
 * offset, with the rest of the offset (under a stride) skipped: the cost of a cursor's page whatever the depth. Read
 * on the main connection when the list walks its index (ListingSpec.walksIndex: at most a stride of entries more
 * than a cursor's page), else on the read pool. Undefined (the page is read as before) while the total or the
 * samples of the list's current version are missing (they are then sampled in the background), or when a write
 * moved the version under the page's statement (its guard then returns no rows; exactness: page-samples.ts).
 */
async function sampledRows(
  ctx: Ctx,
  spec: ListingSpec,
  s: Shape,
  query: () => ListingQuery,
  countKey: string,
  limit: number,
  offset: number,
  asBlob: boolean,
): Promise<PageRows | undefined> {
  const type = spec.countCache!;
  const peek = await peekCount(ctx.reads.db, ctx.tenantId, type, countKey);
  if (!peek) return undefined;
  const total = peek.total;
  // Past the end: no row, in the state the cached total is of (as a plain OFFSET would read it).
  if (total !== undefined && offset >= total) return { rows: [], total };
  const adapter = ctx.db.getExecutor().adapter;
  const key = JSON.stringify([ctx.tenantId, type, countKey, spec.sort.key, spec.sort.order, spec.idColumn ?? 'id']);
  const samples = currentSamples(adapter, key, peek.version);
  if (!samples) {
    const position = (row: Record<string, unknown>): Position => [sortValueOf(row[SORT_VALUE]), String(row.__id)];
    sampleLater(adapter, key, ctx.reads, () => samplesQuery(ctx, spec, query(), PAGE_SAMPLES.stride, ctx.tenantId, type), position);
    return undefined;
  }
  // Not counted at this version yet: the plain page counts it.
  if (total === undefined) return undefined;
  const j = Math.floor(offset / samples.stride);
  const at = samples.positions[j - 1];
  if (at === undefined) return undefined;
  const mode: Mode = at[0] === null ? 'afterNullSkip' : 'afterSkip';
  const plan = (s.plans[mode] ??= compilePlan(ctx.dialect, spec, query(), mode, versionGuard(ctx.tenantId, type)));
  const values = pageValues(at, limit, offset - j * samples.stride, peek.version);
  const sqlite = sqlitePagesOf(ctx.dialect);
  const found: PageRows =
    spec.walksIndex && asBlob
      ? await sqlite!.pageAsBlob(ctx.db, plan, values, spec.idColumn ?? 'id', false, spec.blobRecord)
      : {
          rows: (await (spec.walksIndex ? directReads(ctx.db) : ctx.reads).all({ compile: () => rebound<Record<string, unknown>>(plan, values) })) as Record<
            string,
            unknown
          >[],
        };
  // The rows the page holds in the state of `version`; none: the guard saw another version.
  if (found.rows.length !== Math.min(limit, total - offset)) return undefined;
  sampleStats.pages++;
  return { ...found, total };
}

function newShape(filtersJson: string): Shape {
  return { filtersHash: filtersDigest(filtersJson), plans: {}, probes: {}, probeMissed: {} };
}
