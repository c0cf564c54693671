// `npm run bench`: seeds a large tenant (SQLite in a temporary DATA_DIR, or PostgreSQL when DATABASE_URL is
// set), starts the real server (`crm serve`) and a bare Fastify "ceiling" server (bench/ceiling.ts: the
// same JSON for a contact and for a page of 50, with no work behind it) as separate processes, and drives
// each scenario (bench/scenarios.ts) from a load generator in a process of its own (bench/loadgen.ts:
// autocannon): a warm-up, then --duration seconds at --connections, then (tails) a few seconds at one
// connection. Prints a table (req/s, p50/p99/max latency and p99/p50, server CPU µs per request and RSS
// read from /proc — robust when the load generator, not the server, is the bottleneck), the ratios to the
// ceilings and the tails at one connection, with their targets; writes bench/results.json and a
// ready-to-paste bench/results.md.
//
// Server CPU and RSS are those of the server's process *tree* (bench/proc.ts): on SQLite the read pool's
// connections are child processes, killed and replaced at QUERY_TIMEOUT_MS, and their CPU counts. The load
// generator's CPU is measured the same way (`machine.benchCores`; marked "gen-bound" at ≥ 0.9 of a core per
// generator: its req/s then measure the generator, the CPU per request still the server). On a PostgreSQL of this
// machine its backends' CPU per request is reported beside the server's (bench/pg-cpu.ts). The report also gives the
// bytes per contact of each data set (bench/footprint.ts) beside the server's memory after the bench.
//
// Scenarios: the list of bench/scenarios.ts (the minimal tenant's, seeded straight into the tables, and the realistic
// tenant's, "realistic: …", created through the API with a phone, an owner and 8 custom properties each; each set
// with its ceilings), plus `noisy` (bench/noisy.ts: tenant A's point reads and
// pages alone, then while tenant B runs the most expensive search the API accepts from 8 clients; its
// load runs in this process).
//
// Options: --duration <s> (10)  --connections <n> (50; the search scenario uses at most 4)  --warmup <s> (2)
//          --only <name,name> (substrings of scenario names, separated by a comma with no space after it: names
//          hold ", "; `noisy` selects the noisy-neighbour scenario)
//          --no-tails (skip the runs at one connection, min(5, --duration) s each; on by default, --tails)
//          --rounds <n> (3; 0 skips them: right after the last scenario measured against a ceiling, before the
//          writes, n rounds in which each ceiling and the scenarios measured against it run back to back,
//          min(5, --duration) s each, in alternating order; their medians are reported, see `pairedRatios`)
//          --small (a 10x smaller data set, for a quick check)  --large (1,000,000 contacts)
//          --profile <scenario> (CPU profile of the server, or of the ceiling's process, during the scenarios whose
//          names hold it, written to .bench/profiles)
//          --perf <name,name> (names as --only's: Linux perf on the server's process tree, or the ceiling's, during
//          the measured phase at the scenario's connections; prints where its CPU went: the kernel's socket writes
//          and reads, SQLite's page reads and own code, V8's GC, JavaScript and the rest of Node; bench/perf.ts,
//          recordings in .bench/perf)
//          --realistic-contacts <n> (10,000: contacts of the realistic tenant, created through the API when a scenario
//          whose name holds "realistic" runs; bench/realistic.ts)
//          --loadgens <n> (1: load generator processes per scenario, its connections split between them; for a machine
//          where one generator saturates a core before the server does: on 2 cores a second one only takes the server's)
//          --keep (keep the data dir, with the bench's key: bench/side-by-side.ts compares builds on it)
//          --heap-snapshot (a heap snapshot of the server after its memory was read, once every scenario has run
//          through it, written to .bench/heap; node bench/heap-summary.ts <file> sums it by kind)  --help
// Environment: DATABASE_URL (postgres://…/<name containing "bench">: its schema `public` is dropped and
//          recreated; the database is created when missing), REDIS_URL (with DATABASE_URL; rate limits),
//          QUERY_TIMEOUT_MS (passed to the server; default 5000), BENCH_SERVER_LOG=1 (copy the servers' stdout and
//          stderr), BENCH_SERVER_NODE_ARGS (Node options of the server only, e.g. "--trace-gc --trace-gc-nvp"),
//          SQLITE_MMAP_MB (the server's, as any variable of its configuration; the report's header names it).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createDatabase, migrate } from '../src/db/index.js';
import { drive, type Result } from './drive.js';
import { runNoisy, type NoisyReport } from './noisy.js';
import { cpuIdle, processTree, treeMemory, treeSum } from './proc.js';
import { perfAvailable, perfBreakdown, perfTable, perfTop, startPerf } from './perf.js';
import { deepCursorDepth, scenarios, type Cursors, type LoadPhase, type Scenario, type ScenarioData } from './scenarios.js';
import { CLI, ROOT, SERVE_NODE_ARGS, serverHeapMiB, startProcess, type ServerHeap } from './serve.js';
import { DEFAULT_COUNTS, LARGE_COUNTS, SMALL_COUNTS, seed, seedNoisyTenant, seedRealisticTenant, type NoisySeeded } from './seed.js';
import { contactsBytes, pgRowBytes, vacuumContacts } from './footprint.js';
import { REALISTIC_CONTACTS, seedRealisticContacts } from './realistic.js';

const { values: args } = parseArgs({
  allowNegative: true,
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '2' },
    only: { type: 'string' },
    tails: { type: 'boolean', default: true },
    rounds: { type: 'string', default: '3' },
    small: { type: 'boolean', default: false },
    large: { type: 'boolean', default: false },
    profile: { type: 'string' },
    perf: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'realistic-contacts': { type: 'string', default: String(REALISTIC_CONTACTS) },
    loadgens: { type: 'string', default: '1' },
    'heap-snapshot': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  const header = readFileSync(new URL(import.meta.url), 'utf8').split('\n');
  process.stdout.write(
    header
      .slice(
        0,
        header.findIndex((l) => !l.startsWith('//')),
      )
      .map((l) => l.replace(/^\/\/ ?/, ''))
      .join('\n') + '\n',
  );
  process.exit(0);
}
if (args.small && args.large) throw new Error('--small and --large exclude each other');
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WARMUP = Number(args.warmup);
/** Seconds of each scenario's run at one connection (tails). */
const TAIL_DURATION = Math.min(5, DURATION);
const ROUNDS = Number(args.rounds);
const REALISTIC_COUNT = Number(args['realistic-contacts']);
const LOADGENS = Math.max(1, Number(args.loadgens));
/** A load generator at this share of a core or more is the bottleneck of its scenario. */
const GENERATOR_BOUND = 0.9;
/** Seconds of each scenario's run in a paired round, and of its warm-up. */
const ROUND_DURATION = Math.min(5, DURATION);
const ROUND_WARMUP = Math.min(1, WARMUP);
/**
 * Node options of the server process: those of `npm start` (SERVE_NODE_ARGS), then BENCH_SERVER_NODE_ARGS
 * (e.g. `--trace-gc`; NODE_OPTIONS refuses some), whose later options win.
 */
