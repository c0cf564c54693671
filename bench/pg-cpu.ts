// PostgreSQL's own CPU during a measurement window, from Linux /proc (the database must run on this machine): the
// server's CPU per request leaves out the work its statements cause in PostgreSQL's processes, a backend per
// connection. Two figures:
// - `backends`: the backends connected to the bench's database, found by their process title
//   ("postgres: 15/main: postgres crm_bench <host>(<port>) idle"): the statements of the server under test.
// - `cluster`: every process of the cluster (postmaster's tree: the bench's backends, the WAL writer, checkpointer,
//   autovacuum, and other databases' backends: other work on the machine counts here too).
// Sampled every `intervalMs` (200 ms): each process's largest CPU seen minus its CPU at the window's start (0 for one
// born in the window); a backend that exits between two samples loses its last < 200 ms. Undefined outside Linux or
// when no postmaster is found.
import { readFileSync, readdirSync } from 'node:fs';
import { processTree } from './proc.js';

const HZ = 100; // USER_HZ on Linux

function stat(pid: number): { ppid: number; cpu: number; start: string; comm: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const comm = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // 0-based after the command: 1 ppid, 11 utime, 12 stime, 19 starttime.
    return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / HZ, start: f[19], comm };
  } catch {
    return undefined;
  }
}

/** Postmasters: processes named postgres whose parent is not. */
function postmasters(): number[] {
  let pids: number[];
  try {
    pids = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
  return pids.filter((pid) => {
    const s = stat(pid);
    return s?.comm === 'postgres' && stat(s.ppid)?.comm !== 'postgres';
  });
}

export class PgCpuMonitor {
  private readonly roots = postmasters();
  /** pid:start → whether its title names the database (a backend's database never changes). */
  private readonly ours = new Map<string, boolean>();
  private readonly base = new Map<string, number>();
  private readonly max = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private wall = 0;

  constructor(
    private readonly database: string,
    private readonly intervalMs = 200,
  ) {}

  /** Whether a postmaster was found (PostgreSQL runs on this machine and /proc is readable). */
  get available(): boolean {
    return this.roots.length > 0;
  }

  start(): this {
    if (!this.available) return this;
    this.wall = performance.now();
    this.sample(true);
    this.timer = setInterval(() => this.sample(false), this.intervalMs);
    this.timer.unref();
    return this;
  }

  private sample(first: boolean): void {
    for (const root of this.roots) {
      for (const pid of processTree(root)) {
        const s = stat(pid);
        if (!s) continue;
        const k = `${pid}:${s.start}`;
        if (!this.ours.has(k)) this.ours.set(k, pid !== root && this.namesDatabase(pid));
        if (!this.base.has(k)) this.base.set(k, first ? s.cpu : 0);
        if (s.cpu > (this.max.get(k) ?? -1)) this.max.set(k, s.cpu);
      }
    }
  }

  private namesDatabase(pid: number): boolean {
    try {
      // "postgres: <cluster>: <user> <database> <client> <state>"; the cluster part is missing on some setups.
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      return title.startsWith('postgres: ') && title.split(' ').includes(this.database);
    } catch {
      return false;
    }
  }

  /** Ends the window; CPU seconds of the bench's database's backends and of the whole cluster in it. */
  stop(): { backends: number; cluster: number; seconds: number } | undefined {
    if (!this.available) return undefined;
    if (this.timer) clearInterval(this.timer);
    this.sample(false);
    let backends = 0;
    let cluster = 0;
    for (const [k, v] of this.max) {
      const used = v - (this.base.get(k) ?? 0);
      cluster += used;
      if (this.ours.get(k)) backends += used;
    }
    return { backends, cluster, seconds: (performance.now() - this.wall) / 1000 };
  }
}
