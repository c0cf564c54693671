// Noisy-neighbour scenario (`--only noisy`): does one tenant running the most expensive search the API
// accepts hurt another tenant's ordinary traffic?
//
// - Tenant A (the main bench tenant): GET /contacts/:id and GET /contacts?pageSize=50, two autocannon
//   instances in parallel (4 connections each), every latency recorded (`response` events), so the
//   percentiles of the mix are exact.
// - Tenant B (bench/seed.ts `seedNoisyTenant`): POST /contacts/search in a loop from 8 concurrent clients
//   with a 50-condition filter three levels deep: `customProperties.<multi_select> notIn` and `tags notIn`
//   with 1 000 values each (9 of them: 9 000 values, under the 10 000-values cap) and `contains` on text
//   fields and a text custom property for the rest, all false for (almost) every row, so every row pays
//   for every condition.
// Phase 1 "A alone", then phase 2 "A with noisy B" (same A load while B runs). B's answers must each come
// within QUERY_TIMEOUT_MS + 1 s, as 200, 503 query_timeout or 429 too_many_concurrent_queries.
// autocannon and B's clients run in the bench process; the server is a separate process.
// @ts-expect-error autocannon ships no types
import autocannon from 'autocannon';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { TreeMonitor, round1, treeRssMiB } from './proc.js';
import type { NoisySeeded } from './seed.js';

export interface LatencyStats {
  requests: number;
  requestsPerSec: number;
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface PhaseReport {
  byId: LatencyStats;
  list: LatencyStats;
  /** A's whole mix (both endpoints). */
  all: LatencyStats;
  seconds: number;
  /** Server tree CPU (server + read processes) during the phase, in cores. */
  serverCpuShare?: number;
  serverCpuSampledShare?: number;
  serverCpuMicrosPerRequest?: number;
  rssMiBAfter?: number;
  peakRssMiB?: number;
  maxProcesses?: number;
  /** Whole machine busy (cores, of `cores`), and the bench process's own share (load generator + B's clients). */
  machine?: { busyCores: number; iowaitCores: number; cores: number; benchCores: number };
  /** MiB the server tree had read from storage (page-cache misses) in the phase. */
  storageReadMiB?: number;
  loadAvg: number[];
}

export interface NoisyReport {
  queryTimeoutMs: number;
  filter: {
    conditions: number;
    values: number;
    tagValues: number;
    multiValues: number;
    depth: number;
    bytes: number;
    /** Filters tried first and refused (400) or failed (5xx other than 503 query_timeout). */
    refused: { conditions: number; values: number; tagValues: number; multiValues: number; status: number; body: string }[];
    firstAnswer: { status: number; code?: string; ms: number };
    /** While the filters were tried (the first statements of a fresh server): storage reads and iowait. */
    probing: { seconds: number; storageReadMiB?: number; iowaitCores?: number };
  };
  aAlone: PhaseReport;
  aWithB: PhaseReport;
  b: {
    requests: number;
    byStatus: Record<string, number>;
    /** Slowest answer of each status (ms). */
    maxByStatus: Record<string, number>;
    p50: number;
    p99: number;
    max: number;
    boundMs: number;
    /** Answers slower than the bound, or unexpected statuses / connection errors. */
    overBound: number;
    unexpected: number;
    withinBound: boolean;
  };
  p99Ratio: number;
  p50Ratio: number;
  maxRatio: number;
}

interface Options {
  url: string;
  pid: number | undefined;
  aKey: string;
  aContactIds: string[];
  b: NoisySeeded;
  duration: number;
  warmup: number;
  queryTimeoutMs: number;
  log: (m: string) => void;
}

const BASE = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** A well-formed id that names nothing (prefix + 22 characters, like newId). */
const fakeId = (prefix: string, n: number) => {
  let s = '';
  let x = n * 2_654_435_761 + 12_345;
  for (let i = 0; i < 22; i++) {
    s += BASE[x % BASE.length];
    x = Math.floor(x / BASE.length) + (i + 1) * 7_919 + n;
  }
  return `${prefix}_${s}`;
};

type Cond = { field: string; operator: string; value?: unknown } | { operator: 'AND' | 'OR'; conditions: Cond[] };

/**
 * The expensive filter. `inConds` conditions with `inValues` values each (multi_select notIn first: the
 * O(rows × values) one today; then tags notIn), the rest `contains` conditions that match nothing. The
 * real values come last in each list (fakes first), so a row pays for every fake before finding its own.
 */
export function noisyFilter(b: NoisySeeded, conditions: number, inConds: number, tagValues: number, multiValues: number): { filter: Cond; values: number } {
  const prop = `customProperties.${b.multiSelectId}`;
  const ins: Cond[] = [];
  let values = 0;
  for (let k = 0; k < inConds; k++) {
    const multi = k % 9 < 5; // 5 multi_select : 4 tags
    const real = multi ? b.multiSelectOptions : b.tagIds;
    const inValues = multi ? multiValues : tagValues;
    const fakes = Array.from({ length: Math.max(0, inValues - real.length) }, (_, i) => (multi ? `nada-${k}-${i}` : fakeId('tag', k * 10_000 + i)));
    const value = [...fakes, ...real].slice(-inValues);
    values += value.length;
    ins.push({ field: multi ? prop : 'tags', operator: 'notIn', value });
  }
  // Plain columns only: a condition on a custom property costs 12 of the filter budget's 100.
  const TEXT = ['firstName', 'lastName', 'email', 'phone'];
  const containsCount = conditions - inConds;
  const contains: Cond[] = Array.from({ length: containsCount }, (_, i) => ({ field: TEXT[i % TEXT.length], operator: 'contains', value: `zq${i}xw` }));
  values += containsCount;
  // Depth 3: root OR [ contains…, OR [ contains…, tags notIn…, OR [ contains…, multi notIn… ] ] ].
  const multi = ins.filter((c) => 'field' in c && c.field === prop);
  const tags = ins.filter((c) => 'field' in c && c.field === 'tags');
  const third = Math.floor(contains.length / 3);
  const level3: Cond = { operator: 'OR', conditions: [...contains.slice(0, third), ...multi] };
  const level2: Cond = { operator: 'OR', conditions: [...contains.slice(third, 2 * third), level3, ...tags] };
  return { filter: { operator: 'OR', conditions: [...contains.slice(2 * third), level2] }, values };
}

function pct(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] * 10) / 10;
}

