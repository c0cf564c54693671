// One scenario driven from load generators in processes of their own (bench/loadgen.ts), measured from outside:
// the server tree's CPU and RSS, the generators' own CPU and, on a PostgreSQL of this machine, its backends' CPU.
// Shared by run.ts and side-by-side.ts.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PgCpuMonitor } from './pg-cpu.js';
import { TreeMonitor, round1, treeRssMiB } from './proc.js';
import type { LoadEvent, LoadJob, LoadPhase, LoadResult, Scenario } from './scenarios.js';
import { ROOT, type Proc } from './serve.js';

const LOADGEN = path.join(ROOT, 'bench/loadgen.ts');

export interface Result {
  name: string;
  connections: number;
  requestsPerSec: number;
  /** Server CPU time per request (µs): independent of the load generator's own limits. */
  serverCpuMicrosPerRequest?: number;
  /** Server CPU busy share during the run (1 = one core fully used). */
  serverCpuShare?: number;
  /** The same from 200 ms samples of the tree (max per process, summed): a cross-check, see bench/proc.ts. */
  serverCpuSampledShare?: number;
  /**
   * Machine busy cores in the run, and the load generator's (its own process; in the noisy scenario, this
   * one's): what is left of the busy cores after the server's and the load generator's is other work.
   */
  machine?: { busyCores: number; iowaitCores?: number; cores: number; benchCores: number };
  /**
   * The load generators: how many processes, and the CPU of the busiest (cores). One near a full core (≥ 0.9) is
   * the bottleneck: its req/s measure the generator; the server's CPU per request still measures the server.
   */
  loadgen?: { processes: number; maxCores: number };
  /**
   * PostgreSQL's CPU per request (µs; a PostgreSQL on this machine, bench/pg-cpu.ts): its backends connected to the
   * bench's database, and every process of its cluster (other databases' work included).
   */
  dbCpuMicrosPerRequest?: number;
  dbClusterCpuMicrosPerRequest?: number;
  /** Resident memory of the server's tree (server + read processes) right after the run, MiB. */
  rssMiB?: number;
  latencyP50: number;
  latencyP99: number;
  latencyMax: number;
  latencyAvg: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

/** How drive runs the load: generator processes (the connections split between them), and PostgreSQL's database to watch. */
export interface DriveOptions {
  /** Load generator processes (1): more when one saturates a core before the server does (on a machine with cores to spare). */
  loadgens?: number;
  /** The PostgreSQL database the server uses (its backends' CPU is measured when PostgreSQL runs on this machine). */
  pgDatabase?: string;
}

const pct = (sorted: number[], q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]);

const EMPTY: LoadResult = {
  requestsPerSec: 0,
  total: 0,
  latencyP50: 0,
  latencyP99: 0,
  latencyMax: 0,
  latencyAvg: 0,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statusCodes: {},
};

/** The generators' results of one phase as one: counts summed, percentiles of all their latencies. */
function merge(parts: LoadResult[]): LoadResult {
  parts = parts.filter((p) => p.total > 0 || p.errors > 0);
  if (parts.length <= 1) return { ...(parts[0] ?? EMPTY), latencies: undefined };
  const all = parts.flatMap((p) => p.latencies ?? []).sort((a, b) => a - b);
  const r2 = (x: number) => Math.round(x * 100) / 100;
  const sum = (k: 'requestsPerSec' | 'total' | 'non2xx' | 'errors' | 'timeouts') => parts.reduce((a, p) => a + p[k], 0);
  const codes: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p.statusCodes)) codes[k] = (codes[k] ?? 0) + v;
  return {
    requestsPerSec: sum('requestsPerSec'),
    total: sum('total'),
    latencyP50: r2(pct(all, 0.5)),
    latencyP99: r2(pct(all, 0.99)),
    latencyMax: r2(pct(all, 1)),
    latencyAvg: all.length ? r2(all.reduce((a, b) => a + b, 0) / all.length) : 0,
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    statusCodes: codes,
  };
}

/**
 * Runs `sc` against `target` from load generator processes (bench/loadgen.ts; `options.loadgens`, 1 by default): their
 * warm-up, then each of `phases`, started in all generators at once and measured here from outside: the server tree's
 * CPU and RSS, the generators' own CPU and PostgreSQL's. One Result per phase.
 */
