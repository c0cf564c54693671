// One scenario driven from a load generator in a process of its own (bench/loadgen.ts), measured from outside:
// the server tree's CPU and RSS, and the generator's own CPU. Shared by run.ts and side-by-side.ts.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { TreeMonitor, round1, treeRssMiB } from './proc.js';
import type { LoadEvent, LoadJob, LoadPhase, Scenario } from './scenarios.js';
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

/**
 * Runs `sc` against `target` from a load generator process (bench/loadgen.ts): its warm-up, then each of
 * `phases`, measured here from outside while the generator reports it is under way: the server tree's CPU
 * and RSS, and the generator's own CPU. One Result per phase.
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
): Promise<Result[]> {
  const job: LoadJob = { url: target.url, key, scenario: sc.name, dataFile, warmup, phases };
  const child = spawn(process.execPath, ['--import', 'tsx', LOADGEN, JSON.stringify(job)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = target.proc.pid;
  const results: Result[] = [];
  let server: TreeMonitor | undefined;
  let loadgen: TreeMonitor | undefined;
  let watching: (() => Promise<void>) | undefined;
  const watched: Promise<void>[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const e = JSON.parse(line) as LoadEvent;
    if (e.event === 'measuring') {
      server = new TreeMonitor(pid).start();
      loadgen = new TreeMonitor(child.pid).start();
      watching = watch?.(e.phase);
      return;
    }
    server!.stop();
    loadgen!.stop();
    if (watching) watched.push(watching());
    watching = undefined;
    const { event: _e, phase, ...r } = e;
    const cpu = server!.cpuSeconds();
    const sampled = server!.sampledCpuSeconds();
    const seconds = server!.seconds();
    const machine = server!.machine();
    results.push({
      name: sc.name,
      connections: phases[phase].connections,
      ...r,
      serverCpuMicrosPerRequest: cpu !== undefined && r.total > 0 ? Math.round((cpu / r.total) * 1e6) : undefined,
      serverCpuShare: server!.cores(),
      serverCpuSampledShare: sampled !== undefined ? Number((sampled / seconds).toFixed(2)) : undefined,
      rssMiB: round1(treeRssMiB(pid)),
      // The monitor's own benchCores is this process's, which only reads /proc: the load is the child's.
      machine: machine && { ...machine, benchCores: loadgen!.cores() ?? NaN },
    });
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 && results.length === phases.length) Promise.all(watched).then(() => resolve(results), reject);
      else reject(new Error(`load generator of "${sc.name}" exited with code ${code} after ${results.length} of ${phases.length} phases`));
    });
  });
}
