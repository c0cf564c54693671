/** SQLite's side of createDatabase: the file, the writer connection and its driver, the read pool. */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import type BetterSqlite from 'better-sqlite3';
import { Kysely } from 'kysely';
import { registerDuplicateKeyFunctions } from '../domain/duplicate-keys.mjs';
import { sqlFold } from '../domain/fold.mjs';
import { readerCount, withReads, type Database, type DatabaseConfig, type DbOptions } from './database.js';
import { FOLD_FUNCTION, sqliteDialect } from './dialect.js';
import { runDirectly, runDirectlyInTransactions } from './prepared.js';
import { ReadPool, type ReadPoolOptions } from './reads.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import SqliteDatabase from './sqlite-driver.mjs';
import { FastSqliteDialect } from './sqlite-fast-dialect.js';
import { FastSqliteDriver } from './sqlite-fast-driver.js';
import { SqliteReaderSlot } from './sqlite-reader.js';
import { indexesWithStatistics, installStatLines, measureIndexes, sampleIndexesWithoutLines } from './sqlite-stats.js';
import type { DB } from './tables/schema.js';

/** The writer's automatic checkpoint, in WAL pages of 4 KiB (tuneWriter says why). */
export const WAL_AUTOCHECKPOINT_PAGES = 16_000;

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

/** The SQLite file `opts.sqliteFile`, else DATA_DIR/crm.db made the owner's alone (createDatabase without DATABASE_URL). */
export function openSqlite(config: DatabaseConfig, opts: DbOptions, poolOptions: ReadPoolOptions): Database {
  const timeoutMs = poolOptions.timeoutMs;
  let file = opts.sqliteFile;
  if (!file) {
    file = path.join(config.dataDir, 'crm.db');
    ownerOnlyFile(config.dataDir, file);
  }
  const raw = new SqliteDatabase(file);
  const mmapBytes = (config.sqliteMmapMb ?? 0) * 1024 * 1024;
  tuneWriter(raw, mmapBytes);
  const sizeCache = () => raw.pragma(`cache_size = -${cacheMib(config.sqliteCacheMb ?? 0, file) * 1024}`);
  sizeCache();
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
  const readPool = inMemory
    ? undefined
    : new ReadPool(
        Array.from({ length: readerCount(opts) }, () => new SqliteReaderSlot(sqliteFile, mmapBytes)),
        poolOptions,
      );
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
        sizeCache();
        sampleIndexesWithoutLines(raw);
        return indexesWithStatistics(raw);
      });
      if (!readPool || shapes.length === 0) return;
      const lines = await measureIndexes(shapes, readPool, onError);
      await onRawConnection(() => installStatLines(raw, lines));
    },
    forgetErasedBytes: async () => {
      if (inMemory) return;
      for (const started = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 10))) {
        const [result] = (await onRawConnection(() => raw.pragma('wal_checkpoint(TRUNCATE)'))) as { busy: number }[];
        if (result.busy === 0 || Date.now() - started > TRUNCATE_PATIENCE_MS) return;
      }
    },
    close: async () => {
      await readPool?.close();
      await checkpointer?.close();
      await db.destroy();
    },
  });
}

/** How long forgetErasedBytes retries its TRUNCATE checkpoint while reads hold older snapshots (ms). */
const TRUNCATE_PATIENCE_MS = 5_000;

/** The writer's page cache when SQLITE_CACHE_MB is unset (0): the data and a quarter more, within these (MiB). */
export const CACHE_MIN_MIB = 8;
export const CACHE_MAX_MIB = 32;

/**
 * The writer's page cache, in MiB: `configured` when set, else sized to the database file (its size and a
 * quarter more, CACHE_MIN_MIB to CACHE_MAX_MIB).
 * NOTE: a page the cache misses comes from the OS's file cache, a system call and a copy away. With the bench's
 * small contacts a fixed 8 MiB cost no CPU measured (the indexes' interior pages, read by every statement, take a
 * few hundred KiB), but 10,000 realistic contacts take 27 MB with their indexes, and point reads at random then
 * paid a `pread` or two each. The cache fills only with pages read, so a small database never holds more than
 * itself; the bound keeps the server's memory within its target (200 MiB after the bench: at 64 MiB it held
 * ~47 MiB more than at 16). Re-measured hourly with the planner statistics, as the data grows.
 */
