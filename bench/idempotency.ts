// The price of an Idempotency-Key on POST /contacts (issue 8: under 15 % overhead), measured so that the
// noise of a shared machine cancels out: one server, one data set, and the two kinds of request taken in
// turns of SLICE seconds (plain, keyed, plain, keyed…) on the same connections, so that whatever else
// the machine does falls on both alike. Each turn records the server's requests, CPU (from /proc) and
// latencies; the first two turns are a warm-up.
//
// Reports, for each kind: req/s, server CPU µs per request, p50/p99; and the overhead of the keyed POST
// in throughput (1 − keyed/plain req/s) and in server CPU per request (keyed/plain − 1).
//
// Usage: npm run build && node --import tsx bench/idempotency.ts [--turns 20] [--slice 2] [--connections 50]
//        [--contacts 100000] [--only plain|keyed] [--profile <dir>] (the server's CPU profile, written at its exit)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createDatabase, migrate } from '../src/db/index.js';
import { treeCpuSeconds } from './proc.js';
import { openConnections, quantile } from './raw-http.js';
import { DEFAULT_COUNTS, seed } from './seed.js';
import { CLI, SERVE_NODE_ARGS, startProcess } from './serve.js';

const { values: args } = parseArgs({
  options: {
    turns: { type: 'string', default: '20' },
    slice: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    contacts: { type: 'string', default: String(DEFAULT_COUNTS.contacts) },
    // Only one kind (plain or keyed) in every turn, e.g. with --profile to see where one kind's time goes.
    only: { type: 'string' },
    profile: { type: 'string' },
  },
});
const TURNS = Number(args.turns);
const SLICE_MS = Number(args.slice) * 1000;
const CONNECTIONS = Number(args.connections);
const say = (s: string) => process.stderr.write(`${s}\n`);

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crm-idembench-'));
const contacts = Number(args.contacts);
const counts = { ...DEFAULT_COUNTS, contacts, companies: Math.max(100, contacts / 50), deals: 100, activities: 100 };
const config = loadConfig({ DATA_DIR: dataDir });
const database = createDatabase(config);
await migrate(database);
const seeded = await seed(database, counts, () => {}, path.join(dataDir, 'crm.db'));
await database.close();
say(`seeded ${contacts} contacts in ${seeded.seconds.toFixed(1)} s`);

const server = await startProcess(
  [...SERVE_NODE_ARGS, ...(args.profile ? ['--cpu-prof', `--cpu-prof-dir=${args.profile}`] : []), CLI, 'serve'],
  { DATA_DIR: dataDir, LOG_LEVEL: 'warn', WORKERS: 'false', CRM_NO_DEMO: 'true' },
  '/healthz',
);
const run = randomBytes(4).toString('hex');
type Kind = 'plain' | 'keyed';
interface Tally {
  requests: number;
  cpu: number;
  ms: number;
  micros: number[];
  non2xx: number;
}
const tally: Record<Kind, Tally> = {
  plain: { requests: 0, cpu: 0, ms: 0, micros: [], non2xx: 0 },
  keyed: { requests: 0, cpu: 0, ms: 0, micros: [], non2xx: 0 },
};
try {
  const conns = await openConnections(Number(new URL(server.url).port), CONNECTIONS);
  let kind: Kind = 'plain';
  let counting = false;
  let stop = false;
  let n = 0;
  const loops = conns.map(async (c) => {
    while (!stop) {
      const k = kind;
      const i = n++;
      const body = JSON.stringify({ firstName: 'Carga', lastName: `Teste ${i}`, email: `idem-${run}-${i}@bench.test`, score: i % 100 });
      const headers: Record<string, string> = { 'x-api-key': seeded.key, 'content-type': 'application/json' };
      if (k === 'keyed') headers['idempotency-key'] = `bench-${run}-${i}`;
      const t = performance.now();
      const r = await c.request('POST', '/api/v1/contacts', headers, body);
      // A request belongs to the turn it was sent in; one still in flight at a switch counts there.
      if (counting) {
        tally[k].micros.push((r.at - t) * 1000);
        if (r.status !== 201) tally[k].non2xx++;
      }
    }
  });
  for (let turn = 0; turn < TURNS + 2; turn++) {
    kind = args.only === 'plain' || args.only === 'keyed' ? args.only : turn % 2 === 0 ? 'plain' : 'keyed';
    counting = turn >= 2;
    const before = { n: tally[kind].micros.length, cpu: treeCpuSeconds(server.proc.pid)!, at: performance.now() };
    await new Promise((r) => setTimeout(r, SLICE_MS));
    if (counting) {
      tally[kind].requests += tally[kind].micros.length - before.n;
      tally[kind].cpu += treeCpuSeconds(server.proc.pid)! - before.cpu;
      tally[kind].ms += performance.now() - before.at;
    }
  }
  stop = true;
  await Promise.all(loops);
  for (const c of conns) c.close();

  const report = (k: Kind) => {
    const t = tally[k];
    const sorted = t.micros.sort((a, b) => a - b);
    const pct = (q: number) => (quantile(sorted, q) / 1000).toFixed(1);
    return { rps: (t.requests / t.ms) * 1000, cpuMicros: (t.cpu / t.requests) * 1e6, p50: pct(0.5), p99: pct(0.99), non2xx: t.non2xx };
  };
  if (args.only) {
    const r = report(args.only as Kind);
    console.log(`${args.only}: ${Math.round(r.rps)} req/s, server CPU ${Math.round(r.cpuMicros)} µs/req, p50 ${r.p50} ms, p99 ${r.p99} ms`);
  } else {
    const p = report('plain');
    const k = report('keyed');
    for (const [name, r] of [
      ['POST /contacts', p],
      ['POST /contacts + Idempotency-Key', k],
    ] as const) {
      console.log(
        `${name.padEnd(34)} ${Math.round(r.rps)} req/s, server CPU ${Math.round(r.cpuMicros)} µs/req, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}`,
      );
    }
    console.log(
      `Idempotency-Key overhead (${TURNS} alternating turns of ${SLICE_MS / 1000} s, ${CONNECTIONS} connections): throughput −${((1 - k.rps / p.rps) * 100).toFixed(1)} %, server CPU per request +${((k.cpuMicros / p.cpuMicros - 1) * 100).toFixed(1)} %; target < 15 %`,
    );
    if (p.non2xx || k.non2xx) process.exitCode = 1;
  }
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