export function drive(
  target: Proc,
  sc: Scenario,
  key: string,
  dataFile: string,
  phases: LoadPhase[],
  warmup: number,
  /** Called as a phase starts being measured; what it returns is called as that phase ends, and awaited. */
  watch?: (phase: number) => (() => Promise<void>) | undefined,
  options: DriveOptions = {},
): Promise<Result[]> {
  // No more generators than the connections; each phase's connections split between them (a phase at fewer connections
  // than generators, such as the tails at one, leaves some idle: they report an empty phase).
  const n = Math.max(1, Math.min(options.loadgens ?? 1, Math.max(...phases.map((p) => p.connections))));
  const share = (c: number, k: number) => Math.floor(c / n) + (k < c % n ? 1 : 0);
  const children = Array.from({ length: n }, (_, k) => {
    const job: LoadJob = {
      url: target.url,
      key,
      scenario: sc.name,
      dataFile,
      warmup,
      phases: phases.map((p) => ({ ...p, connections: share(p.connections, k) })),
      latencies: n > 1,
    };
    return spawn(process.execPath, ['--import', 'tsx', LOADGEN, JSON.stringify(job)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  });
  const pid = target.proc.pid;
  const results: Result[] = [];
  let server: TreeMonitor | undefined;
  let loadgens: TreeMonitor[] = [];
  let pg: PgCpuMonitor | undefined;
  let watching: (() => Promise<void>) | undefined;
  const watched: Promise<void>[] = [];
  let ready = 0;
  let parts: LoadResult[] = [];
  const measured = (phase: number) => {
    server!.stop();
    for (const m of loadgens) m.stop();
    const db = pg?.stop();
    if (watching) watched.push(watching());
    watching = undefined;
    const r = merge(parts);
    parts = [];
    const cpu = server!.cpuSeconds();
    const sampled = server!.sampledCpuSeconds();
    const seconds = server!.seconds();
    const machine = server!.machine();
    const each = loadgens.map((m) => m.cores() ?? NaN);
    const perRequest = (s: number | undefined) => (s !== undefined && r.total > 0 ? Math.round((s / r.total) * 1e6) : undefined);
    results.push({
      name: sc.name,
      connections: phases[phase].connections,
      ...r,
      serverCpuMicrosPerRequest: perRequest(cpu),
      serverCpuShare: server!.cores(),
      serverCpuSampledShare: sampled !== undefined ? Number((sampled / seconds).toFixed(2)) : undefined,
      rssMiB: round1(treeRssMiB(pid)),
      // The monitor's own benchCores is this process's, which only reads /proc: the load is the generators'.
      machine: machine && { ...machine, benchCores: Math.round(each.reduce((a, b) => a + b, 0) * 100) / 100 },
      loadgen: { processes: n, maxCores: Math.max(...each) },
      dbCpuMicrosPerRequest: perRequest(db?.backends),
      dbClusterCpuMicrosPerRequest: perRequest(db?.cluster),
    });
  };
  for (const child of children) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const e = JSON.parse(line) as LoadEvent;
      if (e.event === 'ready') {
        if (++ready < n) return;
        ready = 0;
        server = new TreeMonitor(pid).start();
        loadgens = children.map((c) => new TreeMonitor(c.pid).start());
        pg = options.pgDatabase ? new PgCpuMonitor(options.pgDatabase).start() : undefined;
        watching = watch?.(e.phase);
        for (const c of children) c.stdin!.write('go\n');
        return;
      }
      const { event: _e, phase, ...r } = e;
      parts.push(r);
      if (parts.length === n) measured(phase);
    });
  }
  return Promise.all(
    children.map(
      (child) =>
        new Promise<number | null>((resolve, reject) => {
          child.on('error', reject);
          child.on('close', (code) => {
            // A generator gone before its phases: the others wait for a `go` that never comes; closing stdin ends them.
            if (code !== 0) for (const c of children) c.stdin!.end();
            resolve(code);
          });
        }),
    ),
  ).then(async (codes) => {
    if (codes.some((c) => c !== 0) || results.length !== phases.length) {
      throw new Error(`load generators of "${sc.name}" exited with codes ${codes.join(', ')} after ${results.length} of ${phases.length} phases`);
    }
    await Promise.all(watched);
    return results;
  });
}
