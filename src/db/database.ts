/** What createDatabase returns, its options, and the pieces both dialects' openers share. */
import { availableParallelism } from 'node:os';
import type pg from 'pg';
import type { Config } from '../config.js';
import type { SqlDialect } from './dialect.js';
import type { PgHealth, PgHealthOptions } from './pg-health.js';
import { directReads, pooledReads, type AbortSource, type ReadPool, type Reads } from './reads.js';
import type { Db } from './types.js';

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
  /**
   * After an erasure (CONTRACT D.5): no copy of the erased bytes is left in the database's files. SQLite zeroes what
   * is deleted (`secure_delete`, always on) and this truncates the write-ahead log, which still holds the pages as
   * they were (a TRUNCATE checkpoint, retried while a read holds an older snapshot). PostgreSQL: nothing to do, no
   * table shows a row's earlier versions.
   */
  forgetErasedBytes(): Promise<void>;
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

/** The settings createDatabase reads. */
export type DatabaseConfig = Pick<Config, 'databaseUrl' | 'dataDir'> &
  Partial<Pick<Config, 'queryTimeoutMs' | 'queryQueuePerTenant' | 'databasePoolSize' | 'sqliteMmapMb' | 'sqliteCacheMb'>>;

/** Connections of the read pool: `opts.readers`, else the cores, 2 to 4. */
export function readerCount(opts: DbOptions): number {
  return opts.readers ?? Math.min(4, Math.max(2, availableParallelism()));
}

/** The database with its `readsFor`: on the read pool when there is one, else on the main connection. */
export function withReads(base: Omit<Database, 'readsFor'>): Database {
  const { readPool, db } = base;
  const direct = directReads(db);
  return {
    ...base,
    readsFor: readPool ? (tenantId, signal) => pooledReads(db, readPool, tenantId, signal) : () => direct,
  };
}
