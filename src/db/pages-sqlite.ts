/**
 * SQLite's page statements beyond a list's plain one (pages.ts compilePlan): probes of an index walk, counted
 * pages, and pages whose JSON records come as one BLOB. The planner (src/listing/planner.ts) decides when each
 * runs; sqlitePagesOf tells whether a database has them.
 */
import { CompiledQuery, sql, type QueryCreator, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { sqliteDialect, type SqlDialect } from './dialect.js';
import type { Db } from './types.js';
import { flatSql, rebound, type SlottedQuery } from './prepared.js';
import { directReads, type Reads } from './reads.js';
import {
  columnName,
  JSON_COLUMN,
  LIMIT,
  OFFSET,
  ordering,
  slottedPage,
  SORT_VALUE,
  BLOB_PAGE,
  type ListingQuery,
  type Mode,
  type PageDb,
  type PageOrder,
  type PageRows,
  type Selection,
} from './pages.js';

/**
 * A probe (probePage) reads at most this many entries of its index walk, and the rows they point to, on the main
 * connection. A filtered page whose cost is the statement's (not the data's) then needs no hop to a read process:
 * on the bench's search the hop, its messages and the read process cost more than the statement (server CPU per
 * search 915 → 454 µs). A probe that reads all 1,000 rows and tests each against a filter of a few comparisons
 * costs 360–420 µs on the bench's VM, about what a page by number at offset MAIN_MAX_OFFSET (src/listing/planner.ts)
 * costs: a probe that finds too few rows costs that much in vain, then the page goes to the read pool. As many as
 * MAIN_MAX_OFFSET, so that the pages a list by number reads on the main connection when unfiltered are the ones its
 * probe can hold when filtered.
 */
export const PROBE_ROWS = 1_000;
/**
 * A page by number on the read pool whose list's total is not cached reads at most this many rows of the list,
 * and takes its total from them when there are fewer (compileCounted). Past it, the total is counted apart.
 */
export const COUNTED_ROWS = 1_000;
/** The column of a counted page's rows that holds how many rows of the list it read (at most COUNTED_ROWS). */
const COUNTED_TOTAL = '__counted';
/** The column of a counted page's list that holds each row's id. */
const COUNTED_ID = '__id';
/** The probe's column that tells a page's rows (1) from the row that marks a walk longer than PROBE_ROWS (2). */
const PROBE_FLAG = '__probe';
/** The column of a probe's walk and of a counted page's list that holds each entry's rowid (byRowid). */
const ROWID_COLUMN = '__rowid';

/**
 * SQL over a page statement's row, aliased BLOB_PAGE, that gives the record a BLOB page holds in place of its
 * JSON_COLUMN (a deal's contact and company spliced in: modules/deals/deals.repo.ts dealRecordSql).
 */
export type RecordSql = (dialect: SqlDialect) => string;

/** The alias of the page statement's rows in a RecordSql's SQL. */
export { BLOB_PAGE };

/** The column of pageAsBlob's subquery that holds a RecordSql's record. */
const BLOB_RECORD = '__record';
/** Each record's byte length in a BLOB page's rows (pageAsBlob). */
const BLOB_LENGTH = '__bytes';
/** pageAsBlob's statement for each page statement (by identity: the planner keeps its statements). */
const blobPlans = new WeakMap<SlottedQuery, SlottedQuery>();

/**
 * A page of JSON records read on SQLite's main connection as one row:
 *
 *     select cast(group_concat(__json, ',') as blob), group_concat(octet_length(__json), ' '),
 *            json_group_array(<id>), json_group_array(__sort_value)[, group_concat(__probe, ' ')]
 *     from (<the page's statement>)
 *
 * Read row by row, each record is a JavaScript string that better-sqlite3 makes from SQLite's UTF-8 (the text
 * checked and copied into V8's heap), and that the socket's write then encodes back to UTF-8. On the bench's
 * database (358-byte contacts), a page of 50 took 66–125 µs as rows and 52–91 µs as this statement, and a 45 KB
 * answer cost 79–116 µs of server CPU as a string against 44–47 µs as a Buffer. One BLOB per row would cost more
 * than the strings (a Buffer per value: ~200 µs for 50). What the listing needs of each row comes beside it, as
 * cheap aggregates: the byte lengths and flags as numbers joined by spaces, the ids and sort values as JSON arrays
 * (any text). A JSON array of [length, id, sort value] per row cost twice as much.
 *
 * The records come in the page statement's order: its ORDER BY with its LIMIT make it a co-routine that SQLite
 * delivers in that order (the ORDER BY of a FROM-clause subquery with a LIMIT is never dropped), and the outer
 * query is a plain aggregate over it; test/db/json-blob-pages.test.ts compares every sort key and mode with the
 * rows read one by one. The rows keep what the listing reads of them: id, sort value, the probe's flag, and the
 * record's byte length (to cut the extra row of a page after a cursor: withoutLast).
 */
async function pageAsBlob(
  db: Db,
  plan: SlottedQuery,
  values: readonly unknown[],
  idColumn: string,
  probe: boolean,
  record: RecordSql | undefined,
): Promise<PageRows> {
  const id = columnName(idColumn);
  let wrapped = blobPlans.get(plan);
  if (!wrapped) {
    const flags = probe ? `, group_concat("${PROBE_FLAG}", ' ') as "__flags"` : '';
    // A RecordSql: computed once a row, in a subquery the aggregate cannot be flattened into (its LIMIT: SQLite never
    // flattens a subquery with a LIMIT into an aggregate), so that its two uses read one value.
    const json = record === undefined ? JSON_COLUMN : BLOB_RECORD;
    const from =
      record === undefined ? `(${plan.sql})` : `(select *, ${record(sqliteDialect)} as "${BLOB_RECORD}" from (${plan.sql}) as "${BLOB_PAGE}" limit -1)`;
    const text =
      `select cast(group_concat("${json}", ',') as blob) as "${JSON_COLUMN}", group_concat(octet_length("${json}"), ' ') as "__lengths", ` +
      `json_group_array("${id}") as "__ids", json_group_array("${SORT_VALUE}") as "__sorts"${flags} from ${from}`;
    wrapped = { ...plan, sql: flatSql(text) };
    blobPlans.set(plan, wrapped);
  }
  const [row] = await directReads(db).all({ compile: () => rebound<BlobRow>(wrapped, values) });
  if (row.__lengths === null) return { rows: [], json: Buffer.alloc(0) };
  // The listing reads only the last rows (the next cursor's position, the extra row of a page after a cursor, the
  // probe's flag): those two are rows of their own, the others one shared placeholder.
  const lengths = row.__lengths.split(' ');
  const n = lengths.length;
  const ids = JSON.parse(row.__ids) as unknown[];
  const sorts = JSON.parse(row.__sorts) as unknown[];
  const flags = row.__flags?.split(' ');
  const rows: Record<string, unknown>[] = new Array(n).fill(UNREAD_ROW);
  for (let i = Math.max(0, n - 2); i < n; i++) {
    const r: Record<string, unknown> = { [BLOB_LENGTH]: Number(lengths[i]), [SORT_VALUE]: sorts[i] };
    r[id] = ids[i];
    if (flags) r[PROBE_FLAG] = Number(flags[i]);
    rows[i] = r;
  }
  return { rows, json: row.__json! };
}

/** The rows of a BLOB page before its last two (pageAsBlob): nothing of them is read. */
const UNREAD_ROW: Record<string, unknown> = Object.freeze({});

/** pageAsBlob's statement row (an empty page: NULL aggregates but the arrays, `[]`). */
interface BlobRow {
  __json: Buffer | null;
  __lengths: string | null;
  __ids: string;
  __sorts: string;
  __flags?: string | null;
}

/** A BLOB page (pageAsBlob) without its last record: the extra row read after a cursor. */
function withoutLast(json: Buffer, fetched: Record<string, unknown>[]): Buffer {
  const last = fetched[fetched.length - 1][BLOB_LENGTH] as number;
  return json.subarray(0, Math.max(0, json.length - last - 1)); // and its comma
}

/** PROBE_FLAG of the row that follows a probe's page when its walk has more than PROBE_ROWS entries. */
const PROBE_WALK_GOES_ON = 2;

/**
 * The probe of a page: the same rows as compilePlan's statement when they lie within the first PROBE_ROWS entries
 * of the walk, in one statement (one snapshot):
 *
 *     select * from (select <row's columns>, w.sort value, 1
 *                    from (<walk: rowid and sort value, in order, limit PROBE_ROWS>) w cross join <table>
 *                    where <table>.rowid = w.rowid and <row filter> limit <page> offset <offset>)
 *     union all
 *     select * from (<the walk's row at position PROBE_ROWS, flagged 2>)
 *     limit <page>
 *
 * The outer limit stops before the second arm when the first gives a whole page. A short page followed by the
 * flagged row means the walk went on past what the probe read (the page may hold later rows): the caller goes
 * to the read pool. A short page alone is the list's end. The walk is an index walk (the planner probes only such
 * walks) that reads only its index: SQLite runs it as a co-routine in order, looks each entry's row up by rowid
 * (CROSS JOIN keeps the walk outside), tests it, and reads the columns of the rows that pass only, then stops at the
 * page's last row. When the walk's index holds every column the row filter reads (`covered`, walkCoversFilter), the
 * walk computes the filter itself from its index entries (PROBE_HIT) and only the entries that pass have their
 * row looked up. (Selecting the columns inside the walk, with the filter as a flag tested outside, copied every walked
 * row's JSON through two co-routines: in process, the bench's search took 153 µs at best against 141, a gap
 * that grows with the size of the records; at the request level both are within this VM's noise.) A probe reads at
 * most PROBE_ROWS index entries and their rows, and PROBE_ROWS entries more for the flagged row.
 */
function compileProbe(on: PageDb, spec: PageOrder, built: ListingQuery, mode: Mode, covered: boolean): SlottedQuery {
  const { walk, rowFilter } = built.probe!;
  const { key, byId, inOrder } = ordering(on.dialect, spec, mode);
  const db = on.db;
  let walked = probeWalk(on.dialect, spec, built, mode, covered);
  if (covered) {
    // The filter is tested on the walk's index entries: the page is cut from them too, so that the entries an
    // offset skips are never read from the table (page 10 of 50 read 450 rows only to skip them).
    let page = db
      .selectFrom(walked.as('probe_hits'))
      .select([sql.ref(`probe_hits.${ROWID_COLUMN}`).as(ROWID_COLUMN), sql.ref(`probe_hits.${SORT_VALUE}`).as(SORT_VALUE)])
      .where(sql<SqlBool>`${sql.ref(`probe_hits.${PROBE_HIT}`)}`)
      .limit(LIMIT as unknown as number);
    if (mode === 'offset') page = page.offset(OFFSET as unknown as number);
    walked = page as unknown as Selection;
  }
  let rows = byRowid(db, built.table!, walked, 'probe_walk');
  if (!covered) rows = rows.where(rowFilter);
  let hits = built
    .select(rows)
    .select([sql.ref(`probe_walk.${SORT_VALUE}`).as(SORT_VALUE), sql<number>`1`.as(PROBE_FLAG)])
    .limit(LIMIT as unknown as number);
  if (mode === 'offset' && !covered) hits = hits.offset(OFFSET as unknown as number);
  const goesOn = inOrder(built.select(walk).select([key.as(SORT_VALUE), sql<number>`${sql.lit(PROBE_WALK_GOES_ON)}`.as(PROBE_FLAG)]))
    .limit(1)
    .offset(PROBE_ROWS);
  const q = db
    .selectFrom(hits.as('probe_page'))
    .selectAll()
    .unionAll(db.selectFrom(goesOn.as('probe_end')).selectAll())
    .limit(LIMIT as unknown as number);
  return slottedPage(q as unknown as Selection, mode, byId);
}

/** The column of a covered probe's walk (walkCoversFilter) that holds the row filter's value for each entry. */
const PROBE_HIT = '__hit';

/**
 * A probe's walk (compileProbe): each entry's rowid and sort value, in the list's order, at most PROBE_ROWS of
 * them; with `withFilter`, also the row filter's value for each entry (PROBE_HIT), computed in the walk.
 */
function probeWalk(dialect: SqlDialect, spec: PageOrder, built: ListingQuery, mode: Mode, withFilter: boolean): Selection {
  const { walk, rowFilter } = built.probe!;
  const { key, inOrder } = ordering(dialect, spec, mode);
  const columns = [rowidOf(built.table!), key.as(SORT_VALUE), ...(withFilter ? [sql<SqlBool>`${rowFilter}`.as(PROBE_HIT)] : [])];
  return inOrder(walk.select(columns)).limit(PROBE_ROWS);
}

/** walkCoversFilter's answers per database adapter, by the SQL of the walk it asked about (values play no part in it). */
const coverage = new WeakMap<object, Map<string, boolean>>();
const MAX_COVERAGE = 1_000;
/** Opcodes that read a row of a table's b-tree itself (SQLite's EXPLAIN; https://sqlite.org/opcode.html). */
const ROW_READS = new Set(['Column', 'Rowid', 'SeekRowid', 'NotExists', 'Offset']);

/**
 * Whether the index of a probe's walk (probeWalk with its filter) holds every column its row filter reads (contacts__owner holds `score`,
 * migration 015). Then the filter is tested on the walk's index entries and only the rows that pass are read;
 * otherwise every walked entry's row is read to test it. On the bench's search (owner + `score gte`, ~200
 * entries walked for a page of 50) that is ~150 row reads fewer: server CPU per search 348–352 → 290–295 µs.
 *
 * SQLite tells: in the walk's program (EXPLAIN), the table's cursor is the one its index cursor defers
 * its seek to (`DeferredSeek`), and SQLite rewrites every read of a column its index holds to the index
 * cursor. A read of that table cursor left in the program is a column the index does not hold. Anything
 * else (no deferred seek: another plan) is answered "not covered", the probe as before. Asked once per
 * walk's SQL; a filter the index does not cover is tested on the row, as before, because testing it in the
 * walk would read the row of every entry there and the rows that pass again for the page.
 */
async function walkCoversFilter(db: Db, walkWithFilter: Selection): Promise<boolean> {
  const compiled = walkWithFilter.compile();
  const adapter = db.getExecutor().adapter;
  let answers = coverage.get(adapter);
  if (!answers) coverage.set(adapter, (answers = new Map()));
  const known = answers.get(compiled.sql);
  if (known !== undefined) return known;
  const program = (await directReads(db).all({
    compile: () =>
      CompiledQuery.raw(
        `explain ${compiled.sql}`,
        compiled.parameters.map(() => null),
      ),
  })) as { opcode: string; p1: number; p3: number }[];
  const seeks = program.filter((op) => op.opcode === 'DeferredSeek');
  const table = seeks.length === 1 ? seeks[0].p3 : undefined;
  const covered = table !== undefined && !program.some((op) => ROW_READS.has(op.opcode) && op.p1 === table);
  if (answers.size >= MAX_COVERAGE) answers.delete(answers.keys().next().value as string);
  answers.set(flatSql(compiled.sql), covered);
  return covered;
}

/** The probe's statement of a page in `mode` (compileProbe), the filter tested on the walk's index entries when they hold it. */
async function probePlan(on: PageDb, spec: PageOrder, built: ListingQuery, mode: Mode): Promise<SlottedQuery> {
  return compileProbe(on, spec, built, mode, await walkCoversFilter(on.db, probeWalk(on.dialect, spec, built, mode, true)));
}

/**
 * A probe's page on the main connection (its records as one BLOB with `asBlob`), or undefined when the walk went
 * on past the PROBE_ROWS entries the probe read without holding the whole page.
 */
async function probePage(
  db: Db,
  plan: SlottedQuery,
  values: readonly unknown[],
  idColumn: string,
  asBlob: boolean,
  record: RecordSql | undefined,
): Promise<PageRows | undefined> {
  const found: PageRows = asBlob
    ? await pageAsBlob(db, plan, values, idColumn, true, record)
    : { rows: await directReads(db).all({ compile: () => rebound<Record<string, unknown>>(plan, values) }) };
  return found.rows[found.rows.length - 1]?.[PROBE_FLAG] !== PROBE_WALK_GOES_ON ? found : undefined;
}

/**
 * A page by number and its list's total from one pass over the list (ListingQuery.table; SQLite, read pool):
 *
 *     with counted_rows as materialized (select <table>.rowid, <sort value>, <id> from <base>
 *                                         order by <sort value>, <id> limit COUNTED_ROWS)
 *     select <row's columns>, p.<sort value>, (select count(*) from counted_rows)
 *     from (select * from counted_rows order by <sort value>, <id> limit <page> offset <offset>) p
 *     cross join <table> where <table>.rowid = p.rowid
 *     order by p.<sort value>, p.<id>
 *
 * A filter no index answers (a name search, a tag) is tested on every entry of the walk: a page reads the walk up
 * to its last row, and its total reads all of it again. This statement reads the list once, up to COUNTED_ROWS
 * rows, and tells both the page and, below that bound, the total (one statement, one snapshot). Only the page's
 * rows have their columns read; the list is held as rowid, sort value and id. On the bench's 100,000 contacts,
 * a full name with 82 matches: page 8.2 ms + total 12.7 ms, against 13.2 ms for this statement (in process).
 */
function compileCounted(on: PageDb, spec: PageOrder, built: ListingQuery): SlottedQuery {
  const table = built.table!;
  const { key, byId, inOrder, sortBy } = ordering(on.dialect, spec, 'first');
  const db = on.db;
  const list = inOrder(built.base.select([rowidOf(table), key.as(SORT_VALUE), sql.ref(spec.idColumn ?? 'id').as(COUNTED_ID)])).limit(COUNTED_ROWS);
  /** The list's order over the columns `from` holds (`counted_rows` or the page `p`). */
  const sorted = <Q extends Selection>(q: Q, from: string): Q => sortBy(q, sql.ref(`${from}.${SORT_VALUE}`), sql.ref(`${from}.${COUNTED_ID}`));
  const page = sorted(db.selectFrom('counted_rows' as 'contacts').selectAll() as unknown as Selection, 'counted_rows')
    .limit(LIMIT as unknown as number)
    .offset(OFFSET as unknown as number);
  const rows = byRowid(
    db.with(
      (cte) => cte('counted_rows').materialized(),
      () => list,
    ),
    table,
    page,
    'p',
  );
  const q = sorted(
    built.select(rows).select([sql.ref(`p.${SORT_VALUE}`).as(SORT_VALUE), sql<number>`(select count(*) from counted_rows)`.as(COUNTED_TOTAL)]),
    'p',
  );
  return slottedPage(q, 'offset', byId);
}

/**
 * A counted page's rows (compileCounted) on `reads`, and how many rows of the list its statement read (at most
 * COUNTED_ROWS; none when the page is past the list's end).
 */
async function countedPage(reads: Reads, plan: SlottedQuery, limit: number, offset: number): Promise<{ rows: Record<string, unknown>[]; read?: number }> {
  const rows = (await reads.all({ compile: () => rebound<Record<string, unknown>>(plan, [limit, offset]) })) as Record<string, unknown>[];
  return rows.length === 0 ? { rows } : { rows, read: Number(rows[0][COUNTED_TOTAL]) };
}

/**
 * `listed`'s entries (each with its row's rowid in ROWID_COLUMN) joined, in their order, to their rows of `table`,
 * selected from `from` (the database, or a query creator that carries a WITH clause).
 */
function byRowid(from: QueryCreator<any>, table: string, listed: Selection, alias: string): SelectQueryBuilder<any, any, {}> {
  return from
    .selectFrom(listed.as(alias))
    .crossJoin(table as 'contacts')
    .where(sql<SqlBool>`${sql.ref(`${table}.rowid`)} = ${sql.ref(`${alias}.${ROWID_COLUMN}`)}`) as unknown as SelectQueryBuilder<any, any, {}>;
}

/** A row's rowid in ROWID_COLUMN, for byRowid. */
const rowidOf = (table: string) => sql`${sql.ref(`${table}.rowid`)}`.as(ROWID_COLUMN);

/** SQLite's page statements, as the planner uses them. */
export interface SqlitePages {
  probePlan: typeof probePlan;
  probePage: typeof probePage;
  compileCounted: typeof compileCounted;
  countedPage: typeof countedPage;
  pageAsBlob: typeof pageAsBlob;
  withoutLast: typeof withoutLast;
}

const sqlitePages: SqlitePages = { probePlan, probePage, compileCounted, countedPage, pageAsBlob, withoutLast };

/** SQLite's page statements when `dialect` is SQLite's; PostgreSQL has none (its pages are compilePlan's only). */
export function sqlitePagesOf(dialect: SqlDialect): SqlitePages | undefined {
  return dialect.name === 'sqlite' ? sqlitePages : undefined;
}
