// Helpers of the webhook tests that run real processes (crm serve / crm worker) against a real HTTPS
// receiver. Every file gets its own database: a fresh DATA_DIR on SQLite, a fresh PostgreSQL database
// on the PostgreSQL pass. NOTE: the delivery queue is global to a database (workers serve every tenant),
// so sharing the `test` database with other files' worker processes would let their workers (other
// CRM_SECRET_KEY, other WEBHOOK_* settings) attempt these deliveries, and ours theirs.
import { after } from 'node:test';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config.js';
import { createDatabase, migrate, type Database } from '../../src/db/index.js';
import { STANDARD_SETUP } from './fixtures.js';
import { cli, createScratchPostgres, IS_PG, processEnv, startServer, tmpDataDir, type RunningServer } from './server.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

/** A fresh PostgreSQL database next to DATABASE_URL's, dropped after the file. */
export async function isolatedPostgresUrl(label: string): Promise<string> {
  const scratch = await createScratchPostgres(label);
  cleanups.push(scratch.drop);
  return scratch.url;
}

export interface Stack {
  env: Record<string, string>;
  dataDir: string;
  config: Config;
  /** In-test connection to the same database (for looking at rows and writing events directly). */
  database: Database;
  /** Starts `crm serve` (or `crm worker`) with this stack's environment plus `extra`. */
  start(extra?: Record<string, string>, command?: string): Promise<RunningServer>;
  /** Provisions a tenant with `crm setup apply` (the standard fixture by default). */
  tenant(setup?: Record<string, any>): Promise<{ tenantId: string; refs: Record<string, string>; apiKeys: Record<string, string> }>;
}

/**
 * One database and environment for a test file. `extra` is the process environment of the servers
 * (WEBHOOK_*, NODE_EXTRA_CA_CERTS…).
 */
export async function stack(label: string, extra: Record<string, string>): Promise<Stack> {
  const dataDir = tmpDataDir();
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const env = processEnv(dataDir, { LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn', ...extra });
  if (IS_PG) env.DATABASE_URL = await isolatedPostgresUrl(label);
  const config = loadConfig({ DATABASE_URL: env.DATABASE_URL, DATA_DIR: dataDir, CRM_SECRET_KEY: env.CRM_SECRET_KEY });
  const database = createDatabase(config, { poolSize: 4 });
  cleanups.push(async () => database.close());
  await migrate(database);
  const servers: RunningServer[] = [];
  cleanups.push(async () => {
    await Promise.all(servers.map((s) => s.kill()));
  });
  let n = 0;
  return {
    env,
    dataDir,
    config,
    database,
    async start(more = {}, command = 'serve') {
      const s = await startServer({ ...env, ...more }, command);
      servers.push(s);
      return s;
    },
    async tenant(setup = STANDARD_SETUP()) {
      const file = path.join(dataDir, `setup-${++n}.json`);
      writeFileSync(file, JSON.stringify(setup));
      const r = cli(['setup', 'apply', file], env);
      if (r.status !== 0) throw new Error(`setup apply failed: ${r.stdout} ${r.stderr}`);
      return r.json;
    },
  };
}

export interface HttpRes {
  status: number;
  body: any;
}

/** A fetch client for one key of a running server (URLs relative to /api/v1). */
export function http(baseUrl: string, key: string) {
  const call = async (method: string, url: string, body?: unknown): Promise<HttpRes> => {
    const headers: Record<string, string> = { 'x-api-key': key };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${baseUrl}/api/v1${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: r.status, body: parsed };
  };
  return {
    get: (u: string) => call('GET', u),
    post: (u: string, b?: unknown) => call('POST', u, b),
    patch: (u: string, b?: unknown) => call('PATCH', u, b),
    delete: (u: string) => call('DELETE', u),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a value that passed `if (value)` can be: `cond && value` answers `false` while it waits. */
type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/** Polls `fn` until it returns a truthy value; throws naming `what` after `timeoutMs`. */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs: number, what: string): Promise<Truthy<T>> {
  const until = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await fn();
    if (last) return last as Truthy<T>;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await sleep(50);
  }
}

export { IS_PG };
