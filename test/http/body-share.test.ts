// DESIGN §4: one tenant's large request bodies cannot crowd another tenant off the event loop
// (plugins/body-share.ts). Each process lets a tenant have at most BUDGET_BYTES of large bodies in
// process at once; a larger body runs alone; the rest of that tenant's large bodies wait, in order, with a
// queue cap (429) and a deadline (503); other tenants, and ordinary bodies, never wait. While another tenant
// is active, a large body's share is held as long again after its answer (at most half the time).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACTIVE_WINDOW_MS, BodyShare, BUDGET_BYTES, LARGE_BYTES } from '../../src/plugins/body-share.js';
import { newTenant, testApp, type Tenant } from '../helpers/app.js';

// A deadline well past what a loaded machine takes for these steps: held statements count against it.
// Opened before any test is declared, so that testApp's `after` hooks run when the file's tests have ended.
const t = await testApp({ QUERY_QUEUE_PER_TENANT: '16', QUERY_TIMEOUT_MS: '30000' });

const settled = () => new Promise((r) => setImmediate(r));

test('the share: a tenant passes its budget only alone; others never wait; order, queue cap and deadline', async () => {
  // A deadline far beyond the test's own steps, which a loaded machine may slow by hundreds of ms; the
  // deadline is checked below with a share of its own.
  const s = new BodyShare(100, 2, 60_000);
  const a1 = await s.acquire('A', 60);
  let a2: (() => void) | undefined;
  const a2p = s.acquire('A', 60).then((r) => (a2 = r));
  const b1 = await s.acquire('B', 60); // another tenant: at once
  await settled();
  // On its type, not its value: an assertion on `a2` itself would narrow it to `undefined` for the rest of the
  // test, as TypeScript cannot see the callback above assign it later.
  assert.equal(typeof a2, 'undefined', 'A past its budget waits');
  assert.deepEqual(s.state('A'), { bytes: 60, running: 1, waiting: 1 });
  // A third of A's waits too, and a fourth is refused (two may wait).
  let a3: (() => void) | undefined;
  const a3p = s.acquire('A', 10).then((r) => (a3 = r));
  await assert.rejects(s.acquire('A', 10), (e: any) => e.statusCode === 429 && e.code === 'too_many_concurrent_queries');
  a1();
  await a2p;
  await settled();
  // In order: the 10 bytes fit beside the 60 only now that the first 60 are back.
  assert.ok(a2);
  await a3p;
  assert.ok(a3);
  assert.deepEqual(s.state('A'), { bytes: 70, running: 2, waiting: 0 });
  a2!();
  a2!(); // handing back twice counts once
  a3!();
  b1();
  assert.deepEqual(s.state('A'), { bytes: 0, running: 0, waiting: 0 });

  // A body larger than the budget runs alone, and what comes after it waits, even small.
  const big = await s.acquire('A', 500);
  let small: (() => void) | undefined;
  const smallP = s.acquire('A', 5).then((r) => (small = r));
  await settled();
  assert.equal(small, undefined);
  big();
  (await smallP)();
  assert.deepEqual(s.state('A'), { bytes: 0, running: 0, waiting: 0 });
  // Past the deadline: 503 query_timeout, and the wait is forgotten.
  const short = new BodyShare(100, 2, 50);
  const hold = await short.acquire('A', 90);
  await assert.rejects(short.acquire('A', 90), (e: any) => e.statusCode === 503 && e.code === 'query_timeout' && e.headers?.['retry-after'] === '1');
  assert.deepEqual(short.state('A'), { bytes: 90, running: 1, waiting: 0 });
  hold();
});

