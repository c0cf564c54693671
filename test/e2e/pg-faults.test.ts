// test: alone (a PostgreSQL cluster of its own under load, judged by the clock; see scripts/test.mjs)
// PostgreSQL's faults under load (CONTRACT B.2, DESIGN §4): a database that is frozen (SIGSTOP), stopped or
// restarting answers 503 `database_unavailable` with Retry-After within about a second, `/readyz` included —
// never a hang, never a 500 — and the service recovers by itself within 5 s of the database's return, with
// no acknowledged write lost. The cluster is the test's own (helpers/pg-cluster.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli, IS_PG, processEnv, startServer, tmpDataDir, type RunningServer } from '../helpers/server.js';
import { startTestCluster, testClusterUnavailable, type TestCluster } from '../helpers/pg-cluster.js';
import { sampleSetup, sleep } from './cli.helpers.js';

// The cluster is the test's own, whatever the pass; it runs once, on the PostgreSQL pass.
const skip = IS_PG ? (testClusterUnavailable() ?? false) : 'PostgreSQL faults run on the PostgreSQL pass';
/** A request started during a fault must be answered within this (the contract's second, plus a loaded CI's margin). */
const ANSWER_WITHIN_MS = 1_500;
const RECOVER_WITHIN_MS = 5_000;

interface Answer {
  what: string;
  startedAt: number;
  ms: number;
  status: number | 'hang' | 'network';
  error?: string;
  retryAfter?: string | null;
  id?: string;
}

let cluster: TestCluster;
let server: RunningServer;
let key = '';
const acknowledged: string[] = [];

before(async () => {
  if (skip) return;
  cluster = await startTestCluster();
  const dataDir = tmpDataDir();
  const env = processEnv(dataDir, { DATABASE_URL: cluster.url, REDIS_URL: '', WORKERS: 'true', QUERY_TIMEOUT_MS: '3000' });
  const file = path.join(dataDir, 'setup.json');
  writeFileSync(file, JSON.stringify(sampleSetup('Faults')));
  const setup = cli(['setup', 'apply', file], env);
  assert.equal(setup.status, 0, setup.stdout + setup.stderr);
  key = setup.json.apiKeys.full;
  server = await startServer(env);
});

after(async () => {
  if (skip) return;
  await server?.kill();
  await cluster?.destroy();
});

/** The server's error lines (a 500's cause), for an assertion's message. */
const serverErrors = () =>
  server
    .stderr()
    .split('\n')
    .filter((l) => l.includes('"level":50'))
    .join('\n')
    .slice(-4000);

