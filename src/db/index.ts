import { availableParallelism } from 'node:os';
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from './sqlite-driver.mjs';
import type BetterSqlite from 'better-sqlite3';
import {
  sql,
  CompiledQuery,
  IdentifierNode,
  Kysely,
  Migrator,
  PostgresDialect,
  RawNode,
  SqliteDialect,
  SqliteQueryCompiler,
  ValueNode,
  createQueryId,
  type LimitNode,
  type OffsetNode,
  type OperationNode,
  type DatabaseConnection,
  type Driver,
  type Migration,
  type QueryCompiler,
  type QueryResult,
  type Transaction,
} from 'kysely';
import type pg from 'pg';
import { postgres } from './pg-module.js';
import type { Config } from '../config.js';
import { FOLD_FUNCTION, postgresDialect, sqliteDialect, type SqlDialect } from './dialect.js';
import { sqlFold } from '../domain/fold.mjs';
import { migrations } from './migrations/index.js';
import { PgReaderSlot } from './pg-reader.js';
import { analyzeAfterMigrations, pgOptimizer } from './pg-stats.js';
import { DatabaseUnavailable, PgHealth, gatedPool, gatedSlot, type PgHealthOptions } from './pg-health.js';
import { flatSql, hasDirectRunner, runDirectly, runDirectlyInTransactions, transactionEnded, transactionStarted, useNamedStatements, type DirectRunner } from './prepared.js';
import { ReadPool, directReads, pooledReads, type AbortSource, type Reads } from './reads.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { LockLine, isBusy } from './sqlite-lock.js';
import { rowMaker, type RowMaker } from './row-objects.js';
import { SqliteReaderSlot } from './sqlite-reader.js';
import { indexesWithStatistics, installStatLines, measureIndexes, sampleIndexesWithoutLines } from './sqlite-stats.js';
import type { DB } from './tables/schema.js';

export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;

export interface Database {
  db: Db;
  dialect: SqlDialect;
  /** The pg pool (PostgreSQL only), for LISTEN/NOTIFY. */
  pool?: pg.Pool;
  /** The pool that runs data-dependent reads with a deadline (reads.ts); absent for in-memory SQLite. */
  readPool?: ReadPool;
  /** Data-dependent reads of one tenant; `signal` abandons them when the client goes away. */
  readsFor(tenantId: string, signal?: AbortSource): Reads;
  /** Readiness: resolves when the database answers, within about a second; rejects otherwise. */
  ping(): Promise<void>;
  /**
   * False while the database is known to be down or frozen (PostgreSQL's heartbeat, pg-health.ts): callers
   * answer 503 `database_unavailable` at once instead of waiting. Always true on SQLite (an embedded file).
   */
  available(): boolean;
  /** PostgreSQL's heartbeat: emits 'down' and 'up' (workers pause and resume on them). */
  health?: PgHealth;
  /**
   * Refreshes the query planner's statistics. SQLite: every index measured (sqlite-stats.ts); `onError` hears of an
   * index that could not be measured (it keeps its sampled statistics). PostgreSQL: ANALYZE of the tables whose
   * statistics are missing or stale, whether autovacuum runs or not (pg-stats.ts, which also analyzes after
   * migrations and bulk changes, and plans reads around tables without statistics meanwhile).
   */
  optimize(onError?: (index: string, err: unknown) => void): Promise<void>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** SQLite file; defaults to DATA_DIR/crm.db. ':memory:' for tests. */
  sqliteFile?: string;
  poolSize?: number;
  /** Read connections of the read pool (default: the cores, 2 to 4). */
  readers?: number;
  /** PostgreSQL's heartbeat (tests shorten it). */
  health?: PgHealthOptions;
}

const QUERY_TIMEOUT_DEFAULT_MS = 5_000;
const WRITE_STATEMENT_TIMEOUT_MS = 30_000;
/** How long a readiness ping may take before the database counts as unavailable. */
const PING_TIMEOUT_MS = 1_000;
/**
 * How long opening a PostgreSQL session may take. A loaded two-core server took over a second to fork a backend
 * (a CLI's migration failed so); a frozen one is caught sooner by the heartbeat, which fails the waiting requests.
 */
const CONNECT_TIMEOUT_MS = 5_000;

const ignoreSessionError = () => {};

/** `promise`, or the error `onTimeout` makes once `ms` have passed. */
function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(onTimeout()), ms)));
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function readerCount(opts: DbOptions): number {
  return opts.readers ?? Math.min(4, Math.max(2, availableParallelism()));
}

function withReads(base: Omit<Database, 'readsFor'>): Database {
  const { readPool, db } = base;
  const direct = directReads(db);
  return {
    ...base,
    readsFor: readPool ? (tenantId, signal) => pooledReads(db, readPool, tenantId, signal) : () => direct,
  };
}

/**
 * The data directory and the database files are the owner's alone (0700 / 0600): they hold every
 * tenant's records. SQLite creates its -wal and -shm files with the mode of the database file.
 */
function ownerOnlyFile(dir: string, file: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  for (const extra of ['-wal', '-shm']) {
    try {
      chmodSync(file + extra, 0o600);
    } catch {
      // not created yet: SQLite will create it with the database file's mode
    }
  }
}

