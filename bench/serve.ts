// The processes a bench drives: the real `crm serve` (or the ceiling) on a free port, waited for until it
// answers, and `crm setup apply` for a tenant of its own. Shared by run.ts, longpoll.ts and retention.ts.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { treeCpuSeconds } from './proc.js';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
export const CLI = path.join(ROOT, 'dist/cli/index.js');

/**
 * The Node options `npm start` runs the server with (package.json's `start`: `node <options> dist/cli/index.js
 * serve`), so that the benches measure the server as it is started.
 */
export const SERVE_NODE_ARGS: string[] = (() => {
  const start: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;
  const words = start.split(/\s+/);
  if (words[0] !== 'node' || !words.includes('dist/cli/index.js')) throw new Error(`package.json start is not \`node … dist/cli/index.js serve\`: ${start}`);
  return words.slice(1, words.indexOf('dist/cli/index.js'));
})();

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export interface Proc {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * `node <argv>` on a free PORT, once GET `health` answers and its process tree has gone quiet (waitQuiet);
 * BENCH_SERVER_LOG=1 shows its stdout and stderr.
 */
export async function startProcess(argv: string[], env: Record<string, string>, health: string): Promise<Proc> {
  const port = await freePort();
  const proc = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', process.env.BENCH_SERVER_LOG ? 'inherit' : 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => {
    stderr += d;
    if (process.env.BENCH_SERVER_LOG) process.stderr.write(d);
  });
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
  await waitQuiet(proc.pid!);
  return {
    url,
    proc,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Waits until the tree of `pid` uses under a tenth of a core over 300 ms (at most 60 s). `crm serve` measures its
 * indexes for the planner once it listens (src/cli/serve.ts): at 1,000,000 contacts that keeps a read process busy
 * for seconds, and the first scenario counted it as its own CPU (a read process held 15.7 % of the tree's samples
 * during the deals filter run first; bench/RESULTS.md, 2026-11-29).
 */
async function waitQuiet(pid: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  let before = treeCpuSeconds(pid);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 300));
    const now = treeCpuSeconds(pid);
    if (now === undefined || before === undefined || now - before < 0.03) return;
    before = now;
  }
}

/** The server's V8 heap (used, of total) and memory outside it (Buffers' backing stores), in MiB. */
export interface ServerHeap {
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** The server's ServerHeap, as its /metrics tells. */
export async function serverHeapMiB(url: string): Promise<ServerHeap> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const metric = (name: string) => Math.round((Number(new RegExp(`^crm_nodejs_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]) / 2 ** 20) * 10) / 10;
  return { heapUsed: metric('heap_size_used_bytes'), heapTotal: metric('heap_size_total_bytes'), external: metric('external_memory_bytes') };
}

/** `crm setup apply` of `setup` (written into `dir`): the tenant id and its keys by ref. */
export function crmSetup(env: Record<string, string>, dir: string, setup: unknown): { tenantId: string; apiKeys: Record<string, string> } {
  const file = path.join(dir, 'setup.json');
  writeFileSync(file, JSON.stringify(setup));
  const r = spawnSync(process.execPath, [CLI, 'setup', 'apply', file], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stdout + r.stderr);
  return JSON.parse(r.stdout);
}
