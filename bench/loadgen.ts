// The load generator of `npm run bench`, a process of its own so that its CPU is neither the bench's nor
// the server's: `node --import tsx bench/loadgen.ts '<LoadJob JSON>'` (bench/scenarios.ts). Reads the
// seeded ids and cursors from the job's data file, builds every request itself from the shared scenario
// list (a different id, page or body each turn, through autocannon's setupRequest), runs the warm-up, then
// each phase (once the bench says `go` on stdin), and prints the events of bench/scenarios.ts `LoadEvent` on
// stdout, one JSON object a line.
// The bench (bench/run.ts) monitors the server's CPU and memory, and this process's CPU, from outside.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
// @ts-expect-error autocannon ships no types
import autocannon from 'autocannon';
import { scenarios, type LoadEvent, type LoadJob, type LoadResult, type Scenario, type ScenarioData } from './scenarios.js';

const job = JSON.parse(process.argv[2]) as LoadJob;
const data = JSON.parse(readFileSync(job.dataFile, 'utf8')) as ScenarioData;
const sc = scenarios(data).find((s) => s.name === job.scenario);
if (!sc) throw new Error(`loadgen: no scenario named "${job.scenario}"`);
const emit = (e: LoadEvent) => process.stdout.write(JSON.stringify(e) + '\n');

/** The percentile q of sorted latencies, to 0.01 ms. */
function pct(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] * 100) / 100;
}

// One counter across the warm-up and the phases: no request repeats an id, e-mail or key of an earlier one.
let counter = 0;

async function run(scenario: Scenario, connections: number, duration: number): Promise<LoadResult> {
  // Every 2xx latency, as autocannon's histogram keeps only whole milliseconds (a point read at one
  // connection takes less than one).
  const latencies: number[] = [];
  const tracker = autocannon({
    url: job.url,
    connections,
    duration,
    headers: { 'x-api-key': job.key, 'content-type': 'application/json' },
    requests: [
      {
        method: scenario.method,
        setupRequest: (req: Record<string, unknown>) => {
          const { path: p, body, headers } = scenario.next(counter++);
          const out = { ...req, path: p, method: scenario.method, body: body === undefined ? undefined : JSON.stringify(body) };
          return headers ? { ...out, headers: { ...(req.headers as Record<string, string>), ...headers } } : out;
        },
      },
    ],
  });
  tracker.on('response', (_c: unknown, status: number, _b: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await tracker;
  const sorted = Float64Array.from(latencies).sort();
  const codes: Record<string, number> = {};
  for (const [k, v] of Object.entries(result.statusCodeStats ?? {})) codes[k] = (v as { count: number }).count;
  return {
    requestsPerSec: Math.round(result.requests.average),
    total: result.requests.total,
    latencyP50: pct(sorted, 0.5),
    latencyP99: pct(sorted, 0.99),
    latencyMax: pct(sorted, 1),
    latencyAvg: sorted.length ? Math.round((sorted.reduce((a, b) => a + b, 0) / sorted.length) * 100) / 100 : 0,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: codes,
    latencies: job.latencies ? Array.from(sorted, (x) => Math.round(x * 1000) / 1000) : undefined,
  };
}

// The bench's `go` for each phase, one line each (drive.ts sends it once every generator is ready).
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
/** A phase with no connections for this generator (several generators, fewer connections): nothing sent. */
const idle: LoadResult = {
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
  latencies: job.latencies ? [] : undefined,
};
if (job.warmup > 0 && job.phases[0].connections > 0) await run(sc, job.phases[0].connections, job.warmup);
for (const [phase, p] of job.phases.entries()) {
  emit({ event: 'ready', phase });
  const go = await lines.next();
  if (go.done) throw new Error('loadgen: stdin closed before the phase started');
  if (p.connections === 0) await new Promise((r) => setTimeout(r, p.duration * 1000));
  emit({ event: 'result', phase, ...(p.connections > 0 ? await run(sc, p.connections, p.duration) : idle) });
}
process.stdin.destroy();
