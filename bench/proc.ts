// CPU and memory of a process *tree* from Linux /proc: the server and its children (on SQLite every read
// connection of the read pool is a child process, killed and replaced at the query deadline).
//
// Two CPU measures are kept:
// - `cpuSeconds()`: kernel accounting. The root's own utime+stime, plus its cutime+cstime (the CPU of
//   children it has already reaped: Node/libuv waits for every child it spawned, so a reader killed at
//   the deadline lands there with all the CPU it used), plus the own CPU of every live descendant. Exact at
//   any instant, whatever the sampling rate.
// - `sampledCpuSeconds()`: the tree sampled every `intervalMs` (200 ms), the largest CPU seen per process
//   (pid + start time, so a reused pid is another process), summed. A killed child loses what it used after
//   its last sample; kept as a cross-check of the exact figure (they should differ by well under 5 %).
//
// Outside Linux every figure is undefined.
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';

const HZ = 100; // USER_HZ on Linux

interface Stat {
  /** Own utime + stime (s). */
  own: number;
  /** cutime + cstime: reaped children (s). */
  reaped: number;
  startTime: string;
}

function readStat(pid: number): Stat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command (0-based here): 11 utime, 12 stime, 13 cutime, 14 cstime, 19 starttime.
    return { own: (Number(f[11]) + Number(f[12])) / HZ, reaped: (Number(f[13]) + Number(f[14])) / HZ, startTime: f[19] };
  } catch {
    return undefined;
  }
}

/** The pid and every live descendant (walks /proc/<pid>/task/<tid>/children). */
export function processTree(root: number): number[] {
  const out: number[] = [];
  const stack = [root];
  const seen = new Set<number>();
  while (stack.length) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    out.push(pid);
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/)) if (c) stack.push(Number(c));
      } catch {
        // the thread or the process went away meanwhile
      }
    }
  }
  return out;
}

/** Kernel-accounted CPU seconds of the tree so far (see the header); undefined when /proc is unreadable. */
export function treeCpuSeconds(root: number | undefined): number | undefined {
  if (root === undefined) return undefined;
  const self = readStat(root);
  if (!self) return undefined;
  let total = self.own + self.reaped;
  for (const pid of processTree(root)) {
    if (pid === root) continue;
    const s = readStat(pid);
    if (s) total += s.own + s.reaped;
  }
  return total;
}

/** Resident memory of the tree now, in MiB (sum of VmRSS; shared pages are counted once per process). */
export function treeRssMiB(root: number | undefined): number | undefined {
  if (root === undefined) return undefined;
  let kib = 0;
  let any = false;
  for (const pid of processTree(root)) {
    try {
      const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) {
        kib += Number(m[1]);
        any = true;
      }
    } catch {
      // gone meanwhile
    }
  }
  return any ? kib / 1024 : undefined;
}