function stats(latencies: number[], seconds: number, non2xx: number, errors: number, timeouts: number): LatencyStats {
  const s = [...latencies].sort((x, y) => x - y);
  return { requests: s.length, requestsPerSec: Math.round(s.length / seconds), p50: pct(s, 0.5), p99: pct(s, 0.99), max: pct(s, 1), non2xx, errors, timeouts };
}

/** A's load for `duration` seconds: two autocannon instances in parallel (by id, page of 50). */
async function loadA(
  o: Options,
  duration: number,
  counter: { i: number },
): Promise<{ byId: LatencyStats; list: LatencyStats; all: LatencyStats; seconds: number }> {
  const headers = { 'x-api-key': o.aKey };
  const one = (next: () => string) => {
    const lat: number[] = [];
    let non2xx = 0;
    const tracker = autocannon({
      url: o.url,
      connections: 4,
      duration,
      headers,
      requests: [{ method: 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, path: next() }) }],
    });
    tracker.on('response', (_c: unknown, status: number, _b: number, ms: number) => {
      lat.push(ms);
      if (status < 200 || status >= 300) non2xx++;
    });
    return {
      lat,
      get non2xx() {
        return non2xx;
      },
      done: tracker as Promise<{ errors: number; timeouts: number }>,
    };
  };
  const ids = o.aContactIds;
  const started = performance.now();
  const a = one(() => `/api/v1/contacts/${ids[(counter.i++ * 7_919) % ids.length]}`);
  const b = one(() => `/api/v1/contacts?page=${1 + (counter.i++ % 20)}&pageSize=50`);
  const [ra, rb] = await Promise.all([a.done, b.done]);
  const seconds = (performance.now() - started) / 1000;
  return {
    byId: stats(a.lat, seconds, a.non2xx, ra.errors, ra.timeouts),
    list: stats(b.lat, seconds, b.non2xx, rb.errors, rb.timeouts),
    all: stats([...a.lat, ...b.lat], seconds, a.non2xx + b.non2xx, ra.errors + rb.errors, ra.timeouts + rb.timeouts),
    seconds,
  };
}