const heapDir = path.join(ROOT, '.bench/heap');
/** --perf: V8 writes /tmp/perf-<pid>.map, so that perf names the JavaScript functions it samples (server and ceiling). */
const perfNodeArgs = args.perf !== undefined ? ['--perf-basic-prof'] : [];
const serverNodeArgs = [
  ...SERVE_NODE_ARGS,
  ...(args['heap-snapshot'] ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`] : []),
  ...perfNodeArgs,
  ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
];
const log = (m: string) => process.stderr.write(m + '\n');
/** Whether `name` holds one of the list's substrings (--only, --perf): separated by a comma with no space after it, since names hold ", ". */
const namesMatch = (list: string, name: string) => list.split(/,(?! )/).some((o) => name.toLowerCase().includes(o.trim().toLowerCase()));

/** Walks GET /contacts by cursor, 100 at a time, and keeps the cursors after 100 and after `depth`. */
async function walkCursors(url: string, key: string, depth: number): Promise<Omit<Cursors, 'deepDepth'>> {
  const t0 = Date.now();
  const out = { shallow: '', deep: '' };
  let cursor: string | null = null;
  for (let seen = 0; ;) {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const r = await fetch(`${url}/api/v1/contacts?pageSize=100${q}`, { headers: { 'x-api-key': key } });
    if (r.status !== 200) throw new Error(`cursor walk answered ${r.status}: ${await r.text()}`);
    const page = (await r.json()) as { data: unknown[]; pagination: { nextCursor: string | null } };
    seen += page.data.length;
    cursor = page.pagination.nextCursor;
    if (!cursor) break;
    if (seen === 100) out.shallow = cursor;
    if (seen >= depth) {
      out.deep = cursor;
      break;
    }
  }
  log(`bench: walked ${depth} contacts by cursor in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return out;
}

/**
 * Where the tree's memory is, process by process (the server first, then its read processes): VmRSS split
 * into anonymous memory (heaps, SQLite's page cache) and file pages (the node binary and libraries, shared by
 * every process of the tree but counted by VmRSS in each), and Pss, which counts a shared page once overall.
 */
function memoryLine(procs: ReturnType<typeof treeMemory>, heap: ServerHeap | undefined): string {
  if (procs.length === 0) return '';
  const each = procs.map((p, i) => `${i === 0 ? 'server' : 'reader'} ${p.rss} (anon ${p.anon}, file ${p.file}, pss ${p.pss})`).join('; ');
  const v8 = heap ? ` The server's V8 heap: ${heap.heapUsed} used of ${heap.heapTotal}; outside it (Buffers): ${heap.external}.` : '';
  return `Memory by process, MiB: ${each}. Tree: VmRSS ${treeSum(procs, 'rss')}, Pss ${treeSum(procs, 'pss')} (shared pages once).${v8}`;
}

/** Signals the server (started with --heapsnapshot-signal) to write a heap snapshot, and waits until it is written. */
async function heapSnapshot(pid: number): Promise<string> {
  mkdirSync(heapDir, { recursive: true });
  const before = new Set(readdirSync(heapDir));
  process.kill(pid, 'SIGUSR2');
  for (let last = -1; ;) {
    await new Promise((r) => setTimeout(r, 1000));
    const file = readdirSync(heapDir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (!file) continue;
    const size = statSync(path.join(heapDir, file)).size;
    if (size > 0 && size === last) return path.join(heapDir, file);
    last = size;
  }
}

const p99OverP50 = (r: Result) => (r.latencyP50 > 0 ? Math.round((r.latencyP99 / r.latencyP50) * 10) / 10 : undefined);

/** A ratio with its target, from req/s and from server CPU per request (what a server with a core of its own would do). */
interface Ratio {
  name: string;
  target: string;
  byRequestsPerSec?: { value: number; met: boolean };
  byServerCpu?: { value: number; met: boolean };
}

/** A scenario's share of a base scenario's (a ceiling or the floor): req/s over the base's, and the base's CPU per request over its. */
interface Share {
  name: string;
  /** Name prefixes of the scenario and of its base. */
  scenario: string;
  base: string;
  /** The target (0: none, reported in %). */
  min: number;
}

const SHARES: Share[] = [
  { name: 'GET /contacts/:id ÷ ceiling (contact by id)', scenario: 'GET /contacts/:id', base: 'ceiling: bare Fastify, contact by id', min: 0.6 },
  { name: 'GET /contacts (page of 50) ÷ ceiling (page of 50)', scenario: 'GET /contacts (page of 50)', base: 'ceiling: bare Fastify, page of 50', min: 0.5 },
  { name: 'GET /contacts?ownerId= ÷ ceiling (page of 50)', scenario: 'GET /contacts?ownerId=', base: 'ceiling: bare Fastify, page of 50', min: 0.4 },
  { name: 'POST /contacts/search ÷ ceiling (page of 50)', scenario: 'POST /contacts/search', base: 'ceiling: bare Fastify, page of 50', min: 0.4 },
  // The realistic tenant's (bench/realistic.ts) against the ceilings answering its very JSON.
  {
    name: 'realistic: GET /contacts/:id ÷ ceiling (realistic contact)',
    scenario: 'realistic: GET /contacts/:id',
    base: 'ceiling: bare Fastify, realistic contact by id',
    min: 0.6,
  },
  {
    name: 'realistic: GET /contacts?page=N ÷ ceiling (realistic page of 50)',
    scenario: 'realistic: GET /contacts?page=N',
    base: 'ceiling: bare Fastify, realistic page of 50',
    min: 0.5,
  },
  {
    name: 'realistic: GET /contacts?ownerId= ÷ ceiling (realistic page of 50)',
    scenario: 'realistic: GET /contacts?ownerId=',
    base: 'ceiling: bare Fastify, realistic page of 50',
    min: 0.4,
  },
  {
    name: 'realistic: POST /contacts/search ÷ ceiling (realistic page of 50)',
    scenario: 'realistic: POST /contacts/search',
    base: 'ceiling: bare Fastify, realistic page of 50',
    min: 0.4,
  },
  // No target: where the database alone leaves the ceiling (floor ÷ ceiling), and how far the service is
  // from answering from this database at the least (service ÷ floor). `min` 0: reported, never "MISSED".
  { name: 'floor ÷ ceiling (contact by id)', scenario: 'floor: bare Fastify + SQLite, contact by id', base: 'ceiling: bare Fastify, contact by id', min: 0 },
  { name: 'floor ÷ ceiling (page of 50)', scenario: 'floor: bare Fastify + SQLite, page of 50', base: 'ceiling: bare Fastify, page of 50', min: 0 },
  { name: 'GET /contacts/:id ÷ floor (contact by id)', scenario: 'GET /contacts/:id', base: 'floor: bare Fastify + SQLite, contact by id', min: 0 },
  { name: 'GET /contacts (page of 50) ÷ floor (page of 50)', scenario: 'GET /contacts (page of 50)', base: 'floor: bare Fastify + SQLite, page of 50', min: 0 },
];

/** The shares with a target: the ones the paired rounds measure. */
const TARGETED = SHARES.filter((x) => x.min > 0);

/** A scenario's share of its base: by req/s, and by server CPU per request when both have it. */
function shareOf(r: Result, base: Result): { rps: number; cpu?: number } {
  const cpu = r.serverCpuMicrosPerRequest && base.serverCpuMicrosPerRequest ? base.serverCpuMicrosPerRequest / r.serverCpuMicrosPerRequest : undefined;
  return { rps: r.requestsPerSec / base.requestsPerSec, cpu };
}

/**
 * The shares with a target, from paired rounds: in each round every ceiling runs right before (or, every other
 * round, right after) the scenarios measured against it, so both meet the machine in the same state. On a VM
 * whose speed drifts (the one of 2026-11-28 moved a scenario's server CPU per request by ±25 % between runs
 * minutes apart), a ratio of two runs minutes apart mixes the drift into the ratio; a round's pair does not. The
 * verdict is the median of the rounds' ratios; their range is reported.
 */
interface PairedRatio {
  name: string;
  target: string;
  rounds: { byRequestsPerSec: number; byServerCpu?: number }[];
  byRequestsPerSec: { value: number; met: boolean; min: number; max: number };
  byServerCpu?: { value: number; met: boolean; min: number; max: number };
}

const median = (xs: number[]) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};

function pairedRatios(rounds: Result[][]): PairedRatio[] {
  const out: PairedRatio[] = [];
  for (const sh of TARGETED) {
    const per = rounds
      .map((round) => [round.find((r) => r.name.startsWith(sh.scenario)), round.find((r) => r.name.startsWith(sh.base))] as const)
      .filter((p): p is readonly [Result, Result] => p[0] !== undefined && p[1] !== undefined)
      .map(([r, c]) => {
        const { rps, cpu } = shareOf(r, c);
        return { byRequestsPerSec: rps, byServerCpu: cpu };
      });
    if (per.length === 0) continue;
    const verdict = (xs: number[]) => ({ value: median(xs), met: median(xs) >= sh.min, min: Math.min(...xs), max: Math.max(...xs) });
    const cpu = per.map((p) => p.byServerCpu).filter((x): x is number => x !== undefined);
    out.push({
      name: sh.name,
      target: `≥ ${sh.min * 100} %`,
      rounds: per,
      byRequestsPerSec: verdict(per.map((p) => p.byRequestsPerSec)),
      byServerCpu: cpu.length === per.length ? verdict(cpu) : undefined,
    });
  }
  return out;
}

function pairedTable(ps: PairedRatio[]): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const cell = (v: PairedRatio['byRequestsPerSec'] | undefined) => (v ? `${pct(v.value)} ${v.met ? 'met' : 'MISSED'} (${pct(v.min)}–${pct(v.max)})` : '?');
  return table(
    [`ratio, paired rounds (median, range)`, 'target', 'by req/s', 'by server CPU per request', 'rounds (req/s)'],
    ps.map((p) => [p.name, p.target, cell(p.byRequestsPerSec), cell(p.byServerCpu), p.rounds.map((r) => pct(r.byRequestsPerSec)).join(', ')]),
  );
}

