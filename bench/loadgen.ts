// The load generator of `npm run bench`, a process of its own so that its CPU is neither the bench's nor
// the server's: `node --import tsx bench/loadgen.ts '<LoadJob JSON>'` (bench/scenarios.ts). Reads the
// seeded ids and cursors from the job's data file, builds every request itself from the shared scenario
// list (a different id, page or body each turn, through autocannon's setupRequest), runs the warm-up, then
// each phase, and prints the events of bench/scenarios.ts `LoadEvent` on stdout, one JSON object a line.
// The bench (bench/run.ts) monitors the server's CPU and memory, and this process's CPU, from outside.
import { readFileSync } from 'node:fs';
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
  };
}

if (job.warmup > 0) await run(sc, job.phases[0].connections, job.warmup);
for (const [phase, p] of job.phases.entries()) {
  emit({ event: 'measuring', phase });
  emit({ event: 'result', phase, ...(await run(sc, p.connections, p.duration)) });
}
