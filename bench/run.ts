// `npm run bench`: seeds a large tenant on SQLite in a temporary DATA_DIR, starts the real server
// (`crm serve`) and a bare Fastify "ceiling" server as separate processes, and drives each scenario with
// autocannon (in this process). Prints a table (req/s, p50/p99 latency, server CPU µs per request read from
// /proc — robust when the load generator, not the server, is the bottleneck) and writes bench/results.json.
//
// Options: --duration <s> (10)  --connections <n> (50)  --warmup <s> (2)  --only <name,name>
//          --small (a 10x smaller data set, for a quick check)  --profile <scenario> (CPU profile of the
//          server during that scenario, written to .bench/profiles)  --keep (keep the data dir)
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error autocannon ships no types
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { createDatabase, migrate } from '../src/db/index.js';
import { DEFAULT_COUNTS, seed, type Seeded } from './seed.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const CLI = path.join(ROOT, 'dist/cli/index.js');
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '2' },
    only: { type: 'string' },
    small: { type: 'boolean', default: false },
    profile: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WARMUP = Number(args.warmup);
const log = (m: string) => process.stderr.write(m + '\n');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

interface Proc {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

async function startProcess(argv: string[], env: Record<string, string>, health: string): Promise<Proc> {
  const port = await freePort();
  const proc = spawn(process.execPath, argv, { cwd: ROOT, env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((r) => proc.on('exit', () => r()));
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`${argv.join(' ')} exited: ${stderr}`);
    try {
      const r = await fetch(url + health);
      await r.arrayBuffer();
      break;
    } catch {
      if (i > 300) throw new Error(`${argv.join(' ')} did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    proc,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

interface Scenario {
  name: string;
  target: 'ceiling' | 'api';
  method: 'GET' | 'POST';
  /** Builds the path (and body) of each request. */
  next: (i: number) => { path: string; body?: unknown };
}

function scenarios(s: Seeded): Scenario[] {
  const run = randomBytes(4).toString('hex');
  const pick = <T>(xs: T[], i: number) => xs[(i * 7_919) % xs.length];
  return [
    { name: 'ceiling: bare Fastify, same JSON', target: 'ceiling', method: 'GET', next: (i) => ({ path: `/api/v1/contacts/${pick(s.contactIds, i)}` }) },
    { name: 'GET /contacts/:id', target: 'api', method: 'GET', next: (i) => ({ path: `/api/v1/contacts/${pick(s.contactIds, i)}` }) },
    { name: 'GET /contacts (page of 50)', target: 'api', method: 'GET', next: (i) => ({ path: `/api/v1/contacts?page=${1 + (i % 20)}&pageSize=50` }) },
    {
      name: 'POST /contacts/search (ownerId eq + score gte)',
      target: 'api',
      method: 'POST',
      next: (i) => ({
        path: '/api/v1/contacts/search',
        body: { filters: { operator: 'AND', conditions: [{ field: 'ownerId', operator: 'eq', value: s.users[i % s.users.length] }, { field: 'score', operator: 'gte', value: 50 + (i % 40) }] }, pageSize: 50 },
      }),
    },
    {
      name: 'POST /contacts (unique e-mails)',
      target: 'api',
      method: 'POST',
      next: (i) => ({ path: '/api/v1/contacts', body: { firstName: 'Carga', lastName: `Teste ${i}`, email: `load-${run}-${i}@bench.test`, score: i % 100 } }),
    },
    { name: 'GET /deals?pipelineId&isWon=false', target: 'api', method: 'GET', next: (i) => ({ path: `/api/v1/deals?pipelineId=${s.pipelineId}&isWon=false&page=${1 + (i % 10)}` }) },
    { name: 'GET /deals/:id (contact+company expanded)', target: 'api', method: 'GET', next: (i) => ({ path: `/api/v1/deals/${pick(s.dealIds, i)}` }) },
    {
      name: 'POST /activities (3 links)',
      target: 'api',
      method: 'POST',
      next: (i) => ({
        path: '/api/v1/activities',
        body: { type: 'call', title: `Ligação ${i}`, contactIds: [pick(s.contactIds, i)], companyIds: [pick(s.companyIds, i)], dealIds: [pick(s.dealIds, i)] },
      }),
    },
  ];
}

/** CPU seconds (user + system) a process has used so far (Linux /proc; undefined elsewhere). */
function cpuSeconds(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in USER_HZ (100/s on Linux)
  } catch {
    return undefined;
  }
}

interface Result {
  name: string;
  requestsPerSec: number;
  /** Server CPU time per request (µs): independent of the load generator's own limits. */
  serverCpuMicrosPerRequest?: number;
  /** Server CPU busy share during the run (1 = one core fully used). */
  serverCpuShare?: number;
  latencyP50: number;
  latencyP99: number;
  latencyAvg: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

async function drive(url: string, sc: Scenario, key: string, duration: number, counter: { i: number }, pid?: number): Promise<Result> {
  const cpuBefore = cpuSeconds(pid);
  const startedAt = Date.now();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    requests: [
      {
        method: sc.method,
        setupRequest: (req: Record<string, unknown>) => {
          const { path: p, body } = sc.next(counter.i++);
          return { ...req, path: p, method: sc.method, body: body === undefined ? undefined : JSON.stringify(body) };
        },
      },
    ],
  });
  const cpuAfter = cpuSeconds(pid);
  const cpu = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
  const codes: Record<string, number> = {};
  for (const [k, v] of Object.entries(result.statusCodeStats ?? {})) codes[k] = (v as { count: number }).count;
  return {
    name: sc.name,
    requestsPerSec: Math.round(result.requests.average),
    serverCpuMicrosPerRequest: cpu !== undefined && result.requests.total > 0 ? Math.round((cpu / result.requests.total) * 1e6) : undefined,
    serverCpuShare: cpu !== undefined ? Number((cpu / ((Date.now() - startedAt) / 1000)).toFixed(2)) : undefined,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    latencyAvg: result.latency.average,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: codes,
  };
}

async function main() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-'));
  const counts = args.small ? { companies: 200, contacts: 10_000, deals: 2_000, activities: 5_000 } : DEFAULT_COUNTS;
  log(`bench: data dir ${dataDir}`);
  log(`bench: seeding ${counts.contacts} contacts, ${counts.deals} deals, ${counts.activities} activities (x3 links), ${counts.companies} companies…`);
  const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: '' });
  const database = createDatabase(config);
  await migrate(database);
  const seeded = await seed(database, counts, log);
  await database.close();
  log(`bench: seeded in ${seeded.seconds.toFixed(1)} s`);

  const serverEnv = { DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'warn', WORKERS: 'false', CRM_NO_DEMO: 'true' };
  const all = scenarios(seeded).filter((sc) => !args.only || args.only.split(',').some((o) => sc.name.toLowerCase().includes(o.trim().toLowerCase())));
  const results: Result[] = [];
  const profileDir = path.join(ROOT, '.bench/profiles');

  let api = await startProcess([CLI, 'serve'], serverEnv, '/healthz');
  const sample = await fetch(`${api.url}/api/v1/contacts/${seeded.contactIds[0]}`, { headers: { 'x-api-key': seeded.key } });
  if (sample.status !== 200) throw new Error(`GET /contacts/:id answered ${sample.status}: ${await sample.text()}`);
  const bodyFile = path.join(dataDir, 'ceiling-body.json');
  writeFileSync(bodyFile, await sample.text());
  const ceiling = await startProcess(['--import', 'tsx', path.join(ROOT, 'bench/ceiling.ts')], { CEILING_BODY_FILE: bodyFile }, `/api/v1/contacts/x`);

  try {
    for (const sc of all) {
      const profiling = args.profile !== undefined && sc.name.toLowerCase().includes(args.profile.toLowerCase()) && sc.target === 'api';
      if (profiling) {
        await api.stop();
        mkdirSync(profileDir, { recursive: true });
        api = await startProcess(['--cpu-prof', `--cpu-prof-dir=${profileDir}`, CLI, 'serve'], serverEnv, '/healthz');
      }
      const target = sc.target === 'ceiling' ? ceiling : api;
      const counter = { i: 0 };
      if (WARMUP > 0) await drive(target.url, sc, seeded.key, WARMUP, counter);
      const r = await drive(target.url, sc, seeded.key, DURATION, counter, target.proc.pid);
      results.push(r);
      log(`  ${r.name}: ${r.requestsPerSec} req/s, p50 ${r.latencyP50} ms, p99 ${r.latencyP99} ms, server CPU ${r.serverCpuMicrosPerRequest ?? '?'} µs/req (${r.serverCpuShare ?? '?'} cores), non-2xx ${r.non2xx}, errors ${r.errors}`);
      if (r.non2xx > 0) log(`    status codes: ${JSON.stringify(r.statusCodes)}`);
      if (profiling) {
        await api.stop(); // the profile is written at exit
        log(`    CPU profile written to ${profileDir}`);
        api = await startProcess([CLI, 'serve'], serverEnv, '/healthz');
      }
    }
  } finally {
    await api.stop();
    await ceiling.stop();
    if (!args.keep) rmSync(dataDir, { recursive: true, force: true });
  }

  const ceil = results.find((r) => r.name.startsWith('ceiling'));
  const byId = results.find((r) => r.name === 'GET /contacts/:id');
  const ratio = ceil && byId ? byId.requestsPerSec / ceil.requestsPerSec : undefined;
  // The same ratio from server CPU per request: what each server could do with a core of its own.
  const cpuRatio = ceil?.serverCpuMicrosPerRequest && byId?.serverCpuMicrosPerRequest ? ceil.serverCpuMicrosPerRequest / byId.serverCpuMicrosPerRequest : undefined;
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, loadAvgAtEnd: os.loadavg() },
    settings: { durationSeconds: DURATION, warmupSeconds: WARMUP, connections: CONNECTIONS, database: 'sqlite', counts },
    seedSeconds: seeded.seconds,
    results,
    contactByIdToCeiling: ratio,
    contactByIdToCeilingByServerCpu: cpuRatio,
  };
  writeFileSync(path.join(ROOT, 'bench/results.json'), JSON.stringify(report, null, 2) + '\n');

  const pad = (s: string, n: number) => s.padEnd(n);
  const lines = [
    `| ${pad('scenario', 46)} | ${pad('req/s', 7)} | ${pad('p50 ms', 6)} | ${pad('p99 ms', 6)} | server µs/req | non-2xx | timeouts |`,
    `|${'-'.repeat(48)}|${'-'.repeat(9)}|${'-'.repeat(8)}|${'-'.repeat(8)}|---------------|---------|----------|`,
    ...results.map(
      (r) =>
        `| ${pad(r.name, 46)} | ${pad(String(r.requestsPerSec), 7)} | ${pad(String(r.latencyP50), 6)} | ${pad(String(r.latencyP99), 6)} | ${pad(String(r.serverCpuMicrosPerRequest ?? '?'), 13)} | ${pad(String(r.non2xx + r.errors - r.timeouts), 7)} | ${pad(String(r.timeouts), 8)} |`,
    ),
  ];
  process.stdout.write(lines.join('\n') + '\n');
  if (ratio !== undefined) process.stdout.write(`\nGET /contacts/:id = ${(ratio * 100).toFixed(1)}% of the ceiling's req/s (target ≥ 50%)\n`);
  if (cpuRatio !== undefined) process.stdout.write(`GET /contacts/:id = ${(cpuRatio * 100).toFixed(1)}% of the ceiling by server CPU per request\n`);
  process.stdout.write(`seeding: ${seeded.seconds.toFixed(1)} s; report: bench/results.json\n`);
  // Wrong answers (non-2xx) or connection errors fail the run; timeouts (a request queued behind slow ones
  // for more than 10 s) are a measurement of slowness and are reported in the table instead.
  if (results.some((r) => r.non2xx > 0 || r.errors - r.timeouts > 0)) process.exitCode = 1;
}

await main();