/** Memory of each process of the tree now (MiB): VmRSS and its anonymous and file parts, and Pss. */
export function treeMemory(root: number | undefined): { pid: number; rss: number; anon: number; file: number; pss: number }[] {
  if (root === undefined) return [];
  const out = [];
  for (const pid of processTree(root)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kib = (re: RegExp, text: string) => Number(re.exec(text)?.[1] ?? NaN) / 1024;
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      out.push({
        pid,
        rss: round1(kib(/^VmRSS:\s+(\d+)/m, status)),
        anon: round1(kib(/^RssAnon:\s+(\d+)/m, status)),
        file: round1(kib(/^RssFile:\s+(\d+)/m, status) + kib(/^RssShmem:\s+(\d+)/m, status)),
        pss: round1(kib(/^Pss:\s+(\d+)/m, rollup)),
      });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The tree's total of one measure of treeMemory (MiB, one decimal). */
export function treeSum(procs: ReturnType<typeof treeMemory>, k: 'rss' | 'pss'): number {
  return round1(procs.reduce((a, p) => a + p[k], 0));
}

/** MiB and ratios as the bench prints them: one decimal. */
export function round1(x: number): number;
export function round1(x: number | undefined): number | undefined;
export function round1(x: number | undefined): number | undefined {
  return x === undefined ? undefined : Math.round(x * 10) / 10;
}

/**
 * How the machine's idle CPUs wait (Linux cpuidle), e.g. `haltpoll, guest_halt_poll_ns 0`. On a VM whose idle
 * vCPUs halt at once, waking one (the load generator's, between two answers) costs the waking side an exit to
 * the hypervisor, inside its `writev`: with the same code, GET by id cost 52 µs of server CPU with
 * `guest_halt_poll_ns` 0 and 45 with 200,000 (bench/RESULTS.md, 2026-11-28 14:05 – 15:10). Runs on VMs with
 * another idle policy are not comparable request for request; the ratios within a run are.
 */
export function cpuIdle(): string | undefined {
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const driver = read('/sys/devices/system/cpu/cpuidle/current_driver');
  if (driver === undefined) return undefined;
  const pollNs = read('/sys/module/haltpoll/parameters/guest_halt_poll_ns');
  return pollNs === undefined ? driver : `${driver}, guest_halt_poll_ns ${pollNs}`;
}

/**
 * Busy, iowait and total jiffies of the whole machine (first line of /proc/stat), for the contention of a window.
 * iowait is idle time with a read or write of this machine's storage outstanding: a server that waits on its disk.
 */
function machineJiffies(): { busy: number; iowait: number; total: number } | undefined {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = f[3] + f[4]; // idle + iowait
    return { busy: total - idle, iowait: f[4], total };
  } catch {
    return undefined;
  }
}

/** Bytes the process has had read from storage (`read_bytes` of /proc/<pid>/io: page-cache misses, not cached reads). */
function storageReadBytes(pid: number): number | undefined {
  try {
    const m = /^read_bytes:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Samples a process tree during a measurement window (start → stop). */
export class TreeMonitor {
  private readonly baseline = new Map<string, number>();
  private readonly max = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private exactStart: number | undefined;
  private exactEnd: number | undefined;
  /** Most processes seen at once, and largest tree RSS seen (MiB). */
  maxProcesses = 0;
  peakRssMiB = 0;
  private samples = 0;
  private machineStart: { busy: number; iowait: number; total: number } | undefined;
  private machineEnd: { busy: number; iowait: number; total: number } | undefined;
  /** read_bytes per process (pid:start) at its first and last sample. */
  private readonly readBase = new Map<string, number>();
  private readonly readLast = new Map<string, number>();
  private selfStart = process.cpuUsage();
  private selfEnd: NodeJS.CpuUsage | undefined;
  private wallStart = 0;
  private wallEnd = 0;

  constructor(
    private readonly root: number | undefined,
    private readonly intervalMs = 200,
  ) {}

  start(): this {
    this.machineStart = machineJiffies();
    this.selfStart = process.cpuUsage();
    this.wallStart = performance.now();
    if (this.root === undefined) return this;
    this.exactStart = treeCpuSeconds(this.root);
    this.sample(true);
    this.timer = setInterval(() => this.sample(false), this.intervalMs);
    this.timer.unref();
    return this;
  }

  private sample(first: boolean): void {
    if (this.root === undefined) return;
    const pids = processTree(this.root);
    this.maxProcesses = Math.max(this.maxProcesses, pids.length);
    if (this.samples++ % 5 === 0) this.peakRssMiB = Math.max(this.peakRssMiB, treeRssMiB(this.root) ?? 0);
    for (const pid of pids) {
      const s = readStat(pid);
      if (!s) continue;
      const k = `${pid}:${s.startTime}`;
      // Only the processes' own CPU: reaped children are separate entries of the map already.
      if (first) this.baseline.set(k, s.own);
      if (s.own > (this.max.get(k) ?? -1)) this.max.set(k, s.own);
      const read = storageReadBytes(pid);
      if (read !== undefined) {
        // A process born in the window starts from 0: what it read counts in full.
        if (!this.readBase.has(k)) this.readBase.set(k, first ? read : 0);
        this.readLast.set(k, read);
      }
    }
  }

  stop(): this {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.machineEnd = machineJiffies();
    this.selfEnd = process.cpuUsage(this.selfStart);
    this.wallEnd = performance.now();
    if (this.root !== undefined) {
      this.sample(false);
      this.exactEnd = treeCpuSeconds(this.root);
    }
    return this;
  }

  /** CPU seconds of the tree in the window, kernel-accounted (exact). */
  cpuSeconds(): number | undefined {
    return this.exactStart !== undefined && this.exactEnd !== undefined ? this.exactEnd - this.exactStart : undefined;
  }

  /**
   * Contention in the window, in cores: the whole machine's busy CPU, and this (load-generating) process's
   * own. What is left of the machine's busy time after the server tree and the bench is other work.
   */
  machine(): { busyCores: number; iowaitCores: number; cores: number; benchCores: number } | undefined {
    const a = this.machineStart;
    const b = this.machineEnd;
    const seconds = (this.wallEnd - this.wallStart) / 1000;
    if (!a || !b || !this.selfEnd || seconds <= 0) return undefined;
    const cores = availableParallelism();
    const busyCores = ((b.busy - a.busy) / (b.total - a.total || 1)) * cores;
    const iowaitCores = ((b.iowait - a.iowait) / (b.total - a.total || 1)) * cores;
    const benchCores = (this.selfEnd.user + this.selfEnd.system) / 1e6 / seconds;
    const r2 = (x: number) => Math.round(x * 100) / 100;
    return { busyCores: r2(busyCores), iowaitCores: r2(iowaitCores), cores, benchCores: r2(benchCores) };
  }

  /**
   * MiB the tree had read from storage in the window (sampled every `intervalMs`: a reader killed between two
   * samples loses its last reads). Undefined without /proc/<pid>/io.
   */
  storageReadMiB(): number | undefined {
    if (this.readLast.size === 0) return undefined;
    let bytes = 0;
    for (const [k, v] of this.readLast) bytes += v - (this.readBase.get(k) ?? 0);
    return round1(bytes / 2 ** 20);
  }

  /** Length of the window (s). */
  seconds(): number {
    return (this.wallEnd - this.wallStart) / 1000;
  }

  /** CPU of the tree in the window, in cores (kernel-accounted; 1 = one core fully used). */
  cores(): number | undefined {
    const cpu = this.cpuSeconds();
    return cpu !== undefined && this.seconds() > 0 ? Math.round((cpu / this.seconds()) * 100) / 100 : undefined;
  }

  /** CPU seconds of the tree in the window from the samples (max per process, summed). */
  sampledCpuSeconds(): number | undefined {
    if (this.root === undefined || this.max.size === 0) return undefined;
    let total = 0;
    for (const [k, v] of this.max) total += v - (this.baseline.get(k) ?? 0);
    return total;
  }
}
