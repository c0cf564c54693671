// Helpers of the CLI / serve end-to-end tests: a scratch database per test (a fresh DATA_DIR on SQLite,
// a fresh database on the PostgreSQL pass) so "empty database" and "first migration" can be observed.
import { after } from 'node:test';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createDatabase, type Database } from '../../src/db/index.js';
import { createScratchPostgres, IS_PG, processEnv, tmpDataDir } from '../helpers/server.js';

export interface Scratch {
  dataDir: string;
  env: Record<string, string>;
  /** An in-test connection to the same database (opened on first use, closed after the file). */
  db(): Database;
  /** Writes a JSON file into the data dir; returns its path. */
  file(name: string, value: unknown): string;
}

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

async function scratchPostgres(): Promise<string> {
  const scratch = await createScratchPostgres('e2e');
  cleanups.push(scratch.drop);
  return scratch.url;
}

export async function scratch(extra: Record<string, string> = {}): Promise<Scratch> {
  const dataDir = tmpDataDir();
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const env = processEnv(dataDir, extra);
  if (IS_PG) env.DATABASE_URL = await scratchPostgres();
  let database: Database | undefined;
  return {
    dataDir,
    env,
    db() {
      if (!database) {
        const opened = createDatabase(loadConfig({ DATABASE_URL: env.DATABASE_URL, DATA_DIR: dataDir }));
        database = opened;
        // Closed before the scratch database is dropped (cleanups run in reverse).
        cleanups.push(async () => opened.close());
      }
      return database;
    },
    file(name, value) {
      const p = path.join(dataDir, name);
      writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
      return p;
    },
  };
}

export async function countTenants(s: Scratch): Promise<number> {
  const r = await s
    .db()
    .db.selectFrom('tenants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls fn every 100 ms until it returns true; resolves the elapsed ms, or throws after `limitMs`. */
export async function waitUntil(fn: () => Promise<boolean>, limitMs: number, what: string): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await fn()) return Date.now() - start;
    if (Date.now() - start > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(100);
  }
}

/** A setup file that exercises every section of A.3. */
export function sampleSetup(name = 'Acme e2e'): Record<string, any> {
  return {
    tenant: { name },
    users: [
      { ref: 'ana', name: 'Ana Souza', email: 'ana@acme.test' },
      { ref: 'bruno', name: 'Bruno Lima', email: 'bruno@acme.test' },
    ],
    apiKeys: [
      { ref: 'full', name: 'Integration', user: 'ana', scopes: ['*'], rateLimit: 1000 },
      { ref: 'ro', name: 'Read only', user: 'bruno', scopes: ['contacts:read'] },
    ],
    pipelines: [
      {
        ref: 'sales',
        name: 'Sales',
        isDefault: true,
        stages: [
          { ref: 'lead', name: 'Lead', probability: 10 },
          { ref: 'proposal', name: 'Proposal', probability: 60 },
          { ref: 'won', name: 'Won', probability: 100, isWonStage: true },
          { ref: 'lost', name: 'Lost', probability: 0, isLostStage: true },
        ],
      },
    ],
    lossReasons: [{ ref: 'price', name: 'Price too high' }],
    properties: [
      {
        ref: 'segment',
        objectType: 'contact',
        internalName: 'segment',
        label: 'Segment',
        type: 'select',
        group: 'Sales',
        isDefaultInForm: false,
        options: [
          { value: 'smb', label: 'SMB' },
          { value: 'ent', label: 'Enterprise' },
        ],
      },
    ],
    forms: [
      {
        ref: 'contact_us',
        name: 'Contact us',
        slug: 'contact-us',
        fields: [
          { name: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
          { name: 'name', label: 'Name', type: 'text', required: true, mapsTo: 'firstName' },
          { name: 'plan', label: 'Plan', type: 'select', required: false, options: [{ value: 'smb', label: 'SMB' }], mapsTo: 'customProperties.segment' },
        ],
      },
    ],
    lists: [
      {
        ref: 'hot',
        name: 'Hot leads',
        objectType: 'contact',
        kind: 'dynamic',
        filters: { operator: 'AND', conditions: [{ field: 'score', operator: 'gte', value: 80 }] },
      },
      { ref: 'vip', name: 'VIP', objectType: 'contact', kind: 'static' },
    ],
  };
}
