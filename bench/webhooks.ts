// Webhook delivery bench: the real `crm serve` process (dist/, SQLite, in-process worker) delivering to a
// local HTTPS receiver (self-signed certificate trusted through NODE_EXTRA_CA_CERTS).
//
//   node --import tsx bench/webhooks.ts            (dist/ must be built: npm run build)
//
// Phases:
//   latency     contacts created one after another through the API; latency = receiver arrival − the
//               event's `timestamp` (taken inside the write's transaction, just before its commit)
//   paced       contacts created through the API at a steady rate (BENCH_WEBHOOK_RATE per second, 15 s);
//               the latency under that load
//   saturated   contacts created through the API by 16 concurrent clients, as fast as the server takes
//               them; events/s delivered while the same process is busy with the API
//   backlog     the server stopped, a backlog of events written straight into the outbox, the server
//               started again: events/s of the drain (delivery alone, no API traffic)
// Sizes: BENCH_WEBHOOK_LATENCY (300), BENCH_WEBHOOK_SUSTAINED (3000), BENCH_WEBHOOK_BACKLOG (5000).
// Prints a report on stderr and one JSON object on stdout.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createDatabase, withTx } from '../src/db/index.js';
import { emitEvent } from '../src/events/outbox.js';
import { makeTestCert, opensslAvailable } from '../test/helpers/test-cert.js';
import { startReceiver } from '../test/helpers/https-receiver.js';
import { SERVE_NODE_ARGS, freePort } from './serve.js';
import { STANDARD_SETUP } from '../test/helpers/fixtures.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const CLI = path.join(ROOT, 'dist/cli/index.js');
const size = (name: string, def: number) => (process.env[name] && /^\d+$/.test(process.env[name]!) ? Number(process.env[name]) : def);
const N_LATENCY = size('BENCH_WEBHOOK_LATENCY', 300);
const N_SUSTAINED = size('BENCH_WEBHOOK_SUSTAINED', 3000);
const RATE = size('BENCH_WEBHOOK_RATE', 100);
const PACED_SECONDS = 15;
const N_BACKLOG = size('BENCH_WEBHOOK_BACKLOG', 5000);
const CLIENTS = 16;
// Each key may make 1000 calls a minute: the writes are spread over enough keys.
const KEYS = 1 + Math.ceil((N_LATENCY + N_SUSTAINED + RATE * PACED_SECONDS + 50) / 800);

const say = (...a: unknown[]) => process.stderr.write(a.join(' ') + '\n');

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

