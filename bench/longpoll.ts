// Commit → long-poll answer latency with many waiting requests (issue 9: target p50 < 20 ms, p99 < 100 ms
// on SQLite with 1,000 waiting requests), and event-log read throughput paged with limit=1000.
// Starts a real `crm serve` (SQLite in a temporary DATA_DIR, or PostgreSQL when DATABASE_URL is set: its
// schema is used as is, so point it at a scratch database), holds WAITERS long-polls of GET /events?wait=30
// spread over keys (10 per key, the default bound), commits one contact through the API, and times each
// long-poll's answer from the moment the write's answer arrived.
//
// Usage: npm run build && node --import tsx bench/longpoll.ts [--waiters 1000] [--rounds 15] [--events 50000] [--profile <dir>]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { CLI, crmSetup, startProcess } from './serve.js';

const { values: args } = parseArgs({
  options: {
    waiters: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '15' },
    events: { type: 'string', default: '50000' },
    // A V8 CPU profile of the server into this folder (summarize with bench/profile.ts).
    profile: { type: 'string' },
  },
});
const WAITERS = Number(args.waiters);
const ROUNDS = Number(args.rounds);
const EVENTS = Number(args.events);
const PER_KEY = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crm-lpbench-'));
const env: Record<string, string> = {
  DATA_DIR: dataDir,
  CRM_NO_DEMO: 'true',
  LOG_LEVEL: 'warn',
  WORKERS: 'false',
  HOST: '127.0.0.1',
  CRM_SECRET_KEY: '33'.repeat(32),
};
const keys = Math.ceil(WAITERS / PER_KEY);
const { apiKeys, tenantId } = crmSetup(env, dataDir, {
  tenant: { name: `Long-poll bench ${Date.now()}` },
  users: [{ ref: 'u', name: 'Bench', email: 'bench@lp.test' }],
  apiKeys: [
    { ref: 'writer', name: 'Writer', user: 'u', scopes: ['*'], rateLimit: 1000 },
    ...Array.from({ length: keys }, (_, i) => ({ ref: `r${i}`, name: `Reader ${i}`, user: 'u', scopes: ['events:read'], rateLimit: 1000 })),
  ],
  pipelines: [{ ref: 'p', name: 'Sales', isDefault: true, stages: [{ ref: 's', name: 'Lead', probability: 10 }] }],
});

const profiling = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args.profile)}`] : [];
const server = await startProcess([...profiling, CLI, 'serve'], env, '/healthz');
const { url } = server;
const pool = new Pool(url, { connections: WAITERS + 20, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
async function get(key: string, p: string): Promise<any> {
  const r = await pool.request({ method: 'GET', path: `/api/v1${p}`, headers: { 'x-api-key': key } });
  const body = await r.body.json();
  if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${JSON.stringify(body)}`);
  return body;
}

try {
  let last: string | undefined;
  const all: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const answered: number[] = [];
    const polls = Array.from({ length: WAITERS }, (_, i) =>
      get(apiKeys[`r${Math.floor(i / PER_KEY)}`], `/events?wait=30${last ? `&after=${last}` : ''}`).then((b) => {
        answered.push(Date.now());
        return b;
      }),
    );
    await sleep(1500); // every long-poll is waiting
    const r = await pool.request({
      method: 'POST',
      path: '/api/v1/contacts',
      headers: { 'x-api-key': apiKeys.writer, 'content-type': 'application/json' },
      body: JSON.stringify({ firstName: `Round ${round}`, email: `r${round}-${Date.now()}@lp.test` }),
    });
    await r.body.text();
    const committed = Date.now();
    const bodies = await Promise.all(polls);
    if (bodies.some((b) => b.data.length !== 1)) throw new Error('a long-poll did not get the event');
    last = bodies[0].data[0].id;
    if (round > 0) all.push(...answered.map((t) => t - committed)); // round 0 warms up
    process.stderr.write(`round ${round}: ${bodies.length} answered\n`);
  }
  all.sort((a, b) => a - b);
  console.log(`commit → long-poll answer, ${WAITERS} waiting, ${ROUNDS - 1} rounds: p50 ${pct(all, 50)} ms, p99 ${pct(all, 99)} ms, max ${all.at(-1)} ms`);

  // Read throughput: EVENTS events written straight to the log, then paged with limit=1000 by `after`.
  if (EVENTS > 0) {
    const { loadConfig } = await import('../src/config.js');
    const { createDatabase } = await import('../src/db/index.js');
    const { sql } = await import('kysely');
    const database = createDatabase(loadConfig(env), { readers: 1 });
    await sql`
      with recursive s(i) as (select 1 union all select i + 1 from s where i < ${sql.lit(EVENTS)})
      insert into events (tenant_id, id, type, payload, created_at)
      select ${tenantId}, 'evt_bench_' || i, 'contact.updated',
        '{"event":"contact.updated","tenantId":"${sql.raw(tenantId)}","timestamp":"2026-11-01T00:00:00.000Z","data":{"contact":{"id":"ct_' || i || '","firstName":"Ana","lastName":"Souza","email":"ana' || i || '@example.com","phone":null,"companyId":null,"ownerId":null,"tags":[],"customProperties":{},"createdAt":"2026-11-01T00:00:00.000Z","updatedAt":"2026-11-01T00:00:00.000Z"},"changes":["lastName"],"previous":{"lastName":"Lima"}}}',
        '2026-11-01T00:00:00.000Z'
      from s`.execute(database.db);
    await database.close();
    const key = apiKeys.r0;
    let after = last;
    let read = 0;
    const t0 = Date.now();
    for (;;) {
      const page = await get(key, `/events?limit=1000&after=${after}`);
      read += page.data.length;
      if (page.data.length === 0) break;
      after = page.data.at(-1).id;
    }
    const s = (Date.now() - t0) / 1000;
    console.log(`event log read: ${read} events in ${s.toFixed(2)} s with limit=1000 → ${Math.round(read / s)} events/s (one client, sequential pages)`);
  }
} finally {
  await pool.close().catch(() => {});
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