export function cacheMib(configured: number, file: string): number {
  if (configured > 0) return configured;
  let bytes = 0;
  try {
    bytes = statSync(file).size;
  } catch {
    // in memory, or not created yet: the least
  }
  return Math.min(CACHE_MAX_MIB, Math.max(CACHE_MIN_MIB, Math.ceil((bytes * 1.25) / 2 ** 20)));
}

/** The writer connection's settings. */
function tuneWriter(raw: BetterSqlite.Database, mmapBytes: number): void {
  raw.pragma('journal_mode = WAL');
  // NOTE: WAL + synchronous=NORMAL keeps every committed transaction across a kill -9 of the process
  // (only an OS crash or power loss could drop the last commits).
  raw.pragma('synchronous = NORMAL');
  // NOTE: another process's write lock (`crm worker`, the CLI) is never waited for on this thread, which is the
  // event loop: a locked write fails at once and waits in the driver's line, off the loop (sqlite-lock.ts), for at
  // most QUERY_TIMEOUT_MS (the deadline of a request's statements, one setting for the operator), then answers
  // 503 database_unavailable. Opening the file (openSqlite) may still wait (better-sqlite3's 5 s default): once, at start.
  raw.pragma('busy_timeout = 0');
  // NOTE: SQLITE_MMAP_MB (off by default) maps that much of the file into each connection (this one and the read
  // processes'): a page missing from the cache is then read from the OS's file cache in place, without a system
  // call and a copy. That matters when reads land at random in tables much larger than the cache: a page of 50
  // deals with their contacts and companies expanded, at 1,000,000 contacts, read ~163 pages a request with
  // `pread` and cost 1,903 µs of server CPU; mapped, 1,212 µs (measured in the bench). Off by
  // default because every mapped page the server touches counts in its resident memory: after that bench the
  // server's tree held 1,248 MiB (Pss) mapped against 156 MiB, although those pages are the OS's file cache,
  // which `pread` reads from too and which the kernel can drop at any time.
  if (mmapBytes > 0) raw.pragma(`mmap_size = ${mmapBytes}`);
  // NOTE: what a statement deletes or overwrites is zeroed in the file (CONTRACT D.5: an erased person's bytes must not
  // stay in free space or on the freelist); the cost is a memset per freed cell and a write per page freed.
  raw.pragma('secure_delete = on');
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
  // creates 0.99–1.12 → 0.77–0.91 ms in the bench). Reads do not pay for the longer WAL: a read
  // looks up only the frames past the last checkpoint (SQLite's minFrame), which the thread keeps a few
  // milliseconds behind. The WAL file keeps its largest size on disk (up to ~64 MiB) after a restart.
  // NOTE: checkpoints on a thread of their own *instead of* these (automatic ones off) were tried and
  // dropped: under a steady write load a concurrent PASSIVE checkpoint never catches up with the writer, so
  // the WAL is never restarted and grows without bound; creates fell from 1,750 to 1,156/s. The thread of
  // sqlite-checkpointer.ts copies ahead of these instead, which stay and restart the WAL as before.
  raw.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
}

/**
 * SQL functions of ours that SQLite must know on every connection: this one, and each read process's
 * (sqlite-reader.process.mjs registers the same). `crm_fold` folds text as the search does (dialect.ts
 * foldedSql); deterministic, so SQLite may evaluate it once for a constant argument.
 */
function registerSqliteFunctions(raw: BetterSqlite.Database): void {
  raw.function(FOLD_FUNCTION, { deterministic: true }, sqlFold);
  // The keys of the duplicate rules (CONTRACT D.3), which expression indexes of migration 022 hold.
  registerDuplicateKeyFunctions(raw);
}
