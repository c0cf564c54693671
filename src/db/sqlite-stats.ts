/**
 * The SQLite query planner's statistics (`sqlite_stat1`), measured on read connections.
 *
 * SQLite plans with one line per index: the rows it holds, then for each leading prefix of its columns
 * the average number of rows that share a value of that prefix. `ANALYZE` measures them, but:
 * - a full ANALYZE holds the database's write lock while it reads every index (1.5 s for the contacts of
 *   1,000,000 rows here), and every write of the server, whose writer is the event loop, waits behind it;
 * - a sampled one (`analysis_limit`) reads the first rows of each index in index order. All of our
 *   indexes lead with `tenant_id`, so those rows are one tenant's (and one owner's...): at 1,000,000
 *   contacts it wrote `1000000 1001 1001` for (tenant_id, owner_id), i.e. "1,001 contacts per tenant".
 *   With that, `ownerId = ? AND score >= ?` ordered by creation picked the score index and sorted
 *   400,000 rows for a page of 50 (900 ms instead of 0.3 ms).
 * So the server keeps the sampled ANALYZE only for tables with an index that has no line (a fresh
 * database, a new table or index), and then measures every index with GROUP BY counts on a read
 * connection (no lock, off the event loop, under the read pool's deadline), and writes the lines in one
 * short transaction that every connection, the read processes too, sees at its next statement. This is the manual control of `sqlite_stat1` that SQLite documents ("Manual Control
 * Of Query Plans Using SQLITE_STAT Tables"); its format is `N a1 … ak`, each `a` rounded up.
 */
import type BetterSqlite from 'better-sqlite3';
import { QueryAbandoned, type ReadPool } from './reads.js';

/** Rows of each index ANALYZE reads when it samples (analysis_limit). */
const SAMPLE_ROWS = 1000;

/** The read pool's tenant for these statements: they count against one share of it like any tenant's. */
const SYSTEM = '\u0000statistics';

export interface IndexShape {
  table: string;
  index: string;
  columns: string[];
  /** The partial index's WHERE, or null. */
  where: string | null;
  unique: boolean;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The indexes that have a line, with their shape (measured again on every pass: tables grow). */
export function indexesWithStatistics(raw: BetterSqlite.Database): IndexShape[] {
  const rows = raw
    .prepare(
      `select s.tbl, s.idx, m.sql, l."unique" as uniq from sqlite_stat1 s
       join sqlite_master m on m.type = 'index' and m.name = s.idx
       join pragma_index_list(s.tbl) l on l.name = s.idx`,
    )
    .all() as { tbl: string; idx: string; sql: string | null; uniq: number }[];
  const out: IndexShape[] = [];
  for (const r of rows) {
    const info = raw.prepare(`pragma index_info(${quote(r.idx)})`).all() as { name: string | null }[];
    // Expression columns have no name: such an index keeps its sampled line.
    if (info.length === 0 || info.some((c) => c.name === null)) continue;
    const where = r.sql ? (/\swhere\s([\s\S]+)$/i.exec(r.sql)?.[1].trim() ?? null) : null;
    out.push({ table: r.tbl, index: r.idx, columns: info.map((c) => c.name!), where, unique: r.uniq === 1 });
  }
  return out;
}

/** The statements that measure one index: its rows, then the distinct values of each leading prefix. */
export function measuringStatements(shape: IndexShape): string[] {
  const from = `from ${quote(shape.table)} indexed by ${quote(shape.index)}${shape.where ? ` where ${shape.where}` : ''}`;
  const out = [`select count(*) as n ${from}`];
  // The last prefix of a unique index is one row per value: nothing to count.
  const counted = shape.unique ? shape.columns.length - 1 : shape.columns.length;
  for (let i = 1; i <= counted; i++) out.push(`select count(*) as n from (select 1 ${from} group by ${shape.columns.slice(0, i).map(quote).join(', ')})`);
  return out;
}

/** `N a1 … ak` from the row count and the distinct counts of each prefix (the unique index's last is N). */
export function statLine(rows: number, distinct: number[], columns: number): string {
  const avg = (d: number) => Math.max(1, Math.ceil(rows / Math.max(1, d)));
  const parts = [rows];
  for (let i = 0; i < columns; i++) parts.push(i < distinct.length ? avg(distinct[i]) : 1);
  return parts.join(' ');
}

/**
 * A sampled ANALYZE of every table with an index that has no line yet: a fresh database, or an index a
 * migration added (without a line SQLite takes an index for highly selective, and may walk it for any
 * query of its table). The per-value samples of sqlite_stat4 are dropped: with them SQLite re-plans
 * statements on every new bound value, which tripled the cost of point reads. Call with the writer's
 * connection held (no transaction open).
 */
export function sampleIndexesWithoutLines(raw: BetterSqlite.Database): void {
  const hasStat1 = raw.prepare("select 1 from sqlite_master where name = 'sqlite_stat1'").get();
  const indexes = "select distinct m.tbl_name as t from sqlite_master m where m.type = 'index' and m.tbl_name not like 'sqlite\\_%' escape '\\'";
  const sqlText = hasStat1 ? `${indexes} and not exists (select 1 from sqlite_stat1 s where s.idx = m.name)` : indexes;
  const tables = (raw.prepare(sqlText).all() as { t: string }[]).map((r) => r.t);
  if (tables.length === 0) return;
  raw.pragma(`analysis_limit = ${SAMPLE_ROWS}`);
  for (const table of tables) raw.exec(`analyze ${quote(table)}`);
  if (raw.prepare("select 1 from sqlite_master where name = 'sqlite_stat4'").get()) raw.exec('delete from sqlite_stat4');
  raw.exec('analyze sqlite_master');
}

export interface StatLine {
  table: string;
  index: string;
  stat: string;
}

/**
 * Measures the given indexes on the read pool. An index whose statements fail or do not finish within
 * the pool's deadline keeps its sampled line (reported to `onError`; the next pass tries again).
 */
export async function measureIndexes(shapes: IndexShape[], pool: ReadPool, onError: (index: string, err: unknown) => void): Promise<StatLine[]> {
  const lines: StatLine[] = [];
  for (const shape of shapes) {
    try {
      const counts: number[] = [];
      for (const statement of measuringStatements(shape)) {
        const [row] = (await pool.run(SYSTEM, statement, [])) as { n: number }[];
        counts.push(Number(row?.n ?? 0));
      }
      const [rows, ...distinct] = counts;
      if (rows > 0) lines.push({ table: shape.table, index: shape.index, stat: statLine(rows, distinct, shape.columns.length) });
    } catch (err) {
      if (err instanceof QueryAbandoned) throw err;
      onError(shape.index, err);
    }
  }
  return lines;
}

/**
 * Writes the lines and loads them into every connection's planner (call with the connection held: no
 * transaction open).
 */
export function installStatLines(raw: BetterSqlite.Database, lines: StatLine[]): void {
  if (lines.length === 0) return;
  const update = raw.prepare('update sqlite_stat1 set stat = ? where tbl = ? and idx = ?');
  raw
    .transaction(() => {
      for (const l of lines) update.run(l.stat, l.table, l.index);
      // NOTE: a connection loads the statistics with the schema, and only this one reloads them on
      // `analyze sqlite_master`: the read processes would plan with the lines they started with until
      // replaced. A schema change (a table created and dropped) makes every connection reload the schema,
      // and the statistics with it, at its next statement; its prepared statements are re-planned.
      raw.exec('create table crm_statistics_reload (x); drop table crm_statistics_reload');
    })
    .immediate();
  raw.exec('analyze sqlite_master');
}