test("while another tenant is active, a large body's share is handed back only as long again after its answer", async () => {
  const s = new BodyShare(100, 4, 60_000);
  s.seen('B');
  s.seen('A');
  const started = Date.now();
  const first = await s.acquire('A', 90);
  await new Promise((r) => setTimeout(r, 80));
  // B is active when A's answer goes: seen again now, since a loaded machine may run the 80 ms timer
  // late, past ACTIVE_WINDOW_MS after B was first seen (CI saw it fire after ~1.6 s).
  s.seen('B');
  first();
  const answered = Date.now();
  assert.deepEqual(s.state('A'), { bytes: 90, running: 1, waiting: 0 }, 'held after the answer');
  // B is not held by A's share.
  (await s.acquire('B', 90))();
  // A's next large body waits for the hold: about as long as the first took.
  (await s.acquire('A', 90))();
  const waited = Date.now() - answered;
  assert.ok(waited >= answered - started - 15, `A's next body waited ${waited} ms after a first of ${answered - started} ms`);
});

test('a tenant alone, or after the others have been quiet for ACTIVE_WINDOW_MS, hands its share back at once', async () => {
  for (const othersSeen of [undefined, Date.now() - ACTIVE_WINDOW_MS - 1]) {
    const s = new BodyShare(100, 4, 60_000);
    if (othersSeen !== undefined) s.seen('B', othersSeen);
    s.seen('A');
    const first = await s.acquire('A', 90);
    await new Promise((r) => setTimeout(r, 60));
    first();
    assert.deepEqual(s.state('A'), { bytes: 0, running: 0, waiting: 0 }, String(othersSeen));
  }
});

/** A search whose body is `kib` KiB: e-mail conditions of up to 1,000 values that match nothing. */
function largeSearch(kib: number) {
  const values = Array.from({ length: Math.ceil((kib * 1024) / 32) }, (_, i) => `nobody-${String(i).padStart(6, '0')}@example.invalid`);
  const conditions = [];
  for (let i = 0; i < values.length; i += 1000) conditions.push({ field: 'email', operator: 'in', value: values.slice(i, i + 1000) });
  const body = { filters: { operator: 'OR', conditions }, pageSize: 10 };
  assert.ok(JSON.stringify(body).length >= kib * 1024 * 0.95, 'the body has the size asked');
  return body;
}

/** Holds every read-pool statement of `tenantId` until the function returned is called. */
function holdReads(tenantId: string): { held: () => number; release: () => void } {
  const pool = t.database.readPool;
  assert.ok(pool, 'a read pool');
  const run = pool.run;
  let held = 0;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  pool.run = (tid, ...rest) => {
    if (tid !== tenantId) return run.call(pool, tid, ...rest);
    held++;
    return gate.then(() => run.call(pool, tid, ...rest));
  };
  return {
    held: () => held,
    release: () => {
      pool.run = run;
      open();
    },
  };
}

async function until(cond: () => boolean) {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), 'reached');
}

test('one tenant sending large searches at once has one in process; another tenant is answered meanwhile', async () => {
  const [a, b]: Tenant[] = [await newTenant(t), await newTenant(t)];
  await b.api.post('/contacts', { firstName: 'Bia', email: 'bia@b.test' });
  const body = largeSearch(100); // > BUDGET_BYTES: runs alone
  assert.ok(JSON.stringify(body).length > BUDGET_BYTES);
  const hold = holdReads(b.tenantId);
  try {
    const bs = [1, 2, 3].map(() => b.api.post('/contacts/search', body));
    await until(() => hold.held() >= 1 && t.app.bodyShare.state(b.tenantId).waiting === 2);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(hold.held(), 1, "one of B's searches reached its statement");
    assert.deepEqual(t.app.bodyShare.state(b.tenantId), { bytes: JSON.stringify(body).length, running: 1, waiting: 2 });
    // A's search of the same size, and A's ordinary writes, while B's wait.
    const ra = await a.api.post('/contacts/search', body);
    assert.equal(ra.status, 200);
    assert.equal((await a.api.post('/contacts', { firstName: 'Ana' })).status, 201);
    // B's own ordinary bodies do not wait behind its large ones either.
    assert.equal((await b.api.post('/contacts', { firstName: 'Bob' })).status, 201);
    assert.equal(t.app.bodyShare.state(b.tenantId).waiting, 2);
    hold.release();
    for (const r of await Promise.all(bs)) assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  } finally {
    hold.release();
  }
  // A was active meanwhile: each of B's shares is held as long again after its answer, then handed back.
  await until(() => t.app.bodyShare.state(b.tenantId).running === 0);
  assert.deepEqual(t.app.bodyShare.state(b.tenantId), { bytes: 0, running: 0, waiting: 0 }, 'every share handed back');
});

