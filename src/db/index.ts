import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration, type Transaction } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import { postgresDialect, sqliteDialect, type SqlDialect } from './dialect.js';
import { migrations } from './migrations/index.js';
import type { DB } from './tables/schema.js';

export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;

export interface Database {
  db: Db;
  dialect: SqlDialect;
  /** The pg pool (PostgreSQL only), for LISTEN/NOTIFY. */
  pool?: pg.Pool;
  ping(): Promise<void>;
  close(): Promise<void>;
}

// pg returns int8/numeric as strings; our bigints are cents and counts, far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export interface DbOptions {
  /** SQLite file; defaults to DATA_DIR/crm.db. ':memory:' for tests. */
  sqliteFile?: string;
  poolSize?: number;
}

export function createDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>, opts: DbOptions = {}): Database {
  if (config.databaseUrl) {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: opts.poolSize ?? 10 });
    pool.on('error', () => {}); // idle-client errors surface on the next query instead of crashing the process
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      dialect: postgresDialect,
      pool,
      ping: async () => void (await pool.query('select 1')),
      close: () => db.destroy(),
    };
  }
  let file = opts.sqliteFile;
  if (!file) {
    mkdirSync(config.dataDir, { recursive: true });
    file = path.join(config.dataDir, 'crm.db');
  }
  const raw = new SqliteDatabase(file);
  raw.pragma('journal_mode = WAL');
  // NOTE: WAL + synchronous=NORMAL keeps every committed transaction across a kill -9 of the process
  // (only an OS crash or power loss could drop the last commits).
  raw.pragma('synchronous = NORMAL');
  raw.pragma('busy_timeout = 5000');
  raw.pragma('cache_size = -65536');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });
  return {
    db,
    dialect: sqliteDialect,
    ping: async () => void raw.prepare('select 1').get(),
    close: () => db.destroy(),
  };
}

/**
 * Kysely prepares every query anew; better-sqlite3 statements are reusable, and preparing is a large
 * share of a point read. Caching them by SQL text (bounded) roughly halves the cost of hot queries.
 */
function withStatementCache(raw: SqliteDatabase.Database) {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => raw.close(),
    prepare(sqlText: string) {
      let stmt = cache.get(sqlText);
      if (!stmt) {
        stmt = raw.prepare(sqlText);
        if (cache.size >= 2000) cache.delete(cache.keys().next().value as string);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
  } as unknown as SqliteDatabase.Database;
}

/** Applies pending migrations; returns the names applied. Safe to run from several processes at once. */
export async function migrate(database: Database): Promise<string[]> {
  const dialect = database.dialect.name;
  const migrator = new Migrator({
    db: database.db,
    provider: {
      async getMigrations() {
        const out: Record<string, Migration> = {};
        for (const [name, m] of Object.entries(migrations)) out[name] = { up: (db) => m.up(db, dialect) };
        return out;
      },
    },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Runs fn in a transaction, or inside the caller's transaction when already in one. */
export async function withTx<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db as Tx);
  return db.transaction().execute(fn);
}
