import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  redisUrl: string | undefined;
  workers: boolean;
  /** `GET /metrics` (Prometheus text format); METRICS=false turns it off. */
  metrics: boolean;
  webhookTimeoutMs: number;
  webhookRetryDelays: number[];
  webhookAllowPrivateNetworks: boolean;
  dynamicListIntervalMs: number;
  logLevel: string;
  /** `LOG_FORMAT`: `json` lines, `pretty` one-line text, or `auto` (pretty when stderr is a terminal). */
  logFormat: 'auto' | 'json' | 'pretty';
  noDemo: boolean;
  /** Base of public URLs (form embedUrl); unset: derived from each request's protocol and Host. */
  publicBaseUrl: string | undefined;
  /** Deadline of a data-dependent query (list, search, filter, count); past it 503 `query_timeout` (DESIGN §4). */
  queryTimeoutMs: number;
  /** Data-dependent queries one tenant may have waiting for a read connection; beyond, 429 (DESIGN §4). */
  queryQueuePerTenant: number;
  /** PostgreSQL: connections of the pool of writes and point reads (the read pool has its own). */
  databasePoolSize: number;
  /**
   * SQLite: how much of the database file each connection reads through a memory map (`SQLITE_MMAP_MB`, MiB;
   * 0, the default, reads every page with a system call). See db/index.ts.
   */
  sqliteMmapMb: number;
  /**
   * SQLite: the writer's page cache (`SQLITE_CACHE_MB`, MiB). 0, the default, sizes it to the data: the database
   * file and a quarter more, 8 to 32 MiB, measured at start and hourly (db/sqlite-open.ts cacheMib).
   */
  sqliteCacheMb: number;
  /** On SIGTERM, how long the server keeps accepting and answering before it stops accepting (A.1). */
  shutdownDrainMs: number;
  /** How long a stored idempotent answer is kept (C.3, `IDEMPOTENCY_TTL_HOURS`); fractions allowed. */
  idempotencyTtlHours: number;
  /** A webhook failing this long without a success is deactivated (C.4, `WEBHOOK_DISABLE_AFTER_HOURS`); fractions allowed. */
  webhookDisableAfterHours: number;
  /** How long events are kept (C.4, `EVENT_RETENTION_DAYS`); fractions allowed. */
  eventRetentionDays: number;
  /** How long webhook delivery records are kept (`DELIVERY_RETENTION_DAYS`, default EVENT_RETENTION_DAYS). */
  deliveryRetentionDays: number;
  /** How long a soft-deleted record can be restored; older ones are purged by the workers (D.1, `RESTORE_WINDOW_DAYS`). */
  restoreWindowDays: number;
  /** How long audit-log entries are kept (D.4, `AUDIT_RETENTION_DAYS`); fractions allowed. */
  auditRetentionDays: number;
  /** Long-polls of `GET /events?wait=` one API key may have waiting at once (`EVENT_WAIT_PER_KEY`). */
  eventWaitPerKey: number;
  /** Long-polls one server process holds at once (`EVENT_WAIT_MAX`). */
  eventWaitMax: number;
  /** How often the retention sweep runs (`RETENTION_INTERVAL_MS`). */
  retentionIntervalMs: number;
  /** Master key for secrets at rest. Resolved lazily: only webhook code needs it. */
  secretKey(): Buffer;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A positive decimal number of days (`30`, `0.5`), within bounds. */
