// Where a server's CPU goes, from outside: `perf record` (Linux perf, software clock, call graphs) on a process tree
// while a scenario runs, summed into what the service controls and what it does not. V8's own profiler
// (`--profile`) cannot tell these apart: it charges the time spent inside a native call (SQLite's statement, the
// kernel's writev) to the JavaScript frame that made it, and it sees nothing of the kernel.
//   `npm run bench -- --perf "<scenario>"` records the server's tree (or the ceiling's) during the measured phase
//   at the scenario's connections and prints the breakdown; `node --import tsx bench/perf.ts <perf.data> [µs/request]`
//   prints it for a recording made another way.
// perf is Debian's linux-perf; without it, --perf says so and the bench runs without it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** perf on PATH, able to record the software clock (no hardware counters needed: VMs often have none). */
export function perfAvailable(): boolean {
  return spawnSync('perf', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Starts `perf record` on these processes (all their threads); the returned stop() waits until the file is written. */
export function startPerf(pids: number[], file: string): { stop(): Promise<void> } {
  // perf refuses the whole list when one of its processes, or a thread of one, goes away while it attaches (a read
  // process replaced, a thread that ran a moment): it is started again, with the processes still there, until it holds.
  let stopping = false;
  let perf: ChildProcess;
  let done!: () => void;
  const exited = new Promise<void>((resolve) => (done = resolve));
  const start = (tries: number) => {
    const alive = pids.filter((pid) => existsSync(`/proc/${pid}/stat`));
    const started = Date.now();
    perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '1999', '-g', '-p', alive.join(','), '-o', file], { stdio: 'ignore' });
    perf.once('exit', (code) => {
      const refused = code !== 0 && Date.now() - started < 1_000;
      // stop() during the pause before a retry ends it: no perf is left recording after it.
      if (!stopping && refused && tries < 20) setTimeout(() => (stopping ? done() : start(tries + 1)), 20);
      else done();
    });
  };
  start(0);
  return {
    async stop() {
      stopping = true;
      perf.kill('SIGINT');
      await exited;
    },
  };
}

/**
 * One share of the recorded CPU: a kernel entry's samples with everything it called (perf's "children"; kernel stacks
 * are always walked whole), or a shared object's own samples.
 */
interface Part {
  name: string;
  share: number;
}

/** perf report's lines `children% self% [k|.] symbol`, symbol → children %. */
function childrenBySymbol(file: string): Map<string, number> {
  const out = perfReport(file, ['--children', '--sort', 'sym']);
  const m = new Map<string, number>();
  for (const line of out.split('\n')) {
    const hit = /^\s*([\d.]+)%\s+[\d.]+%\s+\[[k.]\]\s+(.+?)\s*$/.exec(line);
    if (hit && !m.has(hit[2])) m.set(hit[2], Number(hit[1]));
  }
  return m;
}

/** perf report's self shares by shared object (`[kernel.kallsyms]`, `node`, `better_sqlite3.node`, `[JIT] tid …`). */
function selfByDso(file: string): Map<string, number> {
  const out = perfReport(file, ['--no-children', '--sort', 'dso']);
  const m = new Map<string, number>();
  for (const line of out.split('\n')) {
    const hit = /^\s*([\d.]+)%\s+(.+?)\s*$/.exec(line);
    if (!hit) continue;
    const name = hit[2].startsWith('[JIT]') ? '[JIT]' : hit[2]; // one per thread: `[JIT] tid 1234`
    m.set(name, (m.get(name) ?? 0) + Number(hit[1]));
  }
  return m;
}

function perfReport(file: string, args: string[]): string {
  const r = spawnSync('perf', ['report', '-i', file, '--stdio', '-g', 'none', '--percent-limit', '0', ...args], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`perf report -i ${file}: ${r.stderr}`);
  return r.stdout;
}