let seq = 0;
async function call(what: string, method: string, url: string, body?: unknown): Promise<Answer> {
  const startedAt = Date.now();
  try {
    const r = await fetch(server.url + url, {
      method,
      // Writes carry an Idempotency-Key, as the SDK's do: the idempotency layer must fail as fast as the rest.
      headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json', 'idempotency-key': `fault-${++seq}-${Date.now()}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await r.text();
    const json = text ? JSON.parse(text) : {};
    const a: Answer = {
      what,
      startedAt,
      ms: Date.now() - startedAt,
      status: r.status,
      error: json.error,
      retryAfter: r.headers.get('retry-after'),
      id: json.id,
    };
    if (what === 'create' && r.status === 201) acknowledged.push(json.id);
    return a;
  } catch (err) {
    const hang = (err as Error).name === 'TimeoutError';
    return { what, startedAt, ms: Date.now() - startedAt, status: hang ? 'hang' : 'network', error: String(err) };
  }
}

/** One request of the mix: readiness, a point read, a create, a search (the read pool). */
function oneOf(n: number, someId: string): Promise<Answer> {
  switch (n % 4) {
    case 0:
      return call('readyz', 'GET', '/readyz');
    case 1:
      return call('read', 'GET', `/api/v1/contacts/${someId}`);
    case 2:
      return call('create', 'POST', '/api/v1/contacts', { firstName: 'Load', lastName: String(++seq), email: `load${seq}.${Date.now()}@faults.test` });
    default:
      return call('search', 'POST', '/api/v1/contacts/search', {
        filters: { operator: 'AND', conditions: [{ field: 'lastName', operator: 'contains', value: '1' }] },
      });
  }
}

/** `workers` loops calling the mix until `stop()`; every answer is kept. */
function load(someId: string, workers = 6): { answers: Answer[]; stop(): Promise<void> } {
  const answers: Answer[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let n = w; running; n += workers) {
      answers.push(await oneOf(n, someId));
      await sleep(20);
    }
  });
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

function summary(label: string, answers: Answer[]): string {
  const by = new Map<string, number>();
  for (const a of answers)
    by.set(`${a.what} ${a.status}${a.error ? ' ' + a.error : ''}`, (by.get(`${a.what} ${a.status}${a.error ? ' ' + a.error : ''}`) ?? 0) + 1);
  const max = Math.max(0, ...answers.map((a) => a.ms));
  return `${label}: ${answers.length} answers, slowest ${max} ms; ${[...by].map(([k, v]) => `${k} ×${v}`).join(', ')}`;
}

/** Answers to requests started while the database was unavailable: fast, 503 database_unavailable (or a success). */
function assertFailedFast(label: string, answers: Answer[]): void {
  assert.ok(answers.length > 0, `${label}: no request was made`);
  for (const a of answers) {
    assert.notEqual(a.status, 'hang', `${label}: ${a.what} hung`);
    assert.notEqual(a.status, 500, `${label}: ${a.what} answered 500`);
    assert.ok(a.ms <= ANSWER_WITHIN_MS, `${label}: ${a.what} took ${a.ms} ms (${a.status} ${a.error ?? ''})`);
    if (a.status === 503 && a.what !== 'readyz') {
      assert.equal(a.error, 'database_unavailable', `${label}: ${a.what} 503 ${a.error}`);
      assert.ok(a.retryAfter, `${label}: ${a.what} 503 without Retry-After`);
    }
    if (typeof a.status === 'number' && a.status >= 400 && a.status !== 503) assert.fail(`${label}: ${a.what} answered ${a.status} ${a.error}`);
  }
  assert.ok(
    answers.some((a) => a.status === 503 && a.what === 'readyz'),
    `${label}: /readyz never said 503`,
  );
}

/** Polls a create until it succeeds; resolves the ms since `since`. */
async function recovered(since: number): Promise<number> {
  for (;;) {
    const a = await call('create', 'POST', '/api/v1/contacts', { firstName: 'Back', lastName: 'Again', email: `back.${Date.now()}.${++seq}@faults.test` });
    const ready = await call('readyz', 'GET', '/readyz');
    if (a.status === 201 && ready.status === 200) return Date.now() - since;
    if (Date.now() - since > 20_000)
      throw new Error(`not recovered after 20 s: ${a.status} ${a.error}, readyz ${ready.status}; server: ${server.stderr().slice(-3000)}`);
    await sleep(50);
  }
}

test('PostgreSQL frozen, then stopped and restarted, under load: fast 503s, recovery within 5 s, no write lost', { skip, timeout: 120_000 }, async () => {
  const first = await call('create', 'POST', '/api/v1/contacts', { firstName: 'First', lastName: 'One', email: 'first@faults.test' });
  assert.equal(first.status, 201);
  const someId = first.id!;

  // Healthy: the mix answers.
  const warm = load(someId);
  await sleep(1_000);
  await warm.stop();
  assert.ok(
    warm.answers.every((a) => a.status === 200 || a.status === 201),
    summary('healthy', warm.answers),
  );

  // Frozen: every process of the cluster stopped by SIGSTOP.
  const frozenLoad = load(someId);
  await sleep(300);
  const frozenAt = Date.now();
  cluster.freeze();
  await sleep(4_000);
  cluster.thaw();
  const thawedAt = Date.now();
  await frozenLoad.stop();
  // Requests started from 100 ms after the freeze to the thaw (the ones before may have had their answer).
  const duringFreeze = frozenLoad.answers.filter((a) => a.startedAt >= frozenAt + 100 && a.startedAt + a.ms < thawedAt);
  const afterFreeze = await recovered(thawedAt);
  console.log(summary('frozen', duringFreeze), `; recovered ${afterFreeze} ms after the thaw`);
  assertFailedFast('frozen', duringFreeze);
  // Also the requests in flight at the freeze: answered within the same bound, never hung.
  console.log(summary('frozen, with the requests in flight at the freeze', frozenLoad.answers));
  for (const a of frozenLoad.answers) {
    assert.ok(a.status !== 'hang' && a.status !== 500, `frozen: ${a.what} ${a.status} ${a.error}; server: ${serverErrors()}`);
    assert.ok(a.ms <= ANSWER_WITHIN_MS, `frozen: ${a.what} in flight at the freeze took ${a.ms} ms`);
  }
  assert.ok(afterFreeze <= RECOVER_WITHIN_MS, `recovered ${afterFreeze} ms after the thaw`);

  // Stopped (fast shutdown: sessions terminated, connections refused), then started again.
  const mark = (what: string) => process.env.FAULTS_TRACE && console.log(`# ${new Date().toISOString()} ${what}`);
  mark('stopping');
  const stoppedLoad = load(someId);
  await sleep(300);
  const stoppedAt = Date.now();
  await cluster.stop();
  mark('stopped');
  await sleep(3_000);
  const restartAt = Date.now();
  await cluster.start();
  mark('started');
  const startedAt = Date.now();
  await stoppedLoad.stop();
  mark('load stopped');
  const whileStopped = stoppedLoad.answers.filter((a) => a.startedAt >= stoppedAt + 100 && a.startedAt + a.ms < restartAt);
  const afterRestart = await recovered(startedAt);
  console.log(summary('stopped', whileStopped), `; restart took ${startedAt - restartAt} ms; recovered ${afterRestart} ms after it accepted sessions`);
  assertFailedFast('stopped', whileStopped);
  for (const a of stoppedLoad.answers)
    assert.ok(a.status !== 'hang' && a.status !== 500, `stopped: ${a.what} ${a.status} ${a.error}; server: ${serverErrors()}`);
  assert.ok(afterRestart <= RECOVER_WITHIN_MS, `recovered ${afterRestart} ms after the restart`);

  // No acknowledged write lost: every 201 is there.
  let lost = 0;
  for (const id of acknowledged) {
    const r = await call('check', 'GET', `/api/v1/contacts/${id}`);
    if (r.status !== 200) lost++;
  }
  console.log(`acknowledged creates: ${acknowledged.length}, lost: ${lost}`);
  assert.equal(lost, 0);
});