async function main() {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npm run build)`);
  if (!opensslAvailable()) throw new Error('openssl is needed to make the receiver certificate');
  const cert = makeTestCert();
  const rx = await startReceiver(cert);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-webhooks-'));
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    REDIS_URL: '',
    CRM_NO_DEMO: 'true',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_TIMEOUT_MS: '10000',
    NODE_EXTRA_CA_CERTS: cert.caFile,
  };
  let server: ChildProcess | null = null;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;

  async function start() {
    server = spawn(process.execPath, [...SERVE_NODE_ARGS, CLI, 'serve'], {
      env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const until = Date.now() + 30_000;
    for (;;) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) return;
      } catch {
        /* starting */
      }
      if (server.exitCode !== null || Date.now() > until) throw new Error('the server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  async function stop() {
    const p = server;
    if (!p || p.exitCode !== null) return;
    await new Promise((r) => {
      p.on('exit', r);
      p.kill('SIGTERM');
    });
  }

  try {
    await start();
    const setup = STANDARD_SETUP();
    setup.apiKeys = Array.from({ length: KEYS }, (_, i) => ({ ref: `k${i}`, name: `bench ${i}`, user: 'ana', scopes: ['*'], rateLimit: 1000 }));
    const file = path.join(dataDir, 'setup.json');
    writeFileSync(file, JSON.stringify(setup));
    const r = spawnSync(process.execPath, [CLI, 'setup', 'apply', file], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`setup apply failed: ${r.stdout}`);
    const tenant = JSON.parse(r.stdout) as { tenantId: string; apiKeys: Record<string, string> };
    const keys = Object.values(tenant.apiKeys);
    let seq = 0;
    const call = async (key: string, method: string, url: string, body?: unknown) => {
      const res = await fetch(`${base}/api/v1${url}`, {
        method,
        headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = await res.json();
      if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    await call(keys[0], 'POST', '/webhooks', { name: 'bench', url: rx.url('/bench'), events: ['contact.created'] });
    let turn = 0;
    const createContact = () => call(keys[turn++ % keys.length], 'POST', '/contacts', { firstName: 'Bench', email: `c${++seq}@bench.test` });

    /** Receiver arrivals from index `from` on: latency of each event (first arrival per event). */
    const latencies = (from: number) => {
      const seen = new Set<string>();
      const out: number[] = [];
      for (const req of rx.requests.slice(from)) {
        const id = String(req.headers['webhook-id']);
        if (seen.has(id)) continue;
        seen.add(id);
        out.push(req.at - Date.parse(req.json.timestamp));
      }
      return out;
    };
    const waitFor = async (count: number, what: string) => {
      const until = Date.now() + 300_000;
      while (rx.requests.length < count) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${rx.requests.length}/${count}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };

    // warm-up
    for (let i = 0; i < 20; i++) await createContact();
    await waitFor(20, 'warm-up');

    // 1. latency, one write at a time
    let from = rx.requests.length;
    for (let i = 0; i < N_LATENCY; i++) await createContact();
    await waitFor(from + N_LATENCY, 'latency phase');
    const lat = latencies(from);

    // 2. paced API load
    from = rx.requests.length;
    const nPaced = RATE * PACED_SECONDS;
    const tp = Date.now();
    await Promise.all(
      Array.from({ length: nPaced }, async (_, i) => {
        const due = tp + (i * 1000) / RATE - Date.now();
        if (due > 0) await new Promise((r) => setTimeout(r, due));
        await createContact();
      }),
    );
    await waitFor(from + nPaced, 'paced phase');
    const latPaced = latencies(from);

    // 3. saturated API load
    from = rx.requests.length;
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < N_SUSTAINED) {
          next++;
          await createContact();
        }
      }),
    );
    const writesDone = Date.now();
    await waitFor(from + N_SUSTAINED, 'saturated phase');
    const sustainedReqs = rx.requests.slice(from);
    const sustainedSpan = (sustainedReqs.at(-1)!.at - t0) / 1000;
    const latLoad = latencies(from);

    // 4. backlog drain
    await stop();
    const database = createDatabase(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: '' }));
    for (let i = 0; i < N_BACKLOG; i += 50) {
      await withTx(database.db, async (tx) => {
        for (let j = i; j < Math.min(N_BACKLOG, i + 50); j++)
          await emitEvent(tx, tenant.tenantId, 'contact.created', { id: `con_backlog_${j}`, firstName: 'Backlog' });
      });
    }
    await database.close();
    from = rx.requests.length;
    await start();
    await waitFor(from + N_BACKLOG, 'backlog drain');
    const drained = rx.requests.slice(from);
    const drainSpan = (drained.at(-1)!.at - drained[0].at) / 1000;

    const result = {
      bench: 'webhooks',
      database: 'sqlite',
      cpus: os.cpus().length,
      loadAverage: os.loadavg().map((x) => round(x, 2)),
      latency: { events: N_LATENCY, p50Ms: pct(lat, 50), p90Ms: pct(lat, 90), p99Ms: pct(lat, 99), maxMs: Math.max(...lat) },
      paced: {
        events: nPaced,
        writesPerSecond: RATE,
        p50Ms: pct(latPaced, 50),
        p90Ms: pct(latPaced, 90),
        p99Ms: pct(latPaced, 99),
        maxMs: Math.max(...latPaced),
      },
      saturated: {
        events: N_SUSTAINED,
        clients: CLIENTS,
        writesPerSecond: round(N_SUSTAINED / ((writesDone - t0) / 1000)),
        deliveredPerSecond: round(N_SUSTAINED / sustainedSpan),
        p50Ms: pct(latLoad, 50),
        p99Ms: pct(latLoad, 99),
      },
      backlog: { events: N_BACKLOG, deliveredPerSecond: round(N_BACKLOG / drainSpan) },
      duplicates: rx.requests.length - new Set(rx.requests.map((q) => String(q.headers['webhook-id']))).size,
    };
    say('\nWebhook delivery (SQLite, one crm serve process, local HTTPS receiver)');
    say(
      `  commit → delivery latency, one write at a time (${N_LATENCY}): p50 ${result.latency.p50Ms} ms, p90 ${result.latency.p90Ms} ms, p99 ${result.latency.p99Ms} ms, max ${result.latency.maxMs} ms`,
    );
    say(
      `  commit → delivery latency at ${RATE} writes/s (${nPaced}): p50 ${result.paced.p50Ms} ms, p90 ${result.paced.p90Ms} ms, p99 ${result.paced.p99Ms} ms, max ${result.paced.maxMs} ms`,
    );
    say(
      `  API saturated (${N_SUSTAINED} writes, ${CLIENTS} clients): ${result.saturated.writesPerSecond} writes/s, ${result.saturated.deliveredPerSecond} events/s delivered meanwhile (latency p50 ${result.saturated.p50Ms} ms, p99 ${result.saturated.p99Ms} ms: a queue builds up)`,
    );
    say(`  backlog drain (${N_BACKLOG}): ${result.backlog.deliveredPerSecond} events/s delivered`);
    say(`  duplicate deliveries: ${result.duplicates}`);
    process.stdout.write(JSON.stringify(result) + '\n');
  } finally {
    await stop();
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  say(`webhook bench failed: ${err?.stack ?? err}`);
  process.exit(1);
});