export function createDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'queryTimeoutMs' | 'queryQueuePerTenant' | 'databasePoolSize' | 'sqliteMmapMb'>>,
  opts: DbOptions = {},
): Database {
  const poolOptions = { timeoutMs: config.queryTimeoutMs ?? QUERY_TIMEOUT_DEFAULT_MS, maxQueuedPerTenant: config.queryQueuePerTenant };
  const timeoutMs = poolOptions.timeoutMs;
  if (config.databaseUrl) {
    const url = config.databaseUrl;
    // NOTE: statement classes (DESIGN §4): the main pool runs point reads and writes by key, bounded by
    // nature; its timeout only catches a runaway (a lock held forever). Data-dependent reads run on the
    // read pool below, whose sessions time out just past QUERY_TIMEOUT_MS. Migrations lift the limit.
    // connectionTimeoutMillis: a server that accepts TCP but never answers (frozen) cannot hold a request
    // waiting for a new session; the heartbeat (pg-health.ts) catches the sessions already open.
    const pool = new (postgres().Pool)({
      connectionString: url,
      max: opts.poolSize ?? config.databasePoolSize ?? 10,
      statement_timeout: WRITE_STATEMENT_TIMEOUT_MS,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    pool.on('error', () => {}); // idle-client errors surface on the next query instead of crashing the process
    pool.on('connect', (client) => {
      // A session the server ends while it is checked out between two statements (a shutdown, a restart)
      // emits 'error' with no listener of the pool's: it would crash the process. Its next statement fails
      // instead (503 database_unavailable), and the pool drops it on release.
      client.on('error', ignoreSessionError);
      useNamedStatements(client);
    });
    const health = new PgHealth(url, opts.health);
    health.start();
    const gate = gatedPool(pool, health);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: gate }) });
    // The server-side backstop sits a little past the deadline, which the pool enforces itself.
    const readPool = new ReadPool(
      Array.from({ length: readerCount(opts) }, () => gatedSlot(new PgReaderSlot(url, timeoutMs + 1_000, gate), health)),
      poolOptions,
    );
    return withReads({
      db,
      dialect: postgresDialect,
      pool,
      readPool,
      health,
      available: () => health.isUp,
      ping: async () => {
        health.check();
        await withDeadline(pool.query('select 1'), PING_TIMEOUT_MS, () => new DatabaseUnavailable('no answer to a ping'));
      },
      optimize: pgOptimizer(db, url),
      close: async () => {
        await health.close();
        await readPool.close();
        await db.destroy();
      },
    });
  }
  let file = opts.sqliteFile;
  if (!file) {
    file = path.join(config.dataDir, 'crm.db');
    ownerOnlyFile(config.dataDir, file);
  }
  const raw = new SqliteDatabase(file);
  raw.pragma('journal_mode = WAL');
  // NOTE: WAL + synchronous=NORMAL keeps every committed transaction across a kill -9 of the process
  // (only an OS crash or power loss could drop the last commits).
  raw.pragma('synchronous = NORMAL');
  // NOTE: another process's write lock (`crm worker`, the CLI) is never waited for on this thread, which is the
  // event loop: a locked write fails at once and waits in the driver's line, off the loop (sqlite-lock.ts), for at
  // most QUERY_TIMEOUT_MS (the deadline of a request's statements, one setting for the operator), then answers
  // 503 database_unavailable. Opening the file above may still wait (better-sqlite3's 5 s default): once, at start.
  raw.pragma('busy_timeout = 0');
  // NOTE: 8 MiB of page cache on the writer. Pages it misses come from the OS's file cache, a copy away: at
  // 64 MiB the server held ~47 MiB more after the bench than at 16 (the cache fills under load), for no CPU
  // measured on point reads and writes (bench/RESULTS.md, 2026-11-25 15:45); 16 → 8 MiB held 12 MiB less,
  // again for no CPU measured on point reads, pages, owner filters and writes (2026-11-26 21:30). The
  // interior pages of the indexes, read by every statement, take a few hundred KiB.
  raw.pragma('cache_size = -8192');
  // NOTE: SQLITE_MMAP_MB (off by default) maps that much of the file into each connection (this one and the read
  // processes'): a page missing from the cache is then read from the OS's file cache in place, without a system
  // call and a copy. That matters when reads land at random in tables much larger than the cache: a page of 50
  // deals with their contacts and companies expanded, at 1,000,000 contacts, read ~163 pages a request with
  // `pread` and cost 1,903 µs of server CPU; mapped, 1,212 µs (bench/RESULTS.md, 2026-11-29 04:15). Off by
  // default because every mapped page the server touches counts in its resident memory: after that bench the
  // server's tree held 1,248 MiB (Pss) mapped against 156 MiB, although those pages are the OS's file cache,
  // which `pread` reads from too and which the kernel can drop at any time.
  const mmapBytes = (config.sqliteMmapMb ?? 0) * 1024 * 1024;
  if (mmapBytes > 0) raw.pragma(`mmap_size = ${mmapBytes}`);
  // NOTE: a write inside a savepoint (each batch input, each unique-guarded insert, an idempotent request)
  // keeps a statement journal so the statement alone can be undone; with the default temp_store that is a
  // temporary file per statement, which tripled the cost of an insert (18 → 62 µs). This connection's
  // temporary data is only such journals (data-dependent sorts run on the read pool's connections).
  raw.pragma('temp_store = memory');
  // NOTE: the commit that crosses wal_autocheckpoint copies the WAL into the database file and syncs it, on
  // this thread. SQLite's default is every 1,000 pages; 4,000 (16 MiB) copied a page written again between two
  // checkpoints once, which made bulk writes (batches of 100 creates) about 1.4× faster. Now 16,000 (64 MiB):
  // the checkpointer thread copies ahead, yet the commit that crosses the mark still syncs the WAL, copies the
  // last few milliseconds of frames and syncs the database, 3.5–3.9 ms every ~200 creates at 4,000, which was
  // ~0.5–0.9 % of the writes at one connection, enough to set their p99; now every ~800 (one-connection p99 of
  // creates 0.99–1.12 → 0.77–0.91 ms, bench/RESULTS.md 2026-11-28). Reads do not pay for the longer WAL: a read
  // looks up only the frames past the last checkpoint (SQLite's minFrame), which the thread keeps a few
  // milliseconds behind. The WAL file keeps its largest size on disk (up to ~64 MiB) after a restart.
  // NOTE: checkpoints on a thread of their own *instead of* these (automatic ones off) were tried and
  // dropped: under a steady write load a concurrent PASSIVE checkpoint never catches up with the writer, so
  // the WAL is never restarted and grows without bound; creates fell from 1,750 to 1,156/s. The thread of
  // sqlite-checkpointer.ts copies ahead of these instead, which stay and restart the WAL as before.
  raw.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  registerSqliteFunctions(raw);
  const sqliteFile = file;
  const inMemory = file === ':memory:' || file === '';
  // The writer's checkpoints then find the WAL already copied (sqlite-checkpointer.ts).
  const checkpointer = inMemory ? undefined : new SqliteCheckpointer(sqliteFile, WAL_AUTOCHECKPOINT_PAGES);
  const driver = new FastSqliteDriver(raw, timeoutMs, checkpointer && (() => checkpointer.wrote()));
  const db = new Kysely<DB>({ dialect: new FastSqliteDialect(raw, driver) });
  runDirectly(db, (sqlText, params) => driver.runNow(sqlText, params));
  runDirectlyInTransactions(db, () => driver.memberRunner());
  // Statements on `raw` go around the driver: they hold the (single) connection, which keeps them out of
  // any transaction in progress, and end the turn's read transaction first (ANALYZE writes).
  // A write of theirs that finds another process's lock waits in the driver's line like any other.
  const onRawConnection = <T>(fn: () => T) => db.connection().execute(() => driver.aroundDriver(fn));
  const readPool = inMemory ? undefined : new ReadPool(Array.from({ length: readerCount(opts) }, () => new SqliteReaderSlot(sqliteFile, mmapBytes)), poolOptions);
  return withReads({
    db,
    dialect: sqliteDialect,
    readPool,
    ping: async () => void raw.prepare('select 1').get(),
    available: () => true,
    // NOTE: without statistics SQLite may pick a range index over an equality one and sort 50k rows for a
    // page of 50 (a search by owner and score took 140 ms instead of 0.6 ms). Indexes without a line get a
    // sampled ANALYZE, then every index is measured on the read pool (sqlite-stats.ts: the sample misjudges
    // indexes that lead with tenant_id, and a full ANALYZE would hold the write lock for seconds).
    optimize: async (onError = () => {}) => {
      const shapes = await onRawConnection(() => {
        sampleIndexesWithoutLines(raw);
        return indexesWithStatistics(raw);
      });
      if (!readPool || shapes.length === 0) return;
      const lines = await measureIndexes(shapes, readPool, onError);
      await onRawConnection(() => installStatLines(raw, lines));
    },
    close: async () => {
      await readPool?.close();
      await checkpointer?.close();
      await db.destroy();
    },
  });
}