/** The ratios of issue "Close to the metal" (part 1) over the scenarios that ran. */
function ratios(results: Result[]): Ratio[] {
  const find = (prefix: string) => results.find((r) => r.name.startsWith(prefix));
  const out: Ratio[] = [];
  // Share of the ceiling: req/s over the ceiling's, and the ceiling's CPU per request over this one's.
  for (const sh of SHARES) {
    const r = find(sh.scenario);
    const c = find(sh.base);
    if (!r || !c) continue;
    const { rps, cpu } = shareOf(r, c);
    out.push({
      name: sh.name,
      target: sh.min > 0 ? `≥ ${sh.min * 100} %` : 'no target, in %',
      byRequestsPerSec: { value: rps, met: rps >= sh.min },
      byServerCpu: cpu === undefined ? undefined : { value: cpu, met: cpu >= sh.min },
    });
  }
  const create = find('POST /contacts (unique');
  if (create) {
    // By CPU: the creates per second one server core would answer.
    const perCore = create.serverCpuMicrosPerRequest ? 1e6 / create.serverCpuMicrosPerRequest : undefined;
    out.push({
      name: 'POST /contacts (req/s)',
      target: '≥ 3,000 req/s',
      byRequestsPerSec: { value: create.requestsPerSec, met: create.requestsPerSec >= 3_000 },
      byServerCpu: perCore === undefined ? undefined : { value: perCore, met: perCore >= 3_000 },
    });
  }
  const realisticCreate = find('realistic: POST /contacts (realistic body');
  if (realisticCreate) {
    const perCore = realisticCreate.serverCpuMicrosPerRequest ? 1e6 / realisticCreate.serverCpuMicrosPerRequest : undefined;
    out.push({
      name: 'realistic: POST /contacts, realistic body (req/s)',
      target: '≥ 3,000 req/s',
      byRequestsPerSec: { value: realisticCreate.requestsPerSec, met: realisticCreate.requestsPerSec >= 3_000 },
      byServerCpu: perCore === undefined ? undefined : { value: perCore, met: perCore >= 3_000 },
    });
    const q = p99OverP50(realisticCreate);
    if (q !== undefined) {
      out.push({
        name: `realistic: POST /contacts, realistic body, p99 ÷ p50 at ${realisticCreate.connections} connections`,
        target: '≤ 3×',
        byRequestsPerSec: { value: q, met: q <= 3 },
      });
    }
  }
  const shallow = find('GET /contacts cursor page at depth 100');
  const deep = results.find((r) => r.name.startsWith('GET /contacts cursor page at depth') && r !== shallow);
  if (shallow && deep) {
    // How much dearer the deep page is: time per request (req/s inverted) and CPU per request.
    const rps = shallow.requestsPerSec / deep.requestsPerSec;
    const cpu =
      shallow.serverCpuMicrosPerRequest && deep.serverCpuMicrosPerRequest ? deep.serverCpuMicrosPerRequest / shallow.serverCpuMicrosPerRequest : undefined;
    out.push({
      name: `${deep.name.replace('GET /contacts cursor page at ', 'cursor page at ')} ÷ depth 100 (cost)`,
      target: '≤ 1.5×',
      byRequestsPerSec: { value: rps, met: rps <= 1.5 },
      byServerCpu: cpu === undefined ? undefined : { value: cpu, met: cpu <= 1.5 },
    });
  }
  return out;
}

function formatRatio(r: Ratio, v: { value: number; met: boolean } | undefined): string {
  if (!v) return '?';
  const n = r.target.endsWith('%')
    ? `${(v.value * 100).toFixed(1)} %`
    : r.target.endsWith('req/s')
      ? `${Math.round(v.value).toLocaleString('en')} req/s`
      : `${v.value.toFixed(2)}×`;
  return r.target.startsWith('no target') ? n : `${n} ${v.met ? 'met' : 'MISSED'}`;
}

/** A markdown table: a header row, then rows of cells. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const num = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '?' : String(x));

/** The load generators' cores (summed), "×n" for n processes, and "gen-bound" when the busiest is near a full core. */
function loadgenCell(r: Result): string {
  const cores = num(r.machine?.benchCores);
  const n = r.loadgen && r.loadgen.processes > 1 ? ` (×${r.loadgen.processes})` : '';
  return `${cores}${n}${r.loadgen && r.loadgen.maxCores >= GENERATOR_BOUND ? ' gen-bound' : ''}`;
}

