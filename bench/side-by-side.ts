// Compares builds over HTTP, side by side, on one machine at one time. `npm run bench -- --keep` leaves a seeded
// data dir with the bench's key; this copies its database once per build, starts each build's `crm serve` on its
// copy (with `npm start`'s Node options), and drives the chosen scenarios of bench/scenarios.ts (through
// bench/loadgen.ts, as `npm run bench` does) in short slices that alternate between the builds, round after round.
// It prints each build's median server CPU per request and req/s, and their ratios to the first build's.
//
// Why: this VM's speed drifts by ±25 % within minutes, so two `npm run bench` runs of two builds differ by more than
// most changes do. Slices of a few seconds, alternated, put both builds under the same drift; bench/inject.ts does
// the same in process, without the sockets, the load generator and the bytes written (a change to how a page is
// written shows only here).
//   node --import tsx bench/side-by-side.ts --data <kept dir> [--only "<name>,<name>"] [--rounds 8] [--seconds 3]
//        [--connections 50] [--no-fresh] <root> <root> …
// Every round starts each build's server anew (--no-fresh keeps one per build): two processes of the very same build,
// started one after the other, have run at 30 and at 36–37 µs of CPU per point read, each steady over 6 rounds
// (bench/RESULTS.md, 2026-11-29), so one process per build can set a build's median by the luck of its start.
// Each root is a checkout with its `dist/` built (`npx tsc`), e.g. a `git worktree` of the commit before. Read
// scenarios only make sense (each build's writes would grow its own copy).
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { drive } from './drive.js';
import { treeMemory, treeSum } from './proc.js';
import { scenarios, type ScenarioData } from './scenarios.js';
import { SERVE_NODE_ARGS, serverHeapMiB, startProcess, type Proc } from './serve.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    data: { type: 'string' },
    only: { type: 'string', default: 'GET /contacts (page of 50)' },
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    fresh: { type: 'boolean', default: true },
  },
});
const roots = positionals.map((r) => path.resolve(r));
if (!values.data || roots.length < 2) throw new Error('usage: side-by-side.ts --data <dir kept by `npm run bench -- --keep`> <root> <root> …');
const data = path.resolve(values.data);
const key = readFileSync(path.join(data, 'bench-key'), 'utf8').trim();
// The realistic tenant's key, kept when its scenarios ran (bench/realistic.ts).
const realisticKeyFile = path.join(data, 'bench-key-realistic');
const realisticKey = existsSync(realisticKeyFile) ? readFileSync(realisticKeyFile, 'utf8').trim() : undefined;
const dataFile = path.join(data, 'scenario-data.json');
const wanted = values.only.split(',');
const chosen = scenarios(JSON.parse(readFileSync(dataFile, 'utf8')) as ScenarioData).filter(
  (sc) => sc.target === 'api' && wanted.some((w) => sc.name.includes(w)) && (sc.tenant !== 'realistic' || realisticKey !== undefined),
);
if (chosen.length === 0) throw new Error(`no scenario of the service's matches --only ${values.only}`);
const rounds = Number(values.rounds);
const phase = { connections: Number(values.connections), duration: Number(values.seconds) };
const log = (m: string) => process.stderr.write(m + '\n');

const servers: { root: string; dir: string; proc: Proc }[] = [];
const serve = (root: string, dir: string) =>
  startProcess(
    [...SERVE_NODE_ARGS, path.join(root, 'dist/cli/index.js'), 'serve'],
    { DATA_DIR: dir, LOG_LEVEL: 'warn', WORKERS: 'false', CRM_NO_DEMO: 'true' },
    '/healthz',
  );
try {
  for (const root of roots) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-side-'));
    // The WAL holds committed pages too: copied with the database, as the kept server left them.
    for (const f of ['crm.db', 'crm.db-wal', 'secret.key']) if (existsSync(path.join(data, f))) copyFileSync(path.join(data, f), path.join(dir, f));
    servers.push({ root, dir, proc: await serve(root, dir) });
  }
  const cpu = new Map<string, number[]>();
  const rps = new Map<string, number[]>();
  const push = (m: Map<string, number[]>, k: string, v: number | undefined) => void (v !== undefined && (m.get(k) ?? m.set(k, []).get(k)!).push(v));
  for (let round = 0; round < rounds; round++) {
    if (values.fresh && round > 0) {
      for (const s of servers) {
        await s.proc.stop();
        s.proc = await serve(s.root, s.dir);
      }
    }
    for (const sc of chosen) {
      // The order alternates, so that neither build always runs first.
      for (const s of round % 2 ? [...servers].reverse() : servers) {
        const [r] = await drive(s.proc, sc, sc.tenant === 'realistic' ? realisticKey! : key, dataFile, [phase], round === 0 || values.fresh ? 1 : 0);
        if (r.non2xx > 0) throw new Error(`${sc.name} on ${s.root}: ${r.non2xx} answers not 2xx (${JSON.stringify(r.statusCodes)})`);
        push(cpu, `${sc.name}\u0000${s.root}`, r.serverCpuMicrosPerRequest);
        push(rps, `${sc.name}\u0000${s.root}`, r.requestsPerSec);
        log(`round ${round + 1} ${sc.name} ${s.root}: ${r.requestsPerSec} req/s, ${r.serverCpuMicrosPerRequest} µs of server CPU per request`);
      }
    }
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  console.log(`\n${rounds} rounds of ${phase.duration} s at ${phase.connections} connections per build and scenario.\n`);
  console.log('| scenario | build | server µs/request (median) | ÷ first build | req/s (median) | ÷ first build | µs/request by round |');
  console.log('|---|---|--:|--:|--:|--:|---|');
  for (const sc of chosen) {
    const at = (root: string) => ({ cpu: cpu.get(`${sc.name}\u0000${root}`) ?? [], rps: rps.get(`${sc.name}\u0000${root}`) ?? [] });
    const first = at(roots[0]);
    for (const root of roots) {
      const m = at(root);
      const ratio = (x: number[], y: number[]) => (median(y) > 0 ? (median(x) / median(y)).toFixed(3) : '?');
      console.log(
        `| ${sc.name} | ${root} | ${median(m.cpu).toFixed(0)} | ${ratio(m.cpu, first.cpu)} | ${median(m.rps).toFixed(0)} | ${ratio(m.rps, first.rps)} | ${m.cpu.join(', ')} |`,
      );
    }
  }
  // What each build holds after the same requests: the tree's memory, and V8's heap and memory outside it (Buffers'
  // backing stores) as the server's /metrics tells them.
  console.log('\n| build | server anon MiB | tree Pss MiB | V8 heap used MiB | external MiB (/metrics) |');
  console.log('|---|--:|--:|--:|--:|');
  for (const s of servers) {
    const procs = treeMemory(s.proc.proc.pid);
    const heap = await serverHeapMiB(s.proc.url);
    console.log(`| ${s.root} | ${procs[0]?.anon ?? '?'} | ${treeSum(procs, 'pss')} | ${heap.heapUsed} | ${heap.external} |`);
  }
} finally {
  for (const s of servers) {
    await s.proc.stop();
    rmSync(s.dir, { recursive: true, force: true });
  }
}