/**
 * The recorded CPU in parts that add up to 100 %:
 * - the kernel's socket writes (`do_writev`: on loopback they deliver the bytes and wake the reader), socket reads
 *   (`ksys_read`), epoll, SQLite's page reads (`pread64`: pages its cache does not hold, copied from the OS's file
 *   cache) and its file locks (`fcntl`), and the rest of the kernel;
 * - SQLite's own code (better_sqlite3.node, self);
 * - V8's garbage collector (`Heap::CollectGarbage` and what it calls);
 * - JavaScript compiled by V8, and the rest of the node binary: V8's builtins, interpreter and runtime, Node's C++;
 * - libc and the rest.
 */
export function perfBreakdown(file: string): Part[] {
  const sym = childrenBySymbol(file);
  const dso = selfByDso(file);
  const at = (...names: string[]) => Math.max(0, ...names.map((n) => sym.get(n) ?? 0));
  const writev = at('do_writev');
  const read = at('ksys_read');
  const epoll = at('do_epoll_wait');
  const pread = at('ksys_pread64', '__x64_sys_pread64');
  const fcntl = at('__x64_sys_fcntl', 'do_fcntl');
  const kernel = dso.get('[kernel.kallsyms]') ?? 0;
  const sqlite = dso.get('better_sqlite3.node') ?? 0;
  const gc = at('v8::internal::Heap::CollectGarbage');
  const parts: Part[] = [
    { name: 'kernel: socket writes (writev, with the wake-up of the reader)', share: writev },
    { name: 'kernel: socket reads', share: read },
    { name: 'kernel: epoll', share: epoll },
    { name: "kernel: SQLite's page reads (pread64)", share: pread },
    { name: "kernel: SQLite's file locks (fcntl)", share: fcntl },
    // System calls' own entry and exit, interrupts, and whatever the entries above do not hold.
    { name: 'kernel: the rest', share: Math.max(0, kernel - writev - read - epoll - pread - fcntl) },
    { name: "SQLite's own code", share: sqlite },
    { name: "V8's garbage collector", share: gc },
    { name: 'JavaScript (JIT-compiled code)', share: dso.get('[JIT]') ?? 0 },
    // Builtins (property loads through inline caches, calls, promises), the interpreter, the runtime, llhttp.
    { name: "V8's builtins, interpreter and runtime, and Node's C++", share: Math.max(0, (dso.get('node') ?? 0) - gc) },
  ];
  const named = parts.reduce((s, p) => s + p.share, 0);
  parts.push({ name: 'libc and the rest', share: Math.max(0, 100 - named) });
  return parts;
}

/** The functions with the most samples of their own (JavaScript ones named when the process ran with --perf-basic-prof). */
export function perfTop(file: string, n: number): Part[] {
  const out = perfReport(file, ['--no-children', '--sort', 'sym']);
  const top: Part[] = [];
  for (const line of out.split('\n')) {
    const hit = /^\s*([\d.]+)%\s+\[[k.]\]\s+(.+?)\s*$/.exec(line);
    if (hit) top.push({ name: hit[2].replace(/^JS:\*?/, '').replace(/file:\/\/\S*?\/(dist|node_modules)\//, '$1/'), share: Number(hit[1]) });
    if (top.length === n) break;
  }
  return top;
}

/** A markdown table of the parts, with µs per request when the CPU per request is known; then the top functions. */
export function perfTable(title: string, parts: Part[], microsPerRequest: number | undefined, top: Part[] = []): string {
  const rows = parts.map(
    (p) => `| ${p.name} | ${p.share.toFixed(1)} % | ${microsPerRequest === undefined ? '?' : ((p.share / 100) * microsPerRequest).toFixed(1)} |`,
  );
  const lines = [`| ${title} | share of its CPU | µs per request |`, '|---|--:|--:|', ...rows];
  if (top.length) lines.push('', `Most samples of their own: ${top.map((t) => `\`${t.name.slice(0, 80)}\` ${t.share.toFixed(1)} %`).join(', ')}.`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, micros] = process.argv.slice(2);
  if (!file) throw new Error('usage: bench/perf.ts <perf.data> [server µs per request]');
  console.log(perfTable(file, perfBreakdown(file), micros === undefined ? undefined : Number(micros), perfTop(file, 12)));
}
