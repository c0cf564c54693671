/**
 * PostgreSQL's planner statistics, kept fresh by the service itself (issue 47: plans that do not depend on luck).
 *
 * Why: without statistics PostgreSQL guesses that `tenant_id = $1` keeps 0.5 % of a table, so a tenant's 20,000
 * contacts look like one row and their tags like one more. Every join then looks free as a nested loop, and a tag
 * filter became one: 20,000 contacts × the tenant's whole tag set, 150 M rows compared, 13.8 s, where the same
 * statement after one ANALYZE took 5–101 ms. Autovacuum may be off (it was, on the instance that showed it) or
 * behind a bulk load, so the service does not count on it:
 *
 * - after migrations (migrate()): every table when a migration ran (cheap on a fresh database), otherwise only the
 *   tables whose statistics are missing or outgrown;
 * - after bulk changes (noteBulkChange: batches, retention purges, dynamic-list recalculations): "these tables,
 *   soon", debounced, and only those whose statistics are then stale;
 * - on a schedule (the workers' loop, refreshPlannerStatistics): every table never analyzed though it has rows,
 *   grown past twice its size at the last look, or with more rows changed since than autovacuum's own threshold
 *   (50 + 10 % of its rows; pg_stat_user_tables.n_mod_since_analyze), which works with autovacuum off;
 * - and until those have run, the read pool plans around it (beforeRead): a data-dependent statement that reads
 *   a table whose statistics are missing or outgrown runs with nested loops disabled, so the planner joins by
 *   hashing or merging (linear in the rows, whatever its estimates: 20,000 contacts, tags `notIn`, ~40 ms), and
 *   the ANALYZE of that table is queued at once. That test reads pg_class and the files' sizes (immediate), not
 *   the cumulative statistics views, which may lag; it runs at most once a second per process.
 *
 * ANALYZE runs on a session of its own (opened for it, closed after), never on the main pool's connections nor
 * the read pool's: it may take a second on a large table, and reads a bounded sample (300 × the statistics
 * target rows) whatever the table's size. On SQLite every function here is a no-op (src/db/sqlite-stats.ts and
 * Database.optimize keep SQLite's statistics).
 */
import type pg from 'pg';
import type { Kysely } from 'kysely';
import { postgres } from './pg-module.js';

/** A bulk change is analyzed this long after its last note (a client importing in batches of 100 is one change). */
export const ANALYZE_SOON_MS = 1_000;
/** A change of at least this many rows in one call (a batch, a purge, a recalculation) is a bulk change (noteBulkChange). */
export const BULK_CHANGE_ROWS = 50;
/** How often the read pool looks for tables whose statistics are missing or outgrown. */
const CHECK_EVERY_MS = 1_000;
/** Smaller tables (64 KiB) are read whole whatever the plan: their statistics cannot make a plan go wrong. */
const MIN_PAGES = 8;
/** How long one ANALYZE may take before it is given up (it is tried again at the next pass). */
const ANALYZE_TIMEOUT_MS = 120_000;

/** The tables of the current schema whose statistics are missing (never analyzed) or outgrown (2× the pages). */
const UNPLANNED_SQL = `select c.relname as name from pg_class c
  where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'
    and pg_relation_size(c.oid) > (case when c.reltuples < 0 then 0 else 2 * c.relpages end + ${MIN_PAGES}) * current_setting('block_size')::bigint`;

/**
 * UNPLANNED_SQL's tables, and those that ANALYZE would take up were autovacuum on (its default threshold: more
 * than 50 + 10 % of the rows inserted, updated or deleted since the last one), or never analyzed though they
 * hold rows (pg_stat_user_tables counts changes even with autovacuum off).
 */
const STALE_SQL = `${UNPLANNED_SQL}
  union
  select s.relname from pg_stat_user_tables s
  where s.schemaname = current_schema()
    and ((s.last_analyze is null and s.last_autoanalyze is null and s.n_live_tup > 0)
      or s.n_mod_since_analyze > 50 + 0.1 * s.n_live_tup)`;

const ALL_TABLES_SQL = `select c.relname as name from pg_class c where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'`;

type Queryable = Pick<pg.Client, 'query'>;

