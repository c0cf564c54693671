// Commit → long-poll answer latency with many waiting requests (issue 9: target p50 < 20 ms, p99 < 100 ms
// on SQLite with 1,000 waiting requests), and event-log read throughput paged with limit=1000.
// Starts a real `crm serve` (SQLite in a temporary DATA_DIR, or PostgreSQL when DATABASE_URL is set: its
// schema is used as is, so point it at a scratch database), holds WAITERS long-polls of GET /events?wait=30
// spread over keys (10 per key, the default bound), commits one contact through the API, and times each
// long-poll's answer from the moment the write's answer arrived (both read by hand-written connections).
//
// Usage: npm run build && node --import tsx bench/longpoll.ts [--waiters 1000] [--rounds 15] [--events 50000] [--profile <dir>]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openConnections, type RawConnection } from './raw-http.js';
import { CLI, SERVE_NODE_ARGS, crmSetup, startProcess } from './serve.js';

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
const server = await startProcess([...SERVE_NODE_ARGS, ...profiling, CLI, 'serve'], env, '/healthz');
const { url } = server;
// Hand-written keep-alive connections (raw-http.ts): the client's own cost per answer stays in microseconds.
const port = Number(new URL(url).port);
const waiters = await openConnections(port, WAITERS);
const [writer] = await openConnections(port, 1);
async function get(conn: RawConnection, key: string, p: string): Promise<{ body: any; at: number }> {
  const r = await conn.request('GET', `/api/v1${p}`, { 'x-api-key': key });
  const body = JSON.parse(r.body.toString('utf8'));
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(body)}`);
  return { body, at: r.at };
}

try {
  let last: string | undefined;
  const all: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const polls = waiters.map((conn, i) => get(conn, apiKeys[`r${Math.floor(i / PER_KEY)}`], `/events?wait=30${last ? `&after=${last}` : ''}`));
    await sleep(1500); // every long-poll is waiting
    const r = await writer.request(
      'POST',
      '/api/v1/contacts',
      { 'x-api-key': apiKeys.writer, 'content-type': 'application/json' },
      JSON.stringify({ firstName: `Round ${round}`, email: `r${round}-${Date.now()}@lp.test` }),
    );
    if (r.status !== 201) throw new Error(`POST /contacts answered ${r.status}`);
    const committed = r.at;
    const answers = await Promise.all(polls);
    if (answers.some((a) => a.body.data.length !== 1)) throw new Error('a long-poll did not get the event');
    last = answers[0].body.data[0].id;
    if (round > 0) all.push(...answers.map((a) => a.at - committed)); // round 0 warms up
    process.stderr.write(`round ${round}: ${answers.length} answered\n`);
  }
  all.sort((a, b) => a - b);
  const ms = (x: number) => x.toFixed(1);
  console.log(
    `commit → long-poll answer, ${WAITERS} waiting, ${ROUNDS - 1} rounds: p50 ${ms(pct(all, 50))} ms, p99 ${ms(pct(all, 99))} ms, max ${ms(all.at(-1)!)} ms`,
  );

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
      const { body: page } = await get(writer, key, `/events?limit=1000&after=${after}`);
      read += page.data.length;
      if (page.data.length === 0) break;
      after = page.data.at(-1).id;
    }
    const s = (Date.now() - t0) / 1000;
    console.log(`event log read: ${read} events in ${s.toFixed(2)} s with limit=1000 → ${Math.round(read / s)} events/s (one client, sequential pages)`);
  }
} finally {
  for (const conn of [...waiters, writer]) conn.close();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