function resultsTable(results: Result[]): string {
  // PostgreSQL's CPU per request beside the server's, where it was measured (a PostgreSQL of this machine).
  const pg = results.some((r) => r.dbCpuMicrosPerRequest !== undefined);
  return table(
    [
      'scenario',
      'conns',
      'req/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'p99/p50',
      'non-2xx',
      'timeouts',
      'server µs/req',
      ...(pg ? ['PG µs/req (its db; cluster)'] : []),
      'server cores',
      'RSS MiB',
      'loadgen cores',
      'machine busy',
    ],
    results.map((r) => [
      r.name,
      String(r.connections),
      String(r.requestsPerSec),
      String(r.latencyP50),
      String(r.latencyP99),
      String(r.latencyMax),
      num(p99OverP50(r)),
      String(r.non2xx + r.errors - r.timeouts),
      String(r.timeouts),
      num(r.serverCpuMicrosPerRequest),
      ...(pg ? [`${num(r.dbCpuMicrosPerRequest)}; ${num(r.dbClusterCpuMicrosPerRequest)}`] : []),
      num(r.serverCpuShare),
      num(r.rssMiB),
      loadgenCell(r),
      r.machine ? `${r.machine.busyCores}/${r.machine.cores}` : '?',
    ]),
  );
}

function ratiosTable(rs: Ratio[]): string {
  return table(
    ['ratio', 'target', 'by req/s', 'by server CPU per request'],
    rs.map((r) => [r.name, r.target, formatRatio(r, r.byRequestsPerSec), formatRatio(r, r.byServerCpu)]),
  );
}

/** Each realistic scenario beside its minimal counterpart (name prefixes): what the probe's data costs over the bench's. */
const COUNTERPARTS: [string, string][] = [
  ['ceiling: bare Fastify, contact by id', 'ceiling: bare Fastify, realistic contact by id'],
  ['ceiling: bare Fastify, page of 50', 'ceiling: bare Fastify, realistic page of 50'],
  ['GET /contacts/:id', 'realistic: GET /contacts/:id'],
  ['GET /contacts (page of 50)', 'realistic: GET /contacts?page=N'],
  ['GET /contacts?ownerId=', 'realistic: GET /contacts?ownerId='],
  ['POST /contacts/search', 'realistic: POST /contacts/search'],
  ['POST /contacts (unique', 'realistic: POST /contacts (realistic body'],
  ['POST /contacts (unique', 'realistic: POST /contacts (minimal body)'],
];

function sideBySideTable(results: Result[]): string | undefined {
  const find = (prefix: string) => results.find((r) => r.name.startsWith(prefix));
  const pg = results.some((r) => r.dbCpuMicrosPerRequest !== undefined);
  const rows = COUNTERPARTS.map(([m, r]) => [find(m), find(r)] as const)
    .filter((p): p is readonly [Result, Result] => p[0] !== undefined && p[1] !== undefined)
    .map(([m, r]) => {
      const cost =
        m.serverCpuMicrosPerRequest && r.serverCpuMicrosPerRequest ? `${(r.serverCpuMicrosPerRequest / m.serverCpuMicrosPerRequest).toFixed(2)}×` : '?';
      return [
        r.name,
        m.name,
        `${r.requestsPerSec} / ${m.requestsPerSec}`,
        `${(r.requestsPerSec / m.requestsPerSec).toFixed(2)}×`,
        `${num(r.serverCpuMicrosPerRequest)} / ${num(m.serverCpuMicrosPerRequest)}`,
        cost,
        ...(pg ? [`${num(r.dbCpuMicrosPerRequest)} / ${num(m.dbCpuMicrosPerRequest)}`] : []),
      ];
    });
  if (rows.length === 0) return undefined;
  return table(
    [
      'realistic scenario',
      'minimal counterpart',
      'req/s (realistic / minimal)',
      'req/s ratio',
      'server µs/req (realistic / minimal)',
      'server CPU cost ratio',
      ...(pg ? ['PG µs/req (realistic / minimal)'] : []),
    ],
    rows,
  );
}

function tailsTable(tails: Result[]): string {
  return table(
    ['scenario (1 connection)', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'p99/p50 (target ≤ 3)', 'server µs/req'],
    tails.map((r) => {
      const q = p99OverP50(r);
      return [
        r.name,
        String(r.requestsPerSec),
        String(r.latencyP50),
        String(r.latencyP99),
        String(r.latencyMax),
        q === undefined ? '?' : `${q} ${q <= 3 ? 'met' : 'MISSED'}`,
        num(r.serverCpuMicrosPerRequest),
      ];
    }),
  );
}

/** Databases the bench must never reset (other engineers' test databases). */
const PROTECTED_DATABASES = new Set(['test', 'test_holes', 'test_filters', 'postgres', 'template0', 'template1']);

/**
 * PostgreSQL: a fresh schema in a dedicated database. The database's name must contain "bench" (so that a
 * DATABASE_URL meant for tests is never wiped); it is created when missing, then `public` is dropped and
 * recreated.
 */
async function resetPostgres(url: string): Promise<void> {
  const pg = (await import('pg')).default;
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name || PROTECTED_DATABASES.has(name) || !name.includes('bench')) {
    throw new Error(`DATABASE_URL names database "${name}": the bench drops its schema, so use a dedicated database whose name contains "bench"`);
  }
  let client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err;
    const admin = new URL(url);
    admin.pathname = '/postgres';
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    await c.query(`create database "${name.replace(/"/g, '')}"`);
    await c.end();
    log(`bench: created database ${name}`);
    // A pg client connects once: the failed one cannot be reused.
    client = new pg.Client({ connectionString: url });
    await client.connect();
  }
  await client.query('drop schema if exists public cascade');
  await client.query('create schema public');
  await client.end();
}