const quoteIdent = (name: string) => '"' + name.replace(/"/g, '""') + '"';

/**
 * The planner statistics of one PostgreSQL database, shared by every Database object of the process that opens
 * it (plannerStatistics(url)): what the read pool plans around, and the ANALYZE queue.
 */
export class PlannerStatistics {
  /** Tables whose statistics are missing or outgrown, as last seen; `reads` matches a statement naming one. */
  private unplanned: { names: string[]; reads: RegExp | null } = { names: [], reads: null };
  private checkedAt = -Infinity;
  private checking: Promise<void> | null = null;
  /** The nested-loop setting of each read session: true once set off. */
  private readonly sessions = new WeakMap<object, boolean>();
  /** Rows changed per table by bulk changes noted since its last ANALYZE (soon). */
  private readonly changed = new Map<string, number>();
  private soonTimer: NodeJS.Timeout | null = null;
  /** ANALYZE passes run one after the other. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Tables analyzed by this process (tests, logs). */
  analyzed = 0;

  constructor(private readonly url: string) {}

  /**
   * Before a read pool statement on `session`: refreshes what is known of missing statistics (at most once per
   * CHECK_EVERY_MS, on this session, which is free) and sets the session's nested loops off while `sql` reads
   * a table without statistics, on again afterwards. Costs nothing more than a clock read otherwise.
   */
  async beforeRead(session: Queryable & object, sql: string): Promise<void> {
    if (performance.now() - this.checkedAt >= CHECK_EVERY_MS) await this.check(session);
    const off = this.unplanned.reads?.test(sql) ?? false;
    if ((this.sessions.get(session) ?? false) === off) return;
    await session.query(off ? 'set enable_nestloop = off' : 'reset enable_nestloop');
    this.sessions.set(session, off);
  }

  private check(session: Queryable): Promise<void> {
    this.checkedAt = performance.now();
    this.checking ??= (async () => {
      try {
        const names = ((await session.query(UNPLANNED_SQL)).rows as { name: string }[]).map((r) => r.name);
        this.unplanned = { names, reads: names.length ? new RegExp(`\\b(${names.map(escapeRegExp).join('|')})\\b`) : null };
        if (names.length) this.soon(names);
      } catch {
        // Checked again in a second; the statement runs with what was known.
      } finally {
        this.checking = null;
      }
    })();
    return this.checking;
  }

  /** Tables the read pool currently plans around (tests). */
  get plannedAround(): readonly string[] {
    return this.unplanned.names;
  }

  /**
   * Notes that `rows` rows of each of `tables` just changed. ANALYZE_SOON_MS after the last note, a table whose
   * changes noted since its last ANALYZE pass autovacuum's threshold (50 + 10 % of the rows it had then,
   * pg_class.reltuples) is analyzed, with any other table of theirs whose statistics are stale. Counted here
   * rather than read from pg_stat_user_tables, whose counters a backend may publish seconds later.
   */
  soon(tables: readonly string[], rows = Infinity): void {
    for (const t of tables) this.changed.set(t, (this.changed.get(t) ?? 0) + rows);
    if (this.soonTimer) clearTimeout(this.soonTimer);
    this.soonTimer = setTimeout(() => {
      this.soonTimer = null;
      void this.analyzeChanged().catch(() => {});
    }, ANALYZE_SOON_MS);
    this.soonTimer.unref();
  }

  private analyzeChanged(): Promise<string[]> {
    return this.serially(async (session) => {
      const noted = [...this.changed.keys()];
      const sizes = (
        await session.query(
          `select c.relname as name, c.reltuples as rows from pg_class c where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and c.relname = any($1)`,
          [noted],
        )
      ).rows as { name: string; rows: number }[];
      const due = sizes.filter((t) => (this.changed.get(t.name) ?? 0) > 50 + 0.1 * Math.max(0, t.rows)).map((t) => t.name);
      const stale = ((await session.query(STALE_SQL)).rows as { name: string }[]).map((r) => r.name).filter((n) => noted.includes(n));
      return this.analyze(session, [...new Set([...due, ...stale])]);
    });
  }

  /** Analyzes the tables whose statistics are missing or stale (`missing`: only those missing); returns their names. */
  refresh(which: 'stale' | 'missing' = 'stale'): Promise<string[]> {
    const query = which === 'stale' ? STALE_SQL : UNPLANNED_SQL;
    return this.serially(async (session) =>
      this.analyze(
        session,
        ((await session.query(query)).rows as { name: string }[]).map((r) => r.name),
      ),
    );
  }

  /** Analyzes every table of the schema (after migrations). */
  refreshAll(): Promise<string[]> {
    return this.serially(async (session) =>
      this.analyze(
        session,
        ((await session.query(ALL_TABLES_SQL)).rows as { name: string }[]).map((r) => r.name),
      ),
    );
  }

  /** Resolves once the ANALYZE of the changes noted so far, and every one queued before, has run (tests). */
  async settled(): Promise<void> {
    while (this.soonTimer) await new Promise((resolve) => setTimeout(resolve, 20));
    await this.queue.catch(() => {});
  }

  private async analyze(session: Queryable, names: string[]): Promise<string[]> {
    if (names.length === 0) return names;
    // SKIP_LOCKED: a table another session is analyzing (another process of the service) or altering is left to it.
    await session.query(`analyze (skip_locked) ${names.sort().map(quoteIdent).join(', ')}`);
    this.analyzed += names.length;
    for (const n of names) this.changed.delete(n);
    // The next read looks again (the tables analyzed are planned normally from then on).
    this.checkedAt = -Infinity;
    return names;
  }

  /** Runs `fn` on a session of its own once the passes queued before it are done. */
  private serially<T>(fn: (session: pg.Client) => Promise<T>): Promise<T> {
    const run = this.queue
      .catch(() => {})
      .then(async () => {
        const session = new (postgres().Client)({ connectionString: this.url, statement_timeout: ANALYZE_TIMEOUT_MS, connectionTimeoutMillis: 2_000 });
        session.on('error', () => {});
        await session.connect();
        try {
          return await fn(session);
        } finally {
          await session.end().catch(() => {});
        }
      });
    this.queue = run;
    return run;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const byUrl = new Map<string, PlannerStatistics>();
/** Kysely's adapter is shared by a database and its transactions: it finds the statistics of either. */
const byAdapter = new WeakMap<object, PlannerStatistics>();

/** The planner statistics of the PostgreSQL database at `url` (one per database and process). */
export function plannerStatistics(url: string): PlannerStatistics {
  let stats = byUrl.get(url);
  if (!stats) byUrl.set(url, (stats = new PlannerStatistics(url)));
  return stats;
}

/**
 * Database.optimize of a PostgreSQL database `db` at `url`: registers `db` (so that noteBulkChange and migrate find
 * its statistics) and returns the function that analyzes what is missing or stale.
 */
export function pgOptimizer(db: Kysely<any>, url: string): () => Promise<void> {
  const stats = plannerStatistics(url);
  byAdapter.set(db.getExecutor().adapter, stats);
  return async () => void (await stats.refresh());
}

function statisticsOf(db: Kysely<any>): PlannerStatistics | undefined {
  return byAdapter.get(db.getExecutor().adapter);
}

/**
 * Tells that `rows` rows of each of `tables` just changed in bulk (a batch, a purge, a recalculation): their
 * statistics are refreshed soon if that makes them stale. Any database or transaction; a no-op on SQLite.
 */
export function noteBulkChange(db: Kysely<any>, tables: readonly string[], rows: number): void {
  statisticsOf(db)?.soon(tables, rows);
}

/** The scheduled pass (workers): analyzes every table whose statistics are missing or stale. A no-op on SQLite. */
export async function refreshPlannerStatistics(db: Kysely<any>): Promise<string[]> {
  return (await statisticsOf(db)?.refresh()) ?? [];
}

/**
 * The end of migrate(): every table when migrations ran (a fresh database's are empty, so this is quick), else
 * those whose statistics are missing or outgrown (the schedule takes the stale ones). A no-op on SQLite.
 */
export async function analyzeAfterMigrations(db: Kysely<any>, migrated: boolean): Promise<void> {
  const stats = statisticsOf(db);
  // Statistics only make plans better: a failure here (a lock held) must not stop the service; the schedule retries.
  if (stats) await (migrated ? stats.refreshAll() : stats.refresh('missing')).catch(() => {});
}
