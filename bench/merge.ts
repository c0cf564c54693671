// Merge at scale (issue 51, CONTRACT D.2): POST /contacts/merge of two contacts that each have 1,000 activities and
// 100 deals, timed from the client against the real server (`crm serve`, its own process), target under 200 ms.
//
// Seeds a temporary SQLite database (or the PostgreSQL of DATABASE_URL: a scratch database whose name holds
// "bench"; its schema is dropped) with one tenant (`crm setup apply`), then, per round, two contacts created through
// the API, 100 deals each through POST /deals/batch/create, and 1,000 activities each linked to its contact,
// written straight to the tables (the API would take minutes under the key's rate limit). Each round merges its
// pair once and checks that the primary holds the 200 deals and 2,000 activity links afterwards.
//
// Usage: npm run build && node --import tsx bench/merge.ts [--rounds 5] [--activities 1000] [--deals 100]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createDatabase, migrate } from '../src/db/index.js';
import { newId } from '../src/util/ids.js';
import { insertBenchKey } from './seed.js';
import { CLI, SERVE_NODE_ARGS, crmSetup, startProcess } from './serve.js';

const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, activities: { type: 'string', default: '1000' }, deals: { type: 'string', default: '100' } },
});
const ROUNDS = Number(args.rounds);
const ACTIVITIES = Number(args.activities);
const DEALS = Number(args.deals);
const TARGET_MS = 200;

const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-merge-'));
const databaseUrl = process.env.DATABASE_URL ?? '';
if (databaseUrl && !/bench/.test(databaseUrl)) throw new Error('DATABASE_URL must name a scratch database whose name holds "bench"');
const env: Record<string, string> = {
  DATA_DIR: dir,
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.REDIS_URL ?? '',
  CRM_SECRET_KEY: '22'.repeat(32),
  LOG_LEVEL: 'warn',
  WORKERS: 'false',
  CRM_NO_DEMO: 'true',
};
const config = loadConfig(env);
const database = createDatabase(config);
if (databaseUrl) await sql`drop schema public cascade; create schema public`.execute(database.db).catch(() => {});
await migrate(database);
const setup = crmSetup(env, dir, {
  tenant: { name: 'Merge bench' },
  users: [{ ref: 'ana', name: 'Ana', email: 'ana@bench.test' }],
  apiKeys: [{ ref: 'k', name: 'k', user: 'ana', scopes: ['*'] }],
  pipelines: [{ ref: 'p', name: 'P', isDefault: true, stages: [{ ref: 's', name: 'S', probability: 10 }] }],
});
const { tenantId } = setup;
const refs = (setup as unknown as { refs: Record<string, string> }).refs;
const key = await insertBenchKey(database.db, tenantId, refs.ana, 'merge bench');
const server = await startProcess([...SERVE_NODE_ARGS, CLI, 'serve'], env, '/healthz');
const call = async (p: string, body: unknown) => {
  const r = await fetch(`${server.url}/api/v1${p}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return r.json() as Promise<any>;
};

/** A contact with DEALS deals (through the API) and ACTIVITIES activities (in the tables) linked to it. */
async function loadedContact(name: string): Promise<string> {
  const { id } = await call('/contacts', { firstName: name, email: `${name}@bench.test` });
  for (let i = 0; i < DEALS; i += 100) {
    const inputs = Array.from({ length: Math.min(100, DEALS - i) }, (_, k) => ({
      title: `${name} ${i + k}`,
      pipelineId: refs.p,
      stageId: refs.s,
      contactId: id,
    }));
    await call('/deals/batch/create', { inputs });
  }
  const now = new Date().toISOString();
  const rows = Array.from({ length: ACTIVITIES }, (_, k) => ({
    tenant_id: tenantId,
    id: newId('act'),
    type: 'call',
    title: `${name} call ${k}`,
    description: null,
    due_date: null,
    completed: 0,
    completed_at: null,
    priority: null,
    assigned_to_id: null,
    owner_id: refs.ana,
    created_at: now,
    updated_at: now,
  }));
  for (let i = 0; i < rows.length; i += 200) {
    const chunk = rows.slice(i, i + 200);
    await database.db.insertInto('activities').values(chunk).execute();
    await database.db
      .insertInto('activity_links')
      .values(chunk.map((a) => ({ tenant_id: tenantId, activity_id: a.id, object_type: 'contact', object_id: id, position: 0 })))
      .execute();
  }
  return id;
}

const times: number[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const primary = await loadedContact(`p${round}`);
    const merged = await loadedContact(`m${round}`);
    const t0 = performance.now();
    await call('/contacts/merge', { primaryId: primary, mergedId: merged });
    times.push(performance.now() - t0);
    const deals = await database.db
      .selectFrom('deals')
      .select(sql<number>`count(*)`.as('n'))
      .where('tenant_id', '=', tenantId)
      .where('contact_id', '=', primary)
      .executeTakeFirstOrThrow();
    const links = await database.db
      .selectFrom('activity_links')
      .select(sql<number>`count(*)`.as('n'))
      .where('tenant_id', '=', tenantId)
      .where('object_type', '=', 'contact')
      .where('object_id', '=', primary)
      .executeTakeFirstOrThrow();
    if (Number(deals.n) !== 2 * DEALS || Number(links.n) !== 2 * ACTIVITIES)
      throw new Error(`round ${round}: ${deals.n} deals, ${links.n} links on the primary`);
    process.stderr.write(`round ${round + 1}: ${times[round].toFixed(1)} ms\n`);
  }
} finally {
  await server.stop();
  await database.close();
  rmSync(dir, { recursive: true, force: true });
}
const sorted = [...times].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
const db = databaseUrl ? 'PostgreSQL' : 'SQLite';
console.log(
  `merge of two contacts with ${ACTIVITIES} activities and ${DEALS} deals each (${db}, ${ROUNDS} rounds): median ${median.toFixed(1)} ms, ` +
    `max ${sorted[sorted.length - 1].toFixed(1)} ms; target < ${TARGET_MS} ms: ${sorted[sorted.length - 1] < TARGET_MS ? 'met' : 'missed'}`,
);
