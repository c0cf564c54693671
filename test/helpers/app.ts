import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDatabase, migrate, type Database } from '../../src/db/index.js';
import { applySetup, type SetupResult } from '../../src/admin/setup.js';
import { STANDARD_SETUP } from './fixtures.js';

export const DIALECT = process.env.TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: DIALECT === 'postgres' ? (process.env.DATABASE_URL ?? '') : '',
    REDIS_URL: DIALECT === 'postgres' ? (process.env.REDIS_URL ?? '') : '',
    CRM_SECRET_KEY: '11'.repeat(32),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    WORKERS: 'false',
    ...env,
  });
}

/** A SQLite database of its own in a scratch directory, for tests of the SQLite layer (`file` is its path). */
export interface ScratchSqlite {
  dir: string;
  file: string;
  database: Database;
  /** Closes the database and deletes the directory. */
  remove(): Promise<void>;
}

export function scratchSqlite(prefix: string): ScratchSqlite {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const database = createDatabase(testConfig({ DATA_DIR: dir }));
  return {
    dir,
    file: path.join(dir, 'crm.db'),
    database,
    remove: async () => {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  config: Config;
}

/**
 * One app and database per test file (closed after the file). SQLite runs in a scratch file, so that
 * data-dependent reads take the same road as in production (the read pool's processes cannot open an
 * in-memory database); PostgreSQL shares the `test` database, and every test makes its own tenants, so
 * files never see each other's data.
 */
export async function testApp(env: Record<string, string> = {}): Promise<TestApp> {
  const config = testConfig(env);
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const database = createDatabase(config, { sqliteFile: path.join(dir, 'crm.db'), poolSize: 5 });
  await migrate(database);
  const app = await buildApp({ config, database });
  await app.ready();
  after(async () => {
    await app.close();
    await database.close();
  });
  return { app, database, config };
}

export type Body = Record<string, any> | any[] | string | undefined;

export interface Client {
  key: string;
  get(url: string, headers?: Record<string, string>): Promise<Res>;
  post(url: string, body?: Body, headers?: Record<string, string>): Promise<Res>;
  patch(url: string, body?: Body, headers?: Record<string, string>): Promise<Res>;
  put(url: string, body?: Body, headers?: Record<string, string>): Promise<Res>;
  delete(url: string, headers?: Record<string, string>): Promise<Res>;
}

export interface Res {
  status: number;
  body: any;
  headers: LightMyRequestResponse['headers'];
  raw: LightMyRequestResponse;
}

const API = '/api/v1';

/** An HTTP client for one key, through inject(). URLs are relative to /api/v1. */
export function client(app: FastifyInstance, key: string | undefined): Client {
  const call = async (method: string, url: string, body?: Body, headers: Record<string, string> = {}): Promise<Res> => {
    const h: Record<string, string> = { ...headers };
    if (key !== undefined) h['x-api-key'] = key;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
    const raw = await app.inject({
      method: method as any,
      url:
        url.startsWith('/') &&
        !url.startsWith(API) &&
        !url.startsWith('/f/') &&
        !url.startsWith('/healthz') &&
        !url.startsWith('/readyz') &&
        !url.startsWith('/docs')
          ? API + url
          : url,
      payload,
      headers: h,
    });
    let parsed: any = raw.body;
    if ((raw.headers['content-type'] ?? '').toString().includes('json') && raw.body) parsed = JSON.parse(raw.body);
    return { status: raw.statusCode, body: parsed, headers: raw.headers, raw };
  };
  return {
    key: key ?? '',
    get: (u, h) => call('GET', u, undefined, h),
    post: (u, b, h) => call('POST', u, b, h),
    patch: (u, b, h) => call('PATCH', u, b, h),
    put: (u, b, h) => call('PUT', u, b, h),
    delete: (u, h) => call('DELETE', u, undefined, h),
  };
}

export interface Tenant extends SetupResult {
  /** Client with the full-scope key (`*`, rate limit 1000). */
  api: Client;
  /** Client for any key ref of the setup. */
  as(keyRef: string): Client;
}

/** Provisions a fresh tenant (the standard fixture unless a setup is given) and returns clients. */
export async function newTenant(t: TestApp, setup: Record<string, any> = STANDARD_SETUP()): Promise<Tenant> {
  const result = await applySetup(t.database.db, setup);
  return {
    ...result,
    api: client(t.app, result.apiKeys.full),
    as: (ref: string) => client(t.app, result.apiKeys[ref]),
  };
}

/** A statement as run: its SQL and parameters. */
export interface RanStatement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Runs `fn` recording the statements it sends to the read pool (`pooled`) and those it runs on the main
 * connection (`main`): where a request's statements run, and what they are (db/reads.ts).
 */
export async function recordStatements<T>(database: Database, fn: () => Promise<T>): Promise<{ result: T; pooled: RanStatement[]; main: RanStatement[] }> {
  const pool = database.readPool;
  const db = database.db;
  const pooled: RanStatement[] = [];
  const main: RanStatement[] = [];
  const run = pool?.run;
  const exec = db.executeQuery;
  if (pool && run) pool.run = (tenantId, sql, parameters, ...rest) => (pooled.push({ sql, parameters }), run.call(pool, tenantId, sql, parameters, ...rest));
  db.executeQuery = ((q: RanStatement) => (main.push({ sql: q.sql, parameters: q.parameters }), exec.call(db, q as never))) as typeof exec;
  try {
    return { result: await fn(), pooled, main };
  } finally {
    if (pool && run) pool.run = run;
    db.executeQuery = exec;
  }
}