/**
 * SQL functions of ours that SQLite must know on every connection: this one, and each read process's
 * (sqlite-reader.process.mjs registers the same). `crm_fold` folds text as the search does (dialect.ts
 * foldedSql); deterministic, so SQLite may evaluate it once for a constant argument.
 */
function registerSqliteFunctions(raw: BetterSqlite.Database): void {
  raw.function(FOLD_FUNCTION, { deterministic: true }, sqlFold);
}

/**
 * Kysely's SQLite dialect with a driver tuned for a busy server (same adapter, compiler, introspector):
 * - statements are prepared once per SQL text (bounded cache): Kysely would prepare every query anew,
 *   and preparing is a large share of a point read;
 * - the single connection is handed to waiters in FIFO order. Kysely's own SqliteDriver wakes every
 *   waiter on each release (they all re-check a shared promise), which costs O(waiters) per query:
 *   with 50 requests in flight that doubled the cost of a point read;
 * - write transactions start with BEGIN IMMEDIATE, so a transaction that reads then writes waits for
 *   another process's writer instead of failing with SQLITE_BUSY (serve + worker + CLI share the file);
 *   that wait, and a lone write's, happens off the event loop with a deadline (sqlite-lock.ts);
 * - reads outside a transaction share one read transaction per turn of the event loop (openRead).
 */
const parseSavepoint = (command: string, name: string) => RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)]);