async function phase(o: Options, counter: { i: number }): Promise<PhaseReport> {
  const mon = new TreeMonitor(o.pid).start();
  const r = await loadA(o, o.duration, counter);
  mon.stop();
  const cpu = mon.cpuSeconds();
  const sampled = mon.sampledCpuSeconds();
  return {
    ...r,
    serverCpuShare: cpu !== undefined ? Number((cpu / r.seconds).toFixed(2)) : undefined,
    serverCpuSampledShare: sampled !== undefined ? Number((sampled / r.seconds).toFixed(2)) : undefined,
    serverCpuMicrosPerRequest: cpu !== undefined && r.all.requests > 0 ? Math.round((cpu / r.all.requests) * 1e6) : undefined,
    rssMiBAfter: round1(treeRssMiB(o.pid)),
    peakRssMiB: round1(mon.peakRssMiB),
    maxProcesses: mon.maxProcesses,
    machine: mon.machine(),
    storageReadMiB: mon.storageReadMiB(),
    loadAvg: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

interface BAnswer {
  status: number;
  code?: string;
  ms: number;
}

async function searchB(url: string, key: string, body: string, hardLimitMs: number): Promise<BAnswer> {
  const t0 = performance.now();
  try {
    const r = await fetch(`${url}/api/v1/contacts/search`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(hardLimitMs),
    });
    const text = await r.text();
    let code: string | undefined;
    if (r.status >= 400) {
      try {
        const j = JSON.parse(text);
        code = typeof j?.error === 'string' ? j.error : (j?.error?.code ?? j?.code);
      } catch {
        code = undefined;
      }
    }
    return { status: r.status, code: r.status === 400 || r.status === 500 ? `${code}: ${text.slice(0, 400)}` : code, ms: performance.now() - t0 };
  } catch (err) {
    return { status: 0, code: (err as Error).name, ms: performance.now() - t0 };
  }
}

export async function runNoisy(o: Options): Promise<NoisyReport> {
  const { log } = o;
  const boundMs = o.queryTimeoutMs + 1_000;
  const hardLimitMs = o.queryTimeoutMs + 30_000;

  // The heaviest filter the API accepts: every candidate is sent three times; refusals (400: the caps and the
  // complexity budget, 100 with 12 per tags / custom-property condition) are logged, and the accepted one
  // slowest by its median is B's (a first answer also pays for planning and for warming caches: on
  // PostgreSQL it chose a filter that then cost ~10 ms a request over one that costs ~100). [conditions, in/notIn conditions, values per tags notIn, values per multi_select notIn].
  const attempts: [number, number, number, number][] = [
    [50, 9, 1_000, 1_000],
    [12, 8, 1_000, 1_000],
    [50, 0, 0, 0],
    [40, 5, 1_000, 1_000],
    [10, 1, 100, 100],
  ];
  const refused: NoisyReport['filter']['refused'] = [];
  const probing = new TreeMonitor(o.pid).start();
  let chosen: { body: string; conditions: number; values: number; first: BAnswer; tagValues: number; multiValues: number } | undefined;
  for (const [conditions, inConds, tagValues, multiValues] of attempts) {
    const { filter, values } = noisyFilter(o.b, conditions, inConds, tagValues, multiValues);
    const body = JSON.stringify({ filters: filter, pageSize: 100 });
    const tries = [await searchB(o.url, o.b.key, body, hardLimitMs)];
    if (tries[0].status === 200) for (let k = 0; k < 2; k++) tries.push(await searchB(o.url, o.b.key, body, hardLimitMs));
    const first = tries.sort((x, y) => x.ms - y.ms)[Math.floor(tries.length / 2)];
    log(
      `  noisy: B's filter (${conditions} conditions, ${values} values: tags notIn ×${tagValues}, multi_select notIn ×${multiValues}; ${(body.length / 1024).toFixed(0)} KiB) → ${first.status}${first.code ? ` ${first.code}` : ''} in ${first.ms.toFixed(0)} ms`,
    );
    if (first.status === 400 || (first.status >= 500 && !(first.status === 503 && first.code === 'query_timeout'))) {
      if (first.status >= 500) log(`    SERVER ERROR for a filter the validator accepts (see the server log with BENCH_SERVER_LOG=1)`);
      refused.push({ conditions, values, tagValues, multiValues, status: first.status, body: first.code ?? '' });
      continue;
    }
    if (first.status !== 200 && !(first.status === 503 && first.code === 'query_timeout'))
      throw new Error(`B's search answered ${first.status} ${first.code ?? ''}`);
    if (!chosen || first.ms > chosen.first.ms) chosen = { body, conditions, values, first, tagValues, multiValues };
  }
  probing.stop();
  if (!chosen) throw new Error('every noisy filter was refused');
  const probed = { seconds: round1(probing.seconds()), storageReadMiB: probing.storageReadMiB(), iowaitCores: probing.machine()?.iowaitCores };
  log(
    `  noisy: filters tried in ${probed.seconds} s; the server read ${probed.storageReadMiB ?? '?'} MiB from storage, iowait ${probed.iowaitCores ?? '?'} cores`,
  );

  const counter = { i: 0 };
  if (o.warmup > 0) await loadA(o, o.warmup, counter);
  log(`  noisy: phase 1, A alone (${o.duration} s)…`);
  const aAlone = await phase(o, counter);
  log(
    `    A alone: p50 ${aAlone.all.p50} ms, p99 ${aAlone.all.p99} ms, max ${aAlone.all.max} ms (${aAlone.all.requestsPerSec} req/s; server+readers ${aAlone.serverCpuShare ?? '?'} cores; storage reads ${aAlone.storageReadMiB ?? '?'} MiB, iowait ${aAlone.machine?.iowaitCores ?? '?'} cores)`,
  );

  // Phase 2: B's 8 clients loop until A's load is over, then finish the request in flight.
  let stop = false;
  const answers: BAnswer[] = [];
  const body = chosen.body;
  const clients = Array.from({ length: 8 }, async () => {
    while (!stop) answers.push(await searchB(o.url, o.b.key, body, hardLimitMs));
  });
  log(`  noisy: phase 2, A with noisy B (${o.duration} s)…`);
  const aWithB = await phase(o, counter);
  stop = true;
  await Promise.all(clients);
  log(
    `    A with B: p50 ${aWithB.all.p50} ms, p99 ${aWithB.all.p99} ms, max ${aWithB.all.max} ms (${aWithB.all.requestsPerSec} req/s; server+readers ${aWithB.serverCpuShare ?? '?'} cores; storage reads ${aWithB.storageReadMiB ?? '?'} MiB, iowait ${aWithB.machine?.iowaitCores ?? '?'} cores)`,
  );

  const byStatus: Record<string, number> = {};
  const maxByStatus: Record<string, number> = {};
  let unexpected = 0;
  let overBound = 0;
  for (const a of answers) {
    const k = a.status === 0 ? `error ${a.code}` : a.code ? `${a.status} ${a.code.split(':')[0]}` : String(a.status);
    byStatus[k] = (byStatus[k] ?? 0) + 1;
    maxByStatus[k] = Math.max(maxByStatus[k] ?? 0, Math.round(a.ms));
    const ok = a.status === 200 || (a.status === 503 && a.code === 'query_timeout') || (a.status === 429 && a.code === 'too_many_concurrent_queries');
    if (!ok) unexpected++;
    if (a.ms > boundMs) overBound++;
  }
  const sortedB = answers.map((a) => a.ms).sort((x, y) => x - y);
  const b = {
    requests: answers.length,
    byStatus,
    maxByStatus,
    p50: pct(sortedB, 0.5),
    p99: pct(sortedB, 0.99),
    max: pct(sortedB, 1),
    boundMs,
    overBound,
    unexpected,
    withinBound: answers.length > 0 && overBound === 0 && unexpected === 0,
  };
  const ratio = (x: number, y: number) => (y > 0 ? Math.round((x / y) * 100) / 100 : NaN);
  return {
    queryTimeoutMs: o.queryTimeoutMs,
    filter: {
      conditions: chosen.conditions,
      values: chosen.values,
      tagValues: chosen.tagValues,
      multiValues: chosen.multiValues,
      depth: 3,
      bytes: body.length,
      refused,
      firstAnswer: chosen.first,
      probing: probed,
    },
    aAlone,
    aWithB,
    b,
    p99Ratio: ratio(aWithB.all.p99, aAlone.all.p99),
    p50Ratio: ratio(aWithB.all.p50, aAlone.all.p50),
    maxRatio: ratio(aWithB.all.max, aAlone.all.max),
  };
}
