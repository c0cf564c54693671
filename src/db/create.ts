import type { Database, DatabaseConfig, DbOptions } from './database.js';
import { openPostgres } from './pg-open.js';
import type { ReadPoolOptions } from './reads.js';
import { openSqlite } from './sqlite-open.js';

const QUERY_TIMEOUT_DEFAULT_MS = 5_000;

/** PostgreSQL when `config.databaseUrl` is set, else the SQLite file (`opts.sqliteFile`, or DATA_DIR/crm.db). */
export function createDatabase(config: DatabaseConfig, opts: DbOptions = {}): Database {
  const poolOptions: ReadPoolOptions = { timeoutMs: config.queryTimeoutMs ?? QUERY_TIMEOUT_DEFAULT_MS, maxQueuedPerTenant: config.queryQueuePerTenant };
  if (config.databaseUrl) return openPostgres(config.databaseUrl, config, opts, poolOptions);
  return openSqlite(config, opts, poolOptions);
}