class FastSqliteDialect extends SqliteDialect {
  constructor(
    raw: BetterSqlite.Database,
    private readonly driver: FastSqliteDriver,
  ) {
    super({ database: raw });
  }
  override createDriver(): Driver {
    return this.driver;
  }
  override createQueryCompiler(): QueryCompiler {
    return new FastSqliteQueryCompiler();
  }
}

/**
 * NOTE: SQLite (3.53, as built by better-sqlite3) looks at the value bound to a bare parameter that is a
 * statement's LIMIT or OFFSET when it plans the statement, so binding any value there (even the same one)
 * expires the plan: the statement is prepared anew at each run. That made the e-mail domain's company look-up
 * of every contact create 5.2 µs instead of 0.6, and a page of 50 ~10–20 µs slower. `(? + 0)` is the same
 * number to SQLite but no bare parameter, so the plan stays; the planner then does not know the limit, as it
 * did not before SQLite 3.46. Kysely compiles `.limit(n)` and `.offset(n)` as bare parameters: here they are
 * wrapped. (A value compiled inline, `sql.lit`, stays as it is.)
 */
class FastSqliteQueryCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    this.append('limit ');
    this.visitPlannedAround(node.limit);
  }
  protected override visitOffset(node: OffsetNode): void {
    this.append('offset ');
    this.visitPlannedAround(node.offset);
  }
  private visitPlannedAround(node: OperationNode): void {
    if (!ValueNode.is(node) || node.immediate) return this.visitNode(node);
    this.append('(');
    this.visitNode(node);
    this.append(' + 0)');
  }
}

/** The writer's automatic checkpoint, in WAL pages of 4 KiB (createDatabase says why). */
export const WAL_AUTOCHECKPOINT_PAGES = 16_000;

/** The oldest snapshot a read outside a transaction may be given (FastSqliteDriver.openRead). */
export const READ_SNAPSHOT_MAX_MS = 5;

/** One acquisition of the single connection (FastSqliteDriver.acquireConnection). */
interface Lease extends DatabaseConnection {
  /** The group this lease's transaction joined (between beginTransaction and its end). */
  group: CommitGroup | null;
  /** Handed to the next waiter before Kysely's releaseConnection (a transaction waiting for its group). */
  handedOver: boolean;
}

/** Transactions committed together by one COMMIT (FastSqliteDriver: group commit). */
interface CommitGroup {
  /** Settles when the group's COMMIT has run: every member's commit waits for it. */
  readonly done: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function commitGroup(): CommitGroup {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  // A member whose SAVEPOINT failed never waits for it: its failure must not go unhandled.
  done.catch(() => {});
  return { done, resolve, reject };
}

/** The savepoint of one member transaction inside its group's transaction. */
const MEMBER = 'crm_member';
/** Statements that change the schema (FastSqliteDriver.prepare). */
const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

class FastSqliteDriver implements Driver {
  /** Prepared once per SQL text; a statement that returns rows runs in raw mode, with the row maker of its columns. */
  private readonly statements = new Map<string, { stmt: BetterSqlite.Statement; rows: RowMaker | null }>();
  private readonly waiters: ((c: Lease) => void)[] = [];
  private busy = false;
  private readonly leases: Lease[] = [];
  private readonly executeQuery: DatabaseConnection['executeQuery'];
  private readonly streamQuery: DatabaseConnection['streamQuery'];
  private readonly tx: Record<'beginGroup' | 'commitGroup' | 'rollbackGroup' | 'begin' | 'release' | 'rollbackTo', BetterSqlite.Statement>;
  /** Statements that found another process's write lock wait here, off the event loop (sqlite-lock.ts). */
  private readonly lockLine: LockLine;

  constructor(
    private readonly raw: BetterSqlite.Database,
    /** How long a statement waits for another process's write lock before it answers 503 (ms). */
    lockWaitMs: number,
    /** Called after a write outside a transaction and after each COMMIT (the checkpointer's wake-up). */
    private readonly onCommit: () => void = () => {},
  ) {
    this.lockLine = new LockLine({ acquire: () => this.acquireTurn(), release: () => this.handOver() }, lockWaitMs);
    this.beginReadStmt = raw.prepare('begin');
    this.endReadStmt = raw.prepare('commit');
    this.tx = {
      beginGroup: raw.prepare('begin immediate'),
      commitGroup: raw.prepare('commit'),
      rollbackGroup: raw.prepare('rollback'),
      begin: raw.prepare(`savepoint ${MEMBER}`),
      release: raw.prepare(`release ${MEMBER}`),
      rollbackTo: raw.prepare(`rollback to ${MEMBER}`),
    };
    this.executeQuery = async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
      try {
        return this.run<R>(query.sql, query.parameters as unknown[]);
      } catch (err) {
        // Inside a transaction the group holds the write lock: a busy error there is not a lock to wait for.
        if (!isBusy(err) || this.memberToken) throw err;
        return this.lockLine.wait(() => this.run<R>(query.sql, query.parameters as unknown[]));
      }
    };
    const beforeLone = () => this.commitBeforeLoneStatement();
    this.streamQuery = async function* <R>(this: void, query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
      beforeLone();
      for (const row of raw.prepare(query.sql).iterate(query.parameters as unknown[])) yield { rows: [row as R] };
    };
  }

