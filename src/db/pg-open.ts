/** PostgreSQL's side of createDatabase: the main pool, the heartbeat and the read pool. */
import { Kysely, PostgresDialect } from 'kysely';
import { readerCount, withReads, type Database, type DatabaseConfig, type DbOptions } from './database.js';
import { postgresDialect } from './dialect.js';
import { DatabaseUnavailable, PgHealth, gatedPool, gatedSlot } from './pg-health.js';
import { postgres } from './pg-module.js';
import { PgReaderSlot } from './pg-reader.js';
import { pgOptimizer } from './pg-stats.js';
import { useNamedStatements } from './prepared.js';
import { ReadPool, type ReadPoolOptions } from './reads.js';
import type { DB } from './tables/schema.js';

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

/** The database at `url` (createDatabase when DATABASE_URL is set). */
export function openPostgres(url: string, config: DatabaseConfig, opts: DbOptions, poolOptions: ReadPoolOptions): Database {
  const timeoutMs = poolOptions.timeoutMs;
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
    forgetErasedBytes: async () => {},
    close: async () => {
      await health.close();
      await readPool.close();
      await db.destroy();
    },
  });
}