test('large bodies of one tenant run side by side up to the budget (20 KiB each: three at once)', async () => {
  const b = await newTenant(t);
  const body = largeSearch(20);
  const size = JSON.stringify(body).length;
  assert.ok(size >= LARGE_BYTES && 3 * size <= BUDGET_BYTES && 4 * size > BUDGET_BYTES, String(size));
  const hold = holdReads(b.tenantId);
  try {
    const bs = [1, 2, 3, 4].map(() => b.api.post('/contacts/search', body));
    await until(() => hold.held() >= 3 && t.app.bodyShare.state(b.tenantId).waiting === 1);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(hold.held(), 3);
    assert.deepEqual(t.app.bodyShare.state(b.tenantId), { bytes: 3 * size, running: 3, waiting: 1 });
    hold.release();
    for (const r of await Promise.all(bs)) assert.equal(r.status, 200);
  } finally {
    hold.release();
  }
});

test('a client that goes away hands its share back', async () => {
  const b = await newTenant(t);
  const body = largeSearch(100);
  const hold = holdReads(b.tenantId);
  const controller = new AbortController();
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const gone = fetch(`${address}/api/v1/contacts/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': b.apiKeys.full },
      body: JSON.stringify(body),
      signal: controller.signal,
    }).catch(() => 'aborted');
    await until(() => hold.held() >= 1);
    assert.equal(t.app.bodyShare.state(b.tenantId).running, 1);
    controller.abort();
    assert.equal(await gone, 'aborted');
    await until(() => t.app.bodyShare.state(b.tenantId).running === 0);
    hold.release();
    // The next one is not kept waiting by the one that went away.
    assert.equal((await b.api.post('/contacts/search', body)).status, 200);
  } finally {
    hold.release();
  }
});

test("over HTTP: while another tenant sends requests, a tenant's large search keeps its share as long again after its answer", async () => {
  const [a, b]: Tenant[] = [await newTenant(t), await newTenant(t)];
  const body = largeSearch(20);
  const hold = holdReads(b.tenantId);
  try {
    const search = b.api.post('/contacts/search', body);
    await until(() => hold.held() >= 1);
    // A's ordinary request makes A an active tenant (the auth hook tells the share).
    assert.equal((await a.api.get('/contacts?pageSize=1')).status, 200);
    await new Promise((r) => setTimeout(r, 100));
    hold.release();
    assert.equal((await search).status, 200);
    assert.equal(t.app.bodyShare.state(b.tenantId).running, 1, "B's share is held after its answer");
    await until(() => t.app.bodyShare.state(b.tenantId).running === 0);
  } finally {
    hold.release();
  }
});

test("a large write is not held after its answer, even while another tenant is active (a sync's batches)", async () => {
  const [a, b]: Tenant[] = [await newTenant(t), await newTenant(t)];
  const inputs = Array.from({ length: 100 }, (_, i) => ({ firstName: `Batch ${i} ${'x'.repeat(120)}`, email: `batch${i}@b.test` }));
  const size = JSON.stringify({ inputs }).length;
  assert.ok(size >= LARGE_BYTES, String(size));
  assert.equal((await a.api.get('/contacts?pageSize=1')).status, 200);
  const res = await b.api.post('/contacts/batch/create', { inputs });
  assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
  assert.deepEqual(t.app.bodyShare.state(b.tenantId), { bytes: 0, running: 0, waiting: 0 });
  // The share itself, asked not to hold: handed back at once.
  const s = new BodyShare(100, 4, 60_000);
  s.seen('B');
  s.seen('A');
  const first = await s.acquire('A', 90, false);
  await new Promise((r) => setTimeout(r, 30));
  first();
  assert.deepEqual(s.state('A'), { bytes: 0, running: 0, waiting: 0 });
});