  /**
   * A statement on the connection when nobody holds it, at once: the rows, or undefined when a transaction
   * or a queued statement holds the connection (the caller then queues through Kysely). For prepared()'s
   * statements, most of them point reads: Kysely's executor, its connection provider and their promises
   * allocated ~4.6 KB of a point read's ~19 KB (bench/RESULTS.md, 2026-11-27). Nothing can come between the
   * check and the statement (it runs synchronously), so this is the acquire, execute and release of an
   * idle connection, less the promises.
   */
  runNow<R>(sqlText: string, params: unknown[]): R[] | undefined {
    if (this.busy) return undefined;
    try {
      return this.run<R>(sqlText, params).rows as R[];
    } catch (err) {
      // Another process's write lock: the caller goes through Kysely, whose executeQuery waits for it.
      if (isBusy(err)) return undefined;
      throw err;
    }
  }

  /**
   * Runs `fn`, statements on the raw connection, for a caller that holds the connection (createDatabase's
   * onRawConnection): after the turn's read transaction and the open group end, and again, off the event
   * loop, while it finds another process's write lock. `fn` must leave nothing behind when it fails so.
   */
  async aroundDriver<T>(fn: () => T): Promise<T> {
    const attempt = () => {
      this.settle();
      return fn();
    };
    try {
      return attempt();
    } catch (err) {
      if (!isBusy(err)) throw err;
      return this.lockLine.wait(attempt);
    }
  }

  /**
   * The statements of the member transaction that holds the connection now, run at once (prepared.ts
   * transactionStarted, called by withTx and openTransaction as the transaction starts): they answer undefined once
   * that transaction has ended, and the caller goes through Kysely. A transaction's statements went through
   * Kysely's Transaction, a new executor per statement, its single-connection provider and their promises:
   * ~1.2 KB and a few µs each, eight of them in a create (bench/RESULTS.md, 2026-11-28).
   * NOTE: this runs a statement when it is called, where Kysely's provider would queue it behind one of the
   * same transaction still running; better-sqlite3 runs each statement to its end before returning, and the
   * code of a transaction awaits its writes in turn, so the order of its writes is the order of its calls.
   */
  memberRunner(): DirectRunner | undefined {
    const token = this.memberToken;
    if (!token) return undefined;
    return (sqlText, params) => (this.memberToken === token ? this.run<unknown>(sqlText, params).rows : undefined);
  }