async function main() {
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const redisUrl = databaseUrl ? process.env.REDIS_URL || undefined : undefined;
  const queryTimeoutMs = loadConfig({ QUERY_TIMEOUT_MS: process.env.QUERY_TIMEOUT_MS }).queryTimeoutMs;
  const loadAvgAtStart = os.loadavg();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-'));
  const counts = args.small ? SMALL_COUNTS : args.large ? LARGE_COUNTS : DEFAULT_COUNTS;
  // Names hold ", " ("floor: bare Fastify + SQLite, contact by id"): only a comma with no space after it separates.
  const selected = (name: string) => !args.only || namesMatch(args.only, name);
  const wantNoisy = selected('noisy');
  if (databaseUrl) {
    await resetPostgres(databaseUrl);
    log(
      `bench: PostgreSQL ${new URL(databaseUrl).host}${new URL(databaseUrl).pathname} (schema public recreated), Redis ${redisUrl ?? 'none (in-memory rate limits)'}`,
    );
  } else log(`bench: SQLite, data dir ${dataDir}`);
  log(`bench: seeding ${counts.contacts} contacts, ${counts.deals} deals, ${counts.activities} activities (x3 links), ${counts.companies} companies…`);
  const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? '' });
  const database = createDatabase(config);
  await migrate(database);
  // Bulk inserts on SQLite go through a connection of their own to the file createDatabase opened.
  const sqliteFile = databaseUrl ? undefined : path.join(dataDir, 'crm.db');
  const seeded = await seed(database, counts, log, sqliteFile);
  log(`bench: seeded in ${seeded.seconds.toFixed(1)} s`);
  // The realistic tenant (bench/realistic.ts) when one of its scenarios runs: its users and properties now, its
  // contacts through the API once the server runs.
  const wantRealistic =
    REALISTIC_COUNT > 0 &&
    scenarios({ users: [], pipelineId: '', contactIds: [], companyIds: [], dealIds: [], cursors: { shallow: '', deep: '', deepDepth: 0 } }).some(
      (sc) => sc.name.includes('realistic') && selected(sc.name),
    );
  const realisticTenant = wantRealistic ? await seedRealisticTenant(database) : undefined;
  // The planner's statistics as the server keeps them (it measures them again once listening, in the
  // background: at 1,000,000 contacts that takes seconds that would overlap the first scenario).
  const statsStart = performance.now();
  database.readPool?.warm();
  await database.optimize((index, err) => log(`bench: statistics of ${index} not measured: ${String(err)}`));
  log(`bench: planner statistics in ${((performance.now() - statsStart) / 1000).toFixed(1)} s`);
  let noisy: NoisySeeded | undefined;
  if (wantNoisy) {
    log(`bench: seeding tenant B of the noisy-neighbour scenario (${counts.contacts} contacts, tags and a multi_select property)…`);
    noisy = await seedNoisyTenant(database, counts.contacts, log, sqliteFile);
    log(`bench: tenant B seeded in ${noisy.seconds.toFixed(1)} s (${noisy.tagLinks} tag links)`);
  }
  if (databaseUrl) {
    // PostgreSQL vacuums and analyzes freshly loaded tables by itself, a while later: the first scenarios then
    // shared the two cores with autovacuum (GET /contacts/:id at 1,623 req/s with the machine 1.98 of 2 busy,
    // ~6,000 otherwise). Done here, every scenario meets a settled database, as a running one is.
    const vacuumStart = performance.now();
    await sql`vacuum (analyze)`.execute(database.db);
    log(`bench: vacuum (analyze) in ${((performance.now() - vacuumStart) / 1000).toFixed(1)} s`);
  }
  await database.close();
  /** Bytes of `contacts` and its indexes (bench/footprint.ts), after each data set: its bytes per contact from the difference. */
  const where = { sqliteFile, databaseUrl };
  const bytesAfterSeed = await contactsBytes(where);
  /** rowBytes: PostgreSQL's average heap row of the set's tenant (footprint.ts pgRowBytes). */
  const footprint: { set: string; contacts: number; bytes: number; bytesPerContact: number; rowBytes?: number }[] = [];
  // The minimal tenant's table (with tenant B's contacts when the noisy scenario seeded them, as many).
  const minimalRows = counts.contacts * (noisy ? 2 : 1);
  footprint.push({
    set: noisy ? 'minimal + tenant B (seeded into the tables)' : 'minimal (seeded into the tables)',
    contacts: minimalRows,
    bytes: bytesAfterSeed,
    bytesPerContact: Math.round(bytesAfterSeed / minimalRows),
    rowBytes: databaseUrl ? await pgRowBytes(databaseUrl, seeded.tenantId) : undefined,
  });

  const serverEnv: Record<string, string> = {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl ?? '',
    REDIS_URL: redisUrl ?? '',
    LOG_LEVEL: 'warn',
    WORKERS: 'false',
    CRM_NO_DEMO: 'true',
    QUERY_TIMEOUT_MS: String(queryTimeoutMs),
  };
  if (databaseUrl && !process.env.CRM_SECRET_KEY) serverEnv.CRM_SECRET_KEY = randomBytes(32).toString('hex');
  const pgDatabase = databaseUrl ? decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) : undefined;
  const driveOptions = { loadgens: LOADGENS, pgDatabase };
  const data: ScenarioData = {
    users: seeded.users,
    pipelineId: seeded.pipelineId,
    contactIds: seeded.contactIds,
    companyIds: seeded.companyIds,
    dealIds: seeded.dealIds,
    cursors: { shallow: '', deep: '', deepDepth: deepCursorDepth(counts.contacts) },
  };
  // Without the realistic tenant (--realistic-contacts 0), neither its scenarios nor their ceilings.
  const all = scenarios(data).filter((sc) => selected(sc.name) && !(sc.sqliteOnly && !sqliteFile) && (realisticTenant || !sc.name.includes('realistic')));
  const results: Result[] = [];
  const tails: Result[] = [];
  /** The paired rounds' results (pairedRatios), round by round. */
  const rounds: Result[][] = [];
  const profileDir = path.join(ROOT, '.bench/profiles');
  const perfDir = path.join(ROOT, '.bench/perf');
  const perfing = args.perf !== undefined && perfAvailable();
  if (args.perf !== undefined && !perfing) log('bench: --perf needs Linux perf (Debian: linux-perf) on PATH; running without it');
  /** --perf: each recorded scenario's breakdown, printed with the report. */
  const perfReports: string[] = [];
  let noisyReport: NoisyReport | undefined;
  let rssMiBAfterAll: number | undefined;
  let pssMiBAfterAll: number | undefined;
  let memoryAfterAll: ReturnType<typeof treeMemory> = [];
  let heapAfterAll: ServerHeap | undefined;

  let api = await startProcess([...serverNodeArgs, CLI, 'serve'], serverEnv, '/healthz');
  let realisticSeconds: number | undefined;
  if (realisticTenant) {
    log(`bench: creating ${REALISTIC_COUNT.toLocaleString('en')} realistic contacts through POST /contacts/batch/create…`);
    const { contactIds, seconds } = await seedRealisticContacts(api.url, realisticTenant.key, realisticTenant, REALISTIC_COUNT, log);
    realisticSeconds = seconds;
    data.realistic = { users: realisticTenant.users, properties: realisticTenant.properties, contactIds };
    if (databaseUrl) await vacuumContacts(databaseUrl);
    const bytes = await contactsBytes(where);
    footprint.push({
      set: 'realistic (created through the API)',
      contacts: REALISTIC_COUNT,
      bytes: bytes - bytesAfterSeed,
      bytesPerContact: Math.round((bytes - bytesAfterSeed) / REALISTIC_COUNT),
      rowBytes: databaseUrl ? await pgRowBytes(databaseUrl, realisticTenant.tenantId) : undefined,
    });
    // Per row overall too: a difference is what the set added to the table; on PostgreSQL the realistic rows filled
    // pages the bulk-loaded minimal set had left partly empty (footprint.ts pgRowBytes).
    footprint.push({ set: 'all', contacts: minimalRows + REALISTIC_COUNT, bytes, bytesPerContact: Math.round(bytes / (minimalRows + REALISTIC_COUNT)) });
    log(`bench: realistic contacts created in ${seconds.toFixed(1)} s (${Math.round(REALISTIC_COUNT / seconds)}/s)`);
  }
  log(`bench: bytes per contact (contacts + its indexes): ${footprint.map((f) => `${f.set} ${f.bytesPerContact}`).join('; ')}`);
  /** The key of a scenario's tenant. */
  const keyOf = (sc: Scenario) => (sc.tenant === 'realistic' ? realisticTenant!.key : seeded.key);
  // The ceiling answers with the very JSON of the real server: a contact, and the first page of 50 (of each tenant).
  const ceilingEnv: Record<string, string> = {};
  const samples: [string, string, string][] = [
    ['CEILING_BODY_FILE', `/api/v1/contacts/${seeded.contactIds[0]}`, seeded.key],
    ['CEILING_LIST_FILE', '/api/v1/contacts?pageSize=50', seeded.key],
  ];
  if (realisticTenant && data.realistic) {
    samples.push(
      ['CEILING_REALISTIC_BODY_FILE', `/api/v1/contacts/${data.realistic.contactIds[0]}`, realisticTenant.key],
      ['CEILING_REALISTIC_LIST_FILE', '/api/v1/contacts?page=1&pageSize=50&sortKey=createdAt', realisticTenant.key],
    );
  }
  for (const [env, p, key] of samples) {
    const sample = await fetch(api.url + p, { headers: { 'x-api-key': key } });
    if (sample.status !== 200) throw new Error(`GET ${p} answered ${sample.status}: ${await sample.text()}`);
    ceilingEnv[env] = path.join(dataDir, `${env.toLowerCase()}.json`);
    writeFileSync(ceilingEnv[env], await sample.text());
  }
  // SQLite: the ceiling also answers the floor's routes from the database file (bench/ceiling.ts).
  if (sqliteFile) Object.assign(ceilingEnv, { CEILING_DB_FILE: sqliteFile, CEILING_TENANT_ID: seeded.tenantId });
  const startCeiling = (nodeArgs: string[] = []) =>
    startProcess([...perfNodeArgs, ...nodeArgs, '--import', 'tsx', path.join(ROOT, 'bench/ceiling.ts')], ceilingEnv, `/api/v1/contacts/x`);
  let ceiling = await startCeiling();
  if (all.some((sc) => sc.name.includes('cursor page'))) Object.assign(data.cursors, await walkCursors(api.url, seeded.key, data.cursors.deepDepth));
  // What each load generator reads (ids, cursors): written once, after the cursor walk.
  const dataFile = path.join(dataDir, 'scenario-data.json');
  writeFileSync(dataFile, JSON.stringify(data));
  // With --keep, bench/side-by-side.ts drives the kept database with the same key (the scenarios' cursors are bound to it).
  if (args.keep) writeFileSync(path.join(dataDir, 'bench-key'), seeded.key, { mode: 0o600 });
  if (args.keep && realisticTenant) writeFileSync(path.join(dataDir, 'bench-key-realistic'), realisticTenant.key, { mode: 0o600 });

  try {
    /**
     * Paired rounds (pairedRatios): each ceiling with the scenarios measured against it, back to back. They run right
     * after the last of those scenarios, before the writes that follow them grow the tenant (the creates and batches
     * of a full run take it from 100,000 contacts to ~560,000): so the rounds measure the data the scenarios measured.
     */
    const runRounds = async () => {
      const groups = [...new Set(TARGETED.map((x) => x.base))]
        .map((base) => ({
          base: all.find((sc) => sc.name.startsWith(base)),
          measured: TARGETED.filter((x) => x.base === base).map((x) => all.find((sc) => sc.name.startsWith(x.scenario))),
        }))
        .map((g) => ({ base: g.base, measured: g.measured.filter((sc): sc is Scenario => sc !== undefined) }))
        .filter((g): g is { base: Scenario; measured: Scenario[] } => g.base !== undefined && g.measured.length > 0);
      for (let round = 0; round < ROUNDS && groups.length > 0; round++) {
        const measured: Result[] = [];
        for (const g of groups) {
          // Even rounds: the ceiling first; odd rounds: last. A drift along the round then weighs on both sides.
          const order = round % 2 === 0 ? [g.base, ...g.measured] : [...g.measured, g.base];
          for (const sc of order) {
            const target = sc.target === 'ceiling' ? ceiling : api;
            const phase: LoadPhase = { connections: Math.min(CONNECTIONS, sc.connections ?? CONNECTIONS), duration: ROUND_DURATION };
            const [r] = await drive(target, sc, keyOf(sc), dataFile, [phase], ROUND_WARMUP, undefined, driveOptions);
            measured.push(r);
          }
        }
        rounds.push(measured);
        log(
          `  round ${round + 1} of ${ROUNDS}: ${pairedRatios([measured])
            .map((p) => `${p.name.split(' ÷ ')[0]} ${(p.byRequestsPerSec.value * 100).toFixed(1)} %`)
            .join('; ')}`,
        );
      }
    };
    const lastPaired = Math.max(-1, ...TARGETED.flatMap((x) => [x.base, x.scenario]).map((name) => all.findIndex((sc) => sc.name.startsWith(name))));
    for (const [index, sc] of all.entries()) {
      const profiling = args.profile !== undefined && sc.name.toLowerCase().includes(args.profile.toLowerCase());
      if (profiling && sc.target === 'ceiling') {
        // The ceiling's and the floor's profiles too: what the same answer costs with nothing behind it.
        await ceiling.stop();
        mkdirSync(profileDir, { recursive: true });
        ceiling = await startCeiling(['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
      } else if (profiling) {
        await api.stop();
        mkdirSync(profileDir, { recursive: true });
        api = await startProcess([...serverNodeArgs, '--cpu-prof', `--cpu-prof-dir=${profileDir}`, CLI, 'serve'], serverEnv, '/healthz');
      }
      const target = sc.target === 'ceiling' ? ceiling : api;
      const phases: LoadPhase[] = [{ connections: Math.min(CONNECTIONS, sc.connections ?? CONNECTIONS), duration: DURATION }];
      if (args.tails) phases.push({ connections: 1, duration: TAIL_DURATION });
      const perfFile = path.join(perfDir, `${sc.name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}.data`);
      const recording = perfing && namesMatch(args.perf!, sc.name);
      if (recording) mkdirSync(perfDir, { recursive: true });
      // The measured phase at the scenario's connections only: not the warm-up, nor the tails at one connection.
      const watch = recording ? (phase: number) => (phase === 0 ? startPerf(processTree(target.proc.pid!), perfFile).stop : undefined) : undefined;
      const [r, tail] = await drive(target, sc, keyOf(sc), dataFile, phases, WARMUP, watch, driveOptions);
      if (recording) {
        perfReports.push(
          perfTable(
            `${sc.name}: perf, ${r.serverCpuMicrosPerRequest ?? '?'} µs of server CPU per request`,
            perfBreakdown(perfFile),
            r.serverCpuMicrosPerRequest,
            perfTop(perfFile, 12),
          ),
        );
        log(`    perf recording written to ${perfFile}`);
      }
      results.push(r);
      log(
        `  ${r.name}: ${r.requestsPerSec} req/s, p50 ${r.latencyP50} ms, p99 ${r.latencyP99} ms, max ${r.latencyMax} ms, server CPU ${r.serverCpuMicrosPerRequest ?? '?'} µs/req (${r.serverCpuShare ?? '?'} cores; sampled ${r.serverCpuSampledShare ?? '?'}), RSS ${r.rssMiB ?? '?'} MiB, machine busy ${r.machine?.busyCores ?? '?'}/${r.machine?.cores ?? '?'} cores (load generator ${r.machine?.benchCores ?? '?'}), non-2xx ${r.non2xx}, errors ${r.errors}`,
      );
      if (r.non2xx > 0) log(`    status codes: ${JSON.stringify(r.statusCodes)}`);
      if (tail) {
        tails.push(tail);
        log(
          `    1 connection: ${tail.requestsPerSec} req/s, p50 ${tail.latencyP50} ms, p99 ${tail.latencyP99} ms, max ${tail.latencyMax} ms, p99/p50 ${p99OverP50(tail) ?? '?'}`,
        );
        if (tail.non2xx > 0) log(`    status codes: ${JSON.stringify(tail.statusCodes)}`);
      }
      if (profiling && sc.target === 'ceiling') {
        await ceiling.stop();
        log(`    CPU profile written to ${profileDir}`);
        ceiling = await startCeiling();
      } else if (profiling) {
        await api.stop(); // the profile is written at exit
        log(`    CPU profile written to ${profileDir}`);
        api = await startProcess([...serverNodeArgs, CLI, 'serve'], serverEnv, '/healthz');
      }
      if (index === lastPaired) await runRounds();
    }
    // What the server holds once every scenario has run through it (before the noisy scenario restarts it).
    if (all.some((sc) => sc.target === 'api')) {
      // One reading of /proc. The target is judged on the tree's Pss: the memory the server takes from the
      // machine, each page once. Summed VmRSS counts the node binary's pages once per process (see memoryLine).
      memoryAfterAll = treeMemory(api.proc.pid);
      heapAfterAll = await serverHeapMiB(api.url);
      if (args['heap-snapshot']) log(`    heap snapshot written to ${await heapSnapshot(api.proc.pid!)}`);
      if (memoryAfterAll.length) {
        rssMiBAfterAll = treeSum(memoryAfterAll, 'rss');
        pssMiBAfterAll = treeSum(memoryAfterAll, 'pss');
      }
    }
    if (noisy) {
      // A fresh server: the scenarios above leave caches and read processes in states of their own.
      await api.stop();
      api = await startProcess([...serverNodeArgs, CLI, 'serve'], serverEnv, '/healthz');
      log(
        `  noisy neighbour (QUERY_TIMEOUT_MS ${queryTimeoutMs}): tenant A = GET /contacts/:id + GET /contacts?pageSize=50 (4 + 4 connections); tenant B = 8 clients searching`,
      );
      noisyReport = await runNoisy({
        url: api.url,
        pid: api.proc.pid,
        aKey: seeded.key,
        aContactIds: seeded.contactIds,
        b: noisy,
        duration: DURATION,
        warmup: WARMUP,
        queryTimeoutMs,
        log,
      });
      const phaseRow = (name: string, p: NoisyReport['aAlone']): Result => ({
        name,
        connections: 8,
        requestsPerSec: p.all.requestsPerSec,
        serverCpuMicrosPerRequest: p.serverCpuMicrosPerRequest,
        serverCpuShare: p.serverCpuShare,
        serverCpuSampledShare: p.serverCpuSampledShare,
        rssMiB: p.rssMiBAfter,
        machine: p.machine,
        latencyP50: p.all.p50,
        latencyP99: p.all.p99,
        latencyMax: p.all.max,
        latencyAvg: NaN,
        total: p.all.requests,
        non2xx: p.all.non2xx,
        errors: p.all.errors,
        timeouts: p.all.timeouts,
        statusCodes: {},
      });
      results.push(phaseRow('noisy: A alone (by id + page of 50)', noisyReport.aAlone));
      results.push(phaseRow('noisy: A with B searching', noisyReport.aWithB));
    }
  } finally {
    await api.stop();
    await ceiling.stop();
    if (!args.keep) rmSync(dataDir, { recursive: true, force: true });
  }

  const rs = ratios(results);
  const paired = pairedRatios(rounds);
  const memoryMet = pssMiBAfterAll === undefined ? undefined : pssMiBAfterAll < 200;
  const memoryVerdict =
    pssMiBAfterAll === undefined
      ? undefined
      : `Server memory after all scenarios: ${pssMiBAfterAll} MiB, the Pss of its process tree (target < 200 MiB: ${memoryMet ? 'met' : 'MISSED'}); summed VmRSS ${rssMiBAfterAll} MiB`;
  // Bytes per contact beside the server's memory after the bench (issue 49's "must show").
  const footprintLine = `Bytes per contact (the contacts table and its indexes, ${databaseUrl ? 'pg_total_relation_size' : 'dbstat'}): ${footprint
    .map(
      (f) =>
        `${f.set}: ${f.bytesPerContact.toLocaleString('en')} B (${f.contacts.toLocaleString('en')} contacts, ${(f.bytes / 2 ** 20).toFixed(1)} MiB${f.rowBytes ? `; its tenant's rows ${f.rowBytes.toLocaleString('en')} B of data each in the heap` : ''})`,
    )
    .join(
      '; ',
    )}${pssMiBAfterAll === undefined ? '' : `; server memory after the bench: Pss ${pssMiBAfterAll} MiB, VmRSS ${rssMiBAfterAll} MiB (target < 200 MiB)`}.`;
  const machine = {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    kernel: os.release(),
    cpuIdle: cpuIdle(),
    loadAvgAtStart,
    loadAvgAtEnd: os.loadavg(),
  };
  const databaseLabel = databaseUrl
    ? `PostgreSQL (${new URL(databaseUrl).host}${new URL(databaseUrl).pathname}), Redis ${redisUrl ? 'yes' : 'no'}`
    : 'SQLite (WAL, temporary DATA_DIR)';
  const report = {
    date: new Date().toISOString(),
    machine,
    settings: {
      durationSeconds: DURATION,
      warmupSeconds: WARMUP,
      connections: CONNECTIONS,
      tailSeconds: args.tails ? TAIL_DURATION : undefined,
      database: databaseUrl ? 'postgres' : 'sqlite',
      redis: Boolean(redisUrl),
      queryTimeoutMs,
      counts,
      deepCursorDepth: data.cursors.deepDepth,
    },
    seedSeconds: seeded.seconds,
    noisySeedSeconds: noisy?.seconds,
    realistic: realisticTenant ? { contacts: REALISTIC_COUNT, users: realisticTenant.users.length, seedSeconds: realisticSeconds } : undefined,
    footprint,
    loadgens: LOADGENS,
    results,
    tails,
    ratios: rs,
    pairedRatios: paired,
    rounds: { count: rounds.length, secondsEach: ROUND_DURATION, warmupSeconds: ROUND_WARMUP, results: rounds },
    rssMiBAfterAll,
    pssMiBAfterAll,
    memoryAfterAll,
    heapAfterAll,
    noisy: noisyReport,
  };
  writeFileSync(path.join(ROOT, 'bench/results.json'), JSON.stringify(report, null, 2) + '\n');

  const out: string[] = [resultsTable(results)];
  const sideBySide = sideBySideTable(results);
  if (sideBySide) out.push('', sideBySide);
  if (rs.length) out.push('', ratiosTable(rs));
  if (paired.length) out.push('', pairedTable(paired));
  if (tails.length) out.push('', tailsTable(tails));
  if (memoryVerdict) out.push('', memoryVerdict, memoryLine(memoryAfterAll, heapAfterAll));
  out.push('', footprintLine);
  const batch = results.find((r) => r.name.startsWith('POST /contacts/batch/create'));
  if (batch) out.push(`batch/create: ${batch.requestsPerSec * 100} contacts/s with their events (target ≥ 10,000 on SQLite)`);
  for (const t of perfReports) out.push('', t);
  process.stdout.write(out.join('\n') + '\n');
  if (noisyReport) {
    const n = noisyReport;
    const ph = (p: NoisyReport['aAlone']) =>
      `p50 ${p.all.p50} / p99 ${p.all.p99} / max ${p.all.max} ms, ${p.all.requestsPerSec} req/s (by id: p50 ${p.byId.p50} / p99 ${p.byId.p99} / max ${p.byId.max}; page: p50 ${p.list.p50} / p99 ${p.list.p99} / max ${p.list.max}); server+readers ${p.serverCpuShare ?? '?'} cores (sampled ${p.serverCpuSampledShare ?? '?'}), RSS ${p.rssMiBAfter ?? '?'} MiB (peak ${p.peakRssMiB ?? '?'}, ${p.maxProcesses ?? '?'} processes); machine busy ${p.machine?.busyCores ?? '?'}/${p.machine?.cores ?? '?'} cores (bench process ${p.machine?.benchCores ?? '?'}), load avg ${p.loadAvg.join(' ')}`;
    process.stdout.write(
      [
        '',
        `Noisy neighbour (QUERY_TIMEOUT_MS ${n.queryTimeoutMs}; B's filter: ${n.filter.conditions} conditions, ${n.filter.values} values, depth ${n.filter.depth}, ${(n.filter.bytes / 1024).toFixed(0)} KiB, tags notIn ×${n.filter.tagValues}, multi_select notIn ×${n.filter.multiValues}${n.filter.refused.length ? `; refused or failed first: ${n.filter.refused.map((r) => `multi_select ×${r.multiValues} → ${r.status}`).join(', ')}` : ''})`,
        `  A alone:     ${ph(n.aAlone)}`,
        `  A with B:    ${ph(n.aWithB)}`,
        `  A with B ÷ A alone: p99 ×${n.p99Ratio} (target ≤ 2: ${n.p99Ratio <= 2 ? 'met' : 'MISSED'}), p50 ×${n.p50Ratio}, max ×${n.maxRatio}`,
        `  B: ${n.b.requests} requests ${JSON.stringify(n.b.byStatus)}; p50 ${n.b.p50} / p99 ${n.b.p99} / max ${n.b.max} ms; slowest by status ${JSON.stringify(n.b.maxByStatus)}`,
        `  B answered or refused within QUERY_TIMEOUT_MS + 1 s (${n.b.boundMs} ms): ${n.b.withinBound ? 'PASS' : `FAIL (${n.b.overBound} slower, ${n.b.unexpected} unexpected answers)`}`,
        '',
      ].join('\n'),
    );
  }

  // The same, ready to paste into bench/RESULTS.md.
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const md = [
    `## ${report.date.slice(0, 16).replace('T', ' ')} UTC: \`npm run bench -- ${process.argv.slice(2).join(' ')}\``,
    '',
    `- Machine: ${machine.cpus} CPUs (${machine.model}), ${machine.memGiB} GiB, Node ${machine.node.slice(1)}, Linux ${machine.kernel}${machine.cpuIdle ? ` (idle CPUs: ${machine.cpuIdle})` : ''}; load average ${la(loadAvgAtStart)} at the start, ${la(machine.loadAvgAtEnd)} at the end.`,
    `- Database: ${databaseLabel}; server \`crm serve\` (LOG_LEVEL=warn WORKERS=false QUERY_TIMEOUT_MS=${queryTimeoutMs}${process.env.SQLITE_MMAP_MB ? ` SQLITE_MMAP_MB=${process.env.SQLITE_MMAP_MB}` : ''}).`,
    `- Data: ${counts.contacts.toLocaleString('en')} contacts, ${counts.companies.toLocaleString('en')} companies, ${counts.deals.toLocaleString('en')} deals, ${counts.activities.toLocaleString('en')} activities (3 links each); seeded in ${seeded.seconds.toFixed(1)} s${noisy ? ` (+ tenant B ${noisy.seconds.toFixed(1)} s)` : ''}.${realisticTenant ? ` Realistic tenant: ${REALISTIC_COUNT.toLocaleString('en')} contacts created through POST /contacts/batch/create in ${realisticSeconds?.toFixed(1)} s, each with a phone, an owner among ${realisticTenant.users.length} users and 8 custom properties (2 select, 2 multi_select, 2 boolean, 2 text).` : ''}`,
    `- Load: autocannon in ${LOADGENS > 1 ? `${LOADGENS} processes of their own (the connections split between them)` : 'a process of its own'} ("gen-bound": one at ≥ ${GENERATOR_BOUND} of a core); ${WARMUP} s warm-up, ${DURATION} s at ${CONNECTIONS} connections${args.tails ? `, then ${TAIL_DURATION} s at 1 connection` : ''}; server CPU and RSS of the server's process tree from /proc.`,
    '',
    resultsTable(results),
    ...(sideBySide ? ['', sideBySide] : []),
    ...(rs.length ? ['', ratiosTable(rs)] : []),
    ...(paired.length
      ? [
          '',
          `Paired rounds: ${rounds.length}, each ceiling and the scenarios measured against it back to back, ${ROUND_WARMUP} s warm-up and ${ROUND_DURATION} s each, the ceiling first in odd rounds and last in even ones.`,
          '',
          pairedTable(paired),
        ]
      : []),
    ...(tails.length ? ['', tailsTable(tails)] : []),
    ...(memoryVerdict ? ['', `${memoryVerdict}.`, memoryLine(memoryAfterAll, heapAfterAll)] : []),
    '',
    footprintLine,
    ...perfReports.flatMap((t) => ['', t]),
    '',
  ].join('\n');
  writeFileSync(path.join(ROOT, 'bench/results.md'), md);
  process.stdout.write(
    `seeding: ${seeded.seconds.toFixed(1)} s${noisy ? ` + tenant B ${noisy.seconds.toFixed(1)} s` : ''}; report: bench/results.json, bench/results.md\n`,
  );
  // Wrong answers (non-2xx) or connection errors fail the run; timeouts (a request queued behind slow ones
  // for more than 10 s) are a measurement of slowness and are reported in the table instead. In the noisy
  // scenario B's 503/429 are expected; an answer past the deadline + 1 s (or any other status) fails it.
  if ([...results, ...tails].some((r) => r.non2xx > 0 || r.errors - r.timeouts > 0)) process.exitCode = 1;
  if (noisyReport && !noisyReport.b.withinBound) process.exitCode = 1;
}

await main();