function days(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(`${name} must be a number of days such as 30 or 0.5, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A positive decimal number of hours (`0.5`, `24`), within bounds. */
function hours(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(`${name} must be a number of hours such as 24 or 0.5, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Environment → one typed, validated Config. Fails fast with a message naming the variable. */
export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  }
  const delaysRaw = env.WEBHOOK_RETRY_DELAYS || '60,300,1800,7200';
  const webhookRetryDelays = delaysRaw.split(',').map((s) => s.trim());
  if (webhookRetryDelays.length !== 4 || webhookRetryDelays.some((s) => !/^\d+$/.test(s))) {
    throw new ConfigError('WEBHOOK_RETRY_DELAYS must be four comma-separated whole numbers of seconds');
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const logFormat = env.LOG_FORMAT || 'auto';
  if (logFormat !== 'auto' && logFormat !== 'json' && logFormat !== 'pretty') throw new ConfigError('LOG_FORMAT must be one of auto, json, pretty');
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const rawSecret = env.CRM_SECRET_KEY || undefined;
  if (rawSecret !== undefined && !/^[0-9a-fA-F]{64}$/.test(rawSecret)) {
    throw new ConfigError('CRM_SECRET_KEY must be 64 hex characters (32 bytes)');
  }
  let secret: Buffer | undefined = rawSecret ? Buffer.from(rawSecret, 'hex') : undefined;
  const publicBaseUrl = env.PUBLIC_BASE_URL ? env.PUBLIC_BASE_URL.replace(/\/+$/, '') : undefined;
  if (publicBaseUrl !== undefined && !/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(publicBaseUrl)) {
    throw new ConfigError('PUBLIC_BASE_URL must be an http(s) URL such as https://crm.example.com');
  }

  const eventRetentionDays = days(env, 'EVENT_RETENTION_DAYS', 30, 0.0001, 36_500);

  return {
    port: int(env, 'PORT', 3000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    dataDir,
    redisUrl: env.REDIS_URL || undefined,
    workers: bool(env, 'WORKERS', true),
    metrics: bool(env, 'METRICS', true),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 600_000),
    webhookRetryDelays: webhookRetryDelays.map(Number),
    webhookAllowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    dynamicListIntervalMs: int(env, 'DYNAMIC_LIST_INTERVAL_MS', 60_000, 10, 86_400_000),
    logLevel,
    logFormat,
    noDemo: bool(env, 'CRM_NO_DEMO', false),
    publicBaseUrl,
    queryTimeoutMs: int(env, 'QUERY_TIMEOUT_MS', 5_000, 1, 600_000),
    queryQueuePerTenant: int(env, 'QUERY_QUEUE_PER_TENANT', 200, 1, 100_000),
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 1_000),
    sqliteMmapMb: int(env, 'SQLITE_MMAP_MB', 0, 0, 1_048_576),
    sqliteCacheMb: int(env, 'SQLITE_CACHE_MB', 0, 0, 65_536),
    shutdownDrainMs: int(env, 'SHUTDOWN_DRAIN_MS', 1_000, 0, 8_000),
    idempotencyTtlHours: hours(env, 'IDEMPOTENCY_TTL_HOURS', 24, 0.001, 8_760),
    webhookDisableAfterHours: hours(env, 'WEBHOOK_DISABLE_AFTER_HOURS', 120, 0.0001, 87_600),
    eventRetentionDays,
    // NOTE: A.2 names one retention for "events and delivery records"; deliveries follow it unless set apart.
    deliveryRetentionDays: days(env, 'DELIVERY_RETENTION_DAYS', eventRetentionDays, 0.0001, 36_500),
    restoreWindowDays: days(env, 'RESTORE_WINDOW_DAYS', 90, 0.0001, 36_500),
    auditRetentionDays: days(env, 'AUDIT_RETENTION_DAYS', 365, 0.0001, 36_500),
    eventWaitPerKey: int(env, 'EVENT_WAIT_PER_KEY', 10, 1, 10_000),
    eventWaitMax: int(env, 'EVENT_WAIT_MAX', 1_000, 1, 1_000_000),
    retentionIntervalMs: int(env, 'RETENTION_INTERVAL_MS', 60_000, 10, 86_400_000),
    secretKey() {
      if (secret) return secret;
      if (databaseUrl) throw new ConfigError('CRM_SECRET_KEY is required with DATABASE_URL (64 hex characters)');
      // NOTE: CONTRACT A.2 — with SQLite the key is generated once into DATA_DIR and reused.
      const file = path.join(dataDir, 'secret.key');
      if (existsSync(file)) {
        const hex = readFileSync(file, 'utf8').trim();
        if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError(`${file} does not hold a 64-hex-character key`);
        secret = Buffer.from(hex, 'hex');
      } else {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 });
        const hex = randomBytes(32).toString('hex');
        writeFileSync(file, hex + '\n', { mode: 0o600, flag: 'wx' });
        secret = Buffer.from(hex, 'hex');
      }
      return secret;
    },
  };
}