  /** One statement; the caller holds the connection (executeQuery) or it is idle (runNow). */
  private run<R>(sqlText: string, params: unknown[]): QueryResult<R> {
    const raw = this.raw;
    this.commitBeforeLoneStatement();
    const { stmt, rows } = this.prepare(sqlText);
    // `readonly` alone would include BEGIN and COMMIT; `reader` alone, INSERT … RETURNING.
    if (stmt.reader && stmt.readonly) {
      if (this.reading && performance.now() - this.readSince > READ_SNAPSHOT_MAX_MS) this.endRead();
      if (!raw.inTransaction) this.openRead();
      return { rows: rows!(stmt.all(params) as unknown[][]) as R[] };
    }
    this.endRead();
    let result: QueryResult<R>;
    if (rows) result = { rows: rows(stmt.all(params) as unknown[][]) as R[] };
    else {
      const { changes, lastInsertRowid } = stmt.run(params);
      result = { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    }
    if (!raw.inTransaction) this.onCommit();
    return result;
  }

  /**
   * Reads outside a transaction share one read transaction per turn of the event loop. On a file in WAL
   * mode every transaction takes and drops a read lock (two `fcntl` calls) and checks the WAL: 7 of the
   * 8.3 µs of a point read on the bench's VM, against 1.3 µs inside a transaction. Under load one turn serves
   * the point reads of many requests, so they pay for one. The transaction ends before any write (so a
   * write never upgrades it), at the end of the turn (setImmediate), and once it is READ_SNAPSHOT_MAX_MS
   * old (a turn held up by synchronous work): writes of this connection are always visible to its next
   * read, another process's within a few milliseconds.
   */
  private readonly beginReadStmt: BetterSqlite.Statement;
  private readonly endReadStmt: BetterSqlite.Statement;
  private reading = false;
  private readSince = 0;
  private readonly endReadSoon = () => this.endRead();

  private openRead(): void {
    this.beginReadStmt.run();
    this.reading = true;
    this.readSince = performance.now();
    setImmediate(this.endReadSoon);
  }

  /** Ends the turn's read transaction, if one is open (before a write, at the end of the turn). */
  private endRead(): void {
    if (!this.reading) return;
    this.reading = false;
    if (this.raw.open && this.raw.inTransaction) this.endReadStmt.run();
  }

  /**
   * Group commit: the write transactions of one turn of the event loop share one SQLite transaction, and
   * one COMMIT at the end of the turn. A COMMIT writes every page its transaction changed to the WAL (two
   * `pwrite`s a page) and takes and drops the WAL's locks. A create changes ~19 pages, most of which every
   * create changes again (the last leaf of the table and of each time-ordered index, the event log's, the
   * change counter): under 50 connections it made 38 `pwrite`s and 6 `fcntl`s, against 6.5 and 0.2 when
   * the creates of a turn commit together (bench/RESULTS.md, 2026-11-26 11:00).
   * - Each transaction is a savepoint of the group's: its rollback undoes its own writes only.
   * - It is acknowledged (its commit resolves) only once the group's COMMIT has run, so nothing is
   *   answered or announced (afterCommit) before it is durable; if that COMMIT fails, every member fails.
   * - The connection goes to the next transaction as soon as a member ends, so the transactions that
   *   waited for it join the group; the COMMIT runs at setImmediate, after them (it queues for the
   *   connection like any of them).
   * - A statement outside a transaction commits the group first: reads never see uncommitted writes, and
   *   a lone write is committed when it returns, as before.
   * There are no deferred constraints in the schema (the only thing a COMMIT checks), so a COMMIT fails
   * only for a reason that fails every transaction alike (I/O, a full disk).
   */
  private group: CommitGroup | null = null;
  /**
   * The member transaction holding the connection (between its savepoint and its end; a new object at each
   * savepoint), or null when none does: see memberRunner.
   */
  private memberToken: object | null = null;
  private commitQueued = false;
  private readonly commitSoon = () => {
    if (this.commitQueued || !this.group) return;
    this.commitQueued = true;
    void this.acquireConnection().then((lease) => {
      this.commitQueued = false;
      try {
        this.commitGroup();
      } finally {
        void this.releaseConnection(lease);
      }
    });
  };

  /**
   * A statement outside the transactions of a group (a point read, a lone write) must neither see nor be
   * part of their uncommitted writes: the group commits first. The caller holds the connection.
   */
  private commitBeforeLoneStatement(): void {
    if (!this.memberToken) this.commitGroup();
  }

  /** Commits the open group; the caller holds the connection and is not a member. */
  private commitGroup(): void {
    const group = this.group;
    if (!group) return;
    this.group = null;
    try {
      // SQLite rolls a whole transaction back on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM):
      // the members that already ended lost their writes too.
      if (!this.raw.inTransaction) throw new Error('the transaction was rolled back by SQLite');
      this.tx.commitGroup.run();
    } catch (err) {
      if (this.raw.open && this.raw.inTransaction) this.tx.rollbackGroup.run();
      group.reject(err);
      return;
    }
    group.resolve();
    this.onCommit();
  }

  /** Ends the turn's read transaction and commits the open group, for statements that go around the driver. */
  settle(): void {
    this.endRead();
    this.commitBeforeLoneStatement();
  }

  private prepare(sqlText: string): { stmt: BetterSqlite.Statement; rows: RowMaker | null } {
    let entry = this.statements.get(sqlText);
    if (!entry) {
      const stmt = this.raw.prepare(sqlText);
      // A schema change (a migration) can change what `select *` returns: the statements prepared before it,
      // and their row makers, are dropped (test/db/record-doc.test.ts reads a table before and after one).
      if (!stmt.reader && SCHEMA_CHANGE.test(sqlText)) {
        this.statements.clear();
        return { stmt, rows: null };
      }
      // Statements that return rows return arrays; executeQuery makes them objects (row-objects.ts says why).
      entry = { stmt, rows: stmt.reader ? rowMaker(stmt.raw(true).columns().map((c) => c.name)) : null };
      if (this.statements.size >= 2000) this.statements.delete(this.statements.keys().next().value as string);
      this.statements.set(flatSql(sqlText), entry); // the key is kept: not the rope of the request that missed
    }
    return entry;
  }

  async init(): Promise<void> {}

  private lease(): Lease {
    return this.leases.pop() ?? { executeQuery: this.executeQuery, streamQuery: this.streamQuery, group: null, handedOver: false };
  }

  acquireConnection(): Promise<DatabaseConnection> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve(this.lease());
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The connection in FIFO order like acquireConnection, without a lease (the lock line's retries). */
  private acquireTurn(): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.waiters.push((lease) => {
        this.leases.push(lease);
        resolve();
      }),
    );
  }

  /** The connection to the next waiter, or free. */
  private handOver(): void {
    const next = this.waiters.shift();
    if (next) next(this.lease());
    else this.busy = false;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    const handedOver = lease.handedOver;
    lease.group = null;
    lease.handedOver = false;
    this.leases.push(lease);
    if (!handedOver) this.handOver();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    this.endRead();
    if (!this.group) {
      try {
        this.openGroup();
      } catch (err) {
        if (!isBusy(err)) throw err;
        // Another process writes: the connection serves the others meanwhile (sqlite-lock.ts), and this
        // transaction goes on holding it again with a group open, or fails with 503 at its deadline.
        await this.lockLine.wait(this.joinGroup);
      }
    }
    this.tx.begin.run();
    this.memberToken = {};
    (connection as Lease).group = this.group;
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    this.tx.release.run();
    await this.endMember(connection as Lease);
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    if (this.raw.inTransaction) {
      this.tx.rollbackTo.run();
      this.tx.release.run();
    } else if (this.group === lease.group) {
      // SQLite rolled the group's transaction back (see commitGroup): it fails there.
      this.commitGroup();
    }
    // A rolled-back transaction answers after the COMMIT too (what it read may be other members' writes),
    // with its own error.
    await this.endMember(lease).catch(() => {});
  }

