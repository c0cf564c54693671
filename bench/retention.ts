// Retention under load (issue 9: retention deletes 1 million old events while GET /contacts/:id keeps its
// p99 within 2× of its idle value).
//
// Seeds a temporary SQLite database (or the PostgreSQL of DATABASE_URL: point it at a scratch database)
// with one tenant, 1,000 contacts and EVENTS events older than the retention, then:
// 1. idle: `crm serve` with its in-process workers (retention every second), warmed up, before the events
//    are old enough; GET /contacts/:id at a steady load, p50/p99;
// 2. retention: the same process once the events pass the retention; the same load, in 5 s windows,
//    until every old event is deleted. Reports the p99 of each window and of the
//    whole deletion against the idle value, and the deletion rate.
// The load is steady: RATE requests/s over CONNECTIONS connections (autocannon, in this process; the server
// is another process). A saturating load (--rate 0) measures queueing on this 2-core machine instead:
// any background work there lengthens every queue.
//
// Usage: npm run build && node --import tsx bench/retention.ts [--events 1000000] [--connections 4] [--rate 0]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error autocannon ships no types
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/index.js';
import { CLI, crmSetup, startProcess } from './serve.js';

const { values: args } = parseArgs({
  options: { events: { type: 'string', default: '1000000' }, connections: { type: 'string', default: '4' }, rate: { type: 'string', default: '0' } },
});
const EVENTS = Number(args.events);
const CONNECTIONS = Number(args.connections);
/** Requests per second across the connections: a steady API load, not a saturating one (0: as fast as it answers). */
const RATE = Number(args.rate);
const WINDOW_S = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (s: string) => process.stderr.write(`${s}\n`);

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crm-retbench-'));
const env: Record<string, string> = {
  DATA_DIR: dataDir,
  CRM_NO_DEMO: 'true',
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  CRM_SECRET_KEY: '44'.repeat(32),
  EVENT_RETENTION_DAYS: '30',
  DELIVERY_RETENTION_DAYS: '30',
  // Retention looks every second, so that it starts as soon as the events pass it.
  RETENTION_INTERVAL_MS: '1000',
};
const { apiKeys, tenantId } = crmSetup(env, dataDir, {
  tenant: { name: `Retention bench ${Date.now()}` },
  users: [{ ref: 'u', name: 'Bench', email: 'bench@ret.test' }],
  apiKeys: [{ ref: 'k', name: 'Reader', user: 'u', scopes: ['*'], rateLimit: 1000 }],
  pipelines: [{ ref: 'p', name: 'Sales', isDefault: true, stages: [{ ref: 's', name: 'Lead', probability: 10 }] }],
});
const key = apiKeys.k;

const database = createDatabase(loadConfig(env), { readers: 1 });
// The load is far beyond any key's allowed rate (setup caps it): lift it as the main bench's seed does.
await database.db.updateTable('api_keys').set({ rate_limit: 100_000_000 }).where('tenant_id', '=', tenantId).execute();
// Old events, in bulk: EVENTS rows that pass the 30 days of retention LEAD_S seconds from now, with a
// payload of the usual size. One server process measures both phases: idle (and warmed up) before they
// pass it, then during their deletion.
const LEAD_S = 45;
const expireAt = Date.now() + LEAD_S * 1000;
const old = new Date(expireAt - 30 * 86_400_000).toISOString();
const t0 = Date.now();
for (let done = 0; done < EVENTS; done += 100_000) {
  const n = Math.min(100_000, EVENTS - done);
  await sql`
    with recursive s(i) as (select 1 union all select i + 1 from s where i < ${sql.lit(n)})
    insert into events (tenant_id, id, type, payload, created_at)
    select ${tenantId}, 'evt_old_' || (i + ${sql.lit(done)}), 'contact.updated',
      '{"event":"contact.updated","tenantId":"${sql.raw(tenantId)}","timestamp":"${sql.raw(old)}","data":{"contact":{"id":"ct_' || i || '","firstName":"Ana","lastName":"Souza","email":"ana' || i || '@example.com","phone":null,"companyId":null,"ownerId":null,"tags":[],"customProperties":{},"createdAt":"${sql.raw(old)}","updatedAt":"${sql.raw(old)}"},"changes":["lastName"],"previous":{"lastName":"Lima"}}}',
      ${old}
    from s`.execute(database.db);
}
say(`seeded ${EVENTS} old events in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
const remaining = async () => Number((await sql<{ n: number }>`select count(*) as n from events where created_at <= ${old}`.execute(database.db)).rows[0].n);

interface Window {
  requests: number;
  p50: number;
  p99: number;
  non2xx: number;
}
async function load(ids: string[], seconds: number): Promise<Window> {
  let i = 0;
  const r = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    ...(RATE > 0 ? { overallRate: RATE } : {}),
    headers: { 'x-api-key': key },
    requests: [{ method: 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `/api/v1/contacts/${ids[i++ % ids.length]}` }) }],
  });
  return { requests: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx };
}

const server = await startProcess([CLI, 'serve'], { ...env, WORKERS: 'true' }, '/healthz');
try {
  const ids: string[] = [];
  for (let i = 0; i < 1000; i += 100) {
    const r = await fetch(`${server.url}/api/v1/contacts/batch/create`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: Array.from({ length: 100 }, (_, j) => ({ firstName: `C${i + j}`, email: `c${i + j}@ret.test` })) }),
    });
    const body = (await r.json()) as { results: { id: string }[] };
    ids.push(...body.results.map((x) => x.id));
  }
  await load(ids, 3); // warm-up
  const idle = await load(ids, 10);
  say(`idle: ${idle.requests} requests, p50 ${idle.p50} ms, p99 ${idle.p99} ms`);
  const before = await remaining();
  if (before !== EVENTS) throw new Error(`retention started before the idle phase ended (${before} of ${EVENTS} left): raise LEAD_S`);
  await sleep(Math.max(0, expireAt - Date.now()));
  const startedAt = Date.now();
  const windows: Window[] = [];
  let left = before;
  while (left > 0 && windows.length < 120) {
    const w = await load(ids, WINDOW_S);
    left = await remaining();
    windows.push(w);
    say(`retention window ${windows.length}: ${w.requests} requests, p50 ${w.p50} ms, p99 ${w.p99} ms, non-2xx ${w.non2xx}; ${left} old events left`);
  }
  const seconds = (Date.now() - startedAt) / 1000;
  const worst = Math.max(...windows.map((w) => w.p99));
  const weighted = windows.reduce((s, w) => s + w.p99 * w.requests, 0) / windows.reduce((s, w) => s + w.requests, 0);
  console.log(
    `retention: ${before - left} old events deleted in ≤ ${seconds.toFixed(1)} s (${Math.round((before - left) / seconds)}/s) while GET /contacts/:id ran at ${CONNECTIONS} connections, ${RATE || 'unbounded'} requests/s`,
  );
  console.log(
    `GET /contacts/:id p99: idle ${idle.p99} ms; during retention ${weighted.toFixed(1)} ms (request-weighted over ${windows.length} windows of ${WINDOW_S} s), worst window ${worst} ms → ×${(weighted / idle.p99).toFixed(2)} (worst ×${(worst / idle.p99).toFixed(2)}); target ≤ ×2`,
  );
} finally {
  await server.stop().catch(() => {});
  await database.close();
  rmSync(dataDir, { recursive: true, force: true });
}