  /**
   * Opens a group. IMMEDIATE: a transaction that reads then writes takes the write lock first, waiting for
   * another process's writer (the lock line) instead of failing with SQLITE_BUSY at its first write.
   */
  private openGroup(): void {
    this.endRead();
    this.tx.beginGroup.run();
    this.group = commitGroup();
    setImmediate(this.commitSoon);
  }

  /** The lock line's retry of a transaction: the group another one opened meanwhile, or a new one. */
  private readonly joinGroup = () => {
    if (this.group) this.endRead();
    else this.openGroup();
  };

  /** A member ended: the connection goes to the next transaction, and the member waits for its group. */
  private endMember(lease: Lease): Promise<void> {
    this.memberToken = null;
    lease.handedOver = true;
    this.handOver();
    return lease.group!.done;
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(parseSavepoint('savepoint', name), createQueryId()));
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(parseSavepoint('rollback to', name), createQueryId()));
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(parseSavepoint('release', name), createQueryId()));
  }
  async destroy(): Promise<void> {
    this.lockLine.close();
    this.settle();
    this.raw.close();
  }
}

/** Applies pending migrations; returns the names applied. Safe to run from several processes at once. */
export async function migrate(database: Database): Promise<string[]> {
  const dialect = database.dialect.name;
  const migrator = new Migrator({
    db: database.db,
    provider: {
      async getMigrations() {
        const out: Record<string, Migration> = {};
        for (const [name, m] of Object.entries(migrations)) {
          out[name] = {
            up: async (db) => {
              // A schema change on a large table may take longer than any statement of the API.
              if (dialect === 'postgres') await sql`set local statement_timeout = 0`.execute(db);
              await m.up(db, dialect);
            },
          };
        }
        return out;
      },
    },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  // PostgreSQL: planner statistics for every table when migrations ran, else for those missing (pg-stats.ts).
  await analyzeAfterMigrations(database.db, applied.length > 0);
  return applied;
}

/** Runs fn in a transaction, or inside the caller's transaction when already in one. */
export async function withTx<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db as Tx);
  let tx: Tx | undefined;
  try {
    const result = await db.transaction().execute(async (t) => {
      tx = t;
      transactionStarted(db, t);
      const out = await fn(t);
      await flushDeferred(t);
      return out;
    });
    committed(tx);
    return result;
  } finally {
    if (tx) forgetTransaction(tx);
  }
}

/** A transaction left open across calls (an idempotent request's: opened in one hook, ended in another). */
export interface OpenTransaction {
  readonly tx: Tx;
  /** Makes the deferred writes, commits, then runs the afterCommit hooks (as withTx does). */
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

const ROLLBACK = Symbol('rollback');

/**
 * Opens a transaction that the caller ends with `commit()` or `rollback()`. Built on Kysely's
 * callback transaction, held open until the caller decides, rather than on `startTransaction()`:
 * a controlled transaction wraps every statement run in it in one more executor, and building it cost
 * about 3 µs of each idempotent POST.
 */
export function openTransaction(db: Db): Promise<OpenTransaction> {
  return new Promise((resolve, reject) => {
    let decide!: (commit: boolean) => void;
    const decision = new Promise<boolean>((r) => (decide = r));
    let tx: Tx | undefined;
    const done = db.transaction().execute(async (t) => {
      tx = t;
      transactionStarted(db, t);
      resolve({ tx: t, commit: () => finish(true), rollback: () => finish(false) });
      if (!(await decision)) throw ROLLBACK;
      await flushDeferred(t);
    });
    // Before the callback ran (BEGIN failed) the error is the opening's; after, it is finish's.
    done.catch((err) => {
      if (!tx) reject(err);
    });
    const finish = async (commit: boolean): Promise<void> => {
      decide(commit);
      try {
        await done;
        committed(tx);
      } catch (err) {
        if (err !== ROLLBACK) throw err;
      } finally {
        forgetTransaction(tx!);
      }
    };
  });
}

const commitHooks = new WeakMap<Db, Map<string, () => void>>();

/**
 * Drops what this module and prepared.ts keep per transaction, once it has ended (withTx, openTransaction).
 * NOTE: the entries are weak, but a WeakMap is weak to full collections only: V8's scavenges keep every
 * value of an entry whose key they have not yet found dead, so the facts, queued writes and statement runner
 * of each finished transaction were copied by the next scavenge. Under creates at one connection that was
 * ~56 KB a scavenge (130 → 74 KB survived, `--trace-gc-nvp`), and the pause 0.51 → 0.45 ms; a create's p99
 * at one connection 0.99–1.16 → 0.89–1.10 ms (bench/RESULTS.md, 2026-11-28 11:30 – 12:45).
 */
function forgetTransaction(tx: Db): void {
  commitHooks.delete(tx);
  txFacts.delete(tx);
  deferred.delete(tx);
  transactionEnded(tx);
}

/** What this module and prepared.ts still keep for `tx` (tests: nothing once it has ended). */
export function heldTransactionState(tx: Db): string[] {
  const held: [string, boolean][] = [
    ['commitHooks', commitHooks.has(tx)],
    ['txFacts', txFacts.has(tx)],
    ['deferred', deferred.has(tx)],
    ['directRunner', hasDirectRunner(tx)],
  ];
  return held.filter(([, h]) => h).map(([name]) => name);
}

/**
 * Runs `fn` once the caller's transaction has committed (never on rollback); at once outside a
 * transaction. Hooks with the same `key` run once per transaction. For in-process signals that must not
 * run before the data is visible to other connections (the event log's waiting readers on SQLite).
 * A hook registered in a savepoint later rolled back still runs: hooks are wake-ups, never effects.
 */
export function afterCommit(db: Db, key: string, fn: () => void): void {
  if (!db.isTransaction) {
    fn();
    return;
  }
  let hooks = commitHooks.get(db);
  if (!hooks) commitHooks.set(db, (hooks = new Map()));
  if (!hooks.has(key)) hooks.set(key, fn);
}

/** Runs the afterCommit hooks of a transaction that just committed (withTx does it; so must any other commit). */
export function committed(tx: Db | undefined): void {
  const hooks = tx && commitHooks.get(tx);
  if (!hooks) return;
  commitHooks.delete(tx);
  for (const fn of hooks.values()) {
    try {
      fn();
    } catch {
      // a wake-up that fails must not turn a committed write into an error
    }
  }
}

const txFacts = new WeakMap<Db, Set<string>>();

/**
 * Runs `write` once per transaction for a given `fact` (for example "contacts of tenant T changed"):
 * a batch of 100 writes records it once, not 100 times. Outside a transaction it always runs. A rollback
 * to a savepoint forgets every fact of the transaction, so a write undone with it is made again.
 */
export async function oncePerTransaction(db: Db, fact: string, write: () => Promise<void>): Promise<void> {
  if (!db.isTransaction) return write();
  let facts = txFacts.get(db);
  if (facts?.has(fact)) return;
  await write();
  if (!facts) txFacts.set(db, (facts = new Set()));
  facts.add(fact);
}

/** A kind of write deferred to the end of a transaction (see deferWrite). */
export interface DeferredWrites<T> {
  /** Writes every item the transaction queued, in the order queued; runs once, just before the commit. */
  flush(tx: Tx, items: T[]): Promise<void>;
  /**
   * Written after every other kind, as the last statements before the commit: for a write that locks a
   * row every writer of a tenant updates (modules/shared/changes.ts), so the lock is held the shortest time.
   */
  last?: boolean;
}

const deferred = new WeakMap<Db, { kind: DeferredWrites<any>; item: unknown }[]>();

/**
 * Queues a write to be made at the end of the caller's transaction, just before it commits (withTx and
 * every other commit call flushDeferred). For writes whose position must follow commit order, such as
 * the event log's (events/outbox.ts): made at the end, they hold their lock only until the commit.
 * Outside a transaction the write is made at once, in a transaction of its own. A rollback to a
 * savepoint drops the writes queued after it (withSavepoint, restoreSavepointState).
 */
export async function deferWrite<T>(db: Db, kind: DeferredWrites<T>, item: T): Promise<void> {
  if (!db.isTransaction) return withTx(db, (tx) => deferWrite(tx, kind, item));
  let queue = deferred.get(db);
  if (!queue) deferred.set(db, (queue = []));
  queue.push({ kind, item });
}

/**
 * Makes the deferred writes of a transaction about to commit, grouped by kind in the order first queued,
 * the kinds marked `last` after the others.
 */
export async function flushDeferred(tx: Tx): Promise<void> {
  const queue = deferred.get(tx);
  if (!queue?.length) return;
  deferred.delete(tx);
  const byKind = new Map<DeferredWrites<any>, unknown[]>();
  for (const { kind, item } of queue) {
    const items = byKind.get(kind);
    if (items) items.push(item);
    else byKind.set(kind, [item]);
  }
  for (const [kind, items] of byKind) if (!kind.last) await kind.flush(tx, items);
  for (const [kind, items] of byKind) if (kind.last) await kind.flush(tx, items);
}

/** What a savepoint must restore in this module's per-transaction state when it is rolled back to. */
export interface SavepointState {
  deferred: number;
}

export function savepointState(tx: Db): SavepointState {
  return { deferred: deferred.get(tx)?.length ?? 0 };
}

/**
 * After `rollback to savepoint`: the writes queued since are dropped, and every remembered fact is
 * forgotten (what the transaction wrote may be undone, so facts it remembered may no longer hold).
 */
export function restoreSavepointState(tx: Db, state: SavepointState): void {
  txFacts.delete(tx);
  const queue = deferred.get(tx);
  if (queue && queue.length > state.deferred) queue.length = state.deferred;
}

/**
 * Runs fn inside a savepoint of the caller's transaction: a failure rolls back fn's changes only and
 * leaves the transaction usable (PostgreSQL refuses every later statement of a transaction with a
 * failed one otherwise). Savepoints nest; each is released once done so the stack stays flat.
 */
export async function withSavepoint<T>(tx: Db, fn: () => Promise<T>, name = 'step'): Promise<T> {
  const id = sql.id(name);
  await sql`savepoint ${id}`.execute(tx);
  const state = savepointState(tx);
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    restoreSavepointState(tx, state);
    // A failed rollback (the connection is gone) must not hide the error that caused it.
    await sql`rollback to savepoint ${id}`.execute(tx).catch(() => {});
    await sql`release savepoint ${id}`.execute(tx).catch(() => {});
    throw err;
  }
  await sql`release savepoint ${id}`.execute(tx);
  return result;
}
