import { test } from 'node:test';
import { sql } from 'kysely';
import assert from 'node:assert/strict';
import { DIALECT, newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { deferWrite, withTx, type DeferredWrites } from '../../src/db/index.js';
import { emitEvent } from '../../src/events/outbox.js';

// CONTRACT C.4: the event log (GET /events), its order ("never miss an event") and long-polling.
const t = await testApp({ EVENT_WAIT_PER_KEY: '10' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function contact(api: Client, i: number | string): Promise<any> {
  const r = await api.post('/contacts', { firstName: `Ev${i}`, lastName: 'Log', email: `ev${i}-${Math.random().toString(36).slice(2, 8)}@events.test` });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

async function storedPayloads(tenantId: string): Promise<Map<string, any>> {
  const rows = await t.database.db.selectFrom('events').select(['id', 'payload']).where('tenant_id', '=', tenantId).execute();
  return new Map(rows.map((r) => [r.id, JSON.parse(r.payload)]));
}

/** GET `url`; every committed event is readable at once, on both databases (db/event-log.ts). */
async function readable(api: Client, url: string, min: number): Promise<any> {
  const r = await api.get(url);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.ok(r.body.data.length >= min, `${r.body.data.length} events, expected at least ${min}`);
  return r;
}

async function allEvents(api: Client, query = '', min = 0): Promise<any[]> {
  return (await readable(api, `/events?limit=1000${query}`, min)).body.data;
}

test("GET /events: the tenant's events oldest first, each { id, type, occurredAt, data } with data exactly as the webhook body carries it", async () => {
  const ten = await newTenant(t);
  const a = await contact(ten.api, 'a');
  const patched = await ten.api.patch(`/contacts/${a.id}`, { lastName: 'Changed' });
  assert.equal(patched.status, 200);
  const b = await contact(ten.api, 'b');

  const r = await readable(ten.api, '/events', 3);
  assert.deepEqual(
    r.body.data.map((e: any) => [e.type, e.data.contact?.id]),
    [
      ['contact.created', a.id],
      ['contact.updated', a.id],
      ['contact.created', b.id],
    ],
  );
  const stored = await storedPayloads(ten.tenantId);
  for (const e of r.body.data) {
    assert.deepEqual(Object.keys(e).sort(), ['data', 'id', 'occurredAt', 'type']);
    const body = stored.get(e.id);
    assert.deepEqual(e.data, body.data, "data is the webhook body's data");
    assert.equal(e.occurredAt, body.timestamp);
    assert.equal(e.type, body.event);
  }
  assert.deepEqual(r.body.pagination, { page: null, pageSize: 100, total: null, totalPages: null, hasNext: false, hasPrev: null, nextCursor: null });
});

test("GET /events needs events:read (* covers it); another tenant's events are never listed, nor webhook test pings", async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push({ ref: 'ev', name: 'Events', user: 'ana', scopes: ['events:read'] });
  const ten = await newTenant(t, setup);
  const other = await newTenant(t);
  await contact(ten.api, 'own');
  await contact(other.api, 'other');
  // A webhook.test event shares the table (recorded by POST /webhooks/:id/test); it is no change of data.
  await t.database.db
    .insertInto('events')
    .values({
      tenant_id: ten.tenantId,
      id: 'evt_testping',
      type: 'webhook.test',
      payload: '{"event":"webhook.test","data":{}}',
      created_at: new Date().toISOString(),
    })
    .execute();

  assert.equal((await ten.as('ro').get('/events')).status, 403);
  const viaScope = await readable(ten.as('ev'), '/events', 1);
  assert.deepEqual(
    viaScope.body.data.map((e: any) => e.type),
    ['contact.created'],
  );
  assert.deepEqual(
    (await ten.api.get('/events')).body.data.map((e: any) => e.data.contact.firstName),
    ['Evown'],
  );
  // Another tenant's event id as `after` is unknown here: like any filter naming a missing id, it matches nothing (B.2).
  const theirs = (await readable(other.api, '/events', 1)).body.data[0].id;
  for (const url of [`/events?after=${theirs}`, '/events?after=evt_testping', `/events?after=${theirs}&wait=5`]) {
    const started = Date.now();
    const r = await ten.api.get(url);
    assert.equal(r.status, 200, url);
    assert.deepEqual(r.body.data, [], url);
    assert.equal(r.body.pagination.hasNext, false, url);
    assert.equal(r.body.pagination.nextCursor, null, url);
    assert.ok(Date.now() - started < 2_000, `${url}: answered at once`);
  }
});

test('types filters by event key; an unknown key is 400 validation_failed naming types', async () => {
  const ten = await newTenant(t);
  const a = await contact(ten.api, 'x');
  await ten.api.patch(`/contacts/${a.id}`, { lastName: 'Y' });
  await contact(ten.api, 'z');
  assert.deepEqual(
    (await allEvents(ten.api, '&types=contact.updated', 1)).map((e) => e.type),
    ['contact.updated'],
  );
  assert.deepEqual(
    (await allEvents(ten.api, '&types=contact.created,%20contact.updated')).map((e) => e.type),
    ['contact.created', 'contact.updated', 'contact.created'],
  );
  assert.deepEqual(await allEvents(ten.api, '&types=deal.won'), []);
  for (const bad of ['contact.nope', 'contact.created,bogus', ',', 'webhook.test']) {
    const r = await ten.api.get(`/events?types=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(r.body.details[0].field, 'types');
  }
});

test('after: strictly later events; limit (default 100, max 1000), pageSize alias; cursor paging', async () => {
  const ten = await newTenant(t);
  for (let i = 0; i < 7; i++) await contact(ten.api, i);
  const all = await allEvents(ten.api, '', 7);
  assert.equal(all.length, 7);
  const after2 = await ten.api.get(`/events?after=${all[2].id}`);
  assert.deepEqual(
    after2.body.data.map((e: any) => e.id),
    all.slice(3).map((e) => e.id),
  );
  assert.deepEqual((await ten.api.get(`/events?after=${all[6].id}`)).body.data, []);
  const unknown = await ten.api.get('/events?after=evt_nope');
  assert.equal(unknown.status, 200);
  assert.deepEqual(unknown.body.data, []);

  for (const q of ['limit=0', 'limit=1001', 'pageSize=1001', 'limit=2&pageSize=3', 'wait=31', 'wait=-1', 'wait=abc', 'page=1', 'bogus=1']) {
    const r = await ten.api.get(`/events?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed', q);
  }
  assert.equal((await ten.api.get('/events?limit=1000')).status, 200);
  assert.equal((await ten.api.get('/events?limit=3&pageSize=3')).body.data.length, 3);
  const viaAlias = await ten.api.get('/events?pageSize=2');
  assert.equal(viaAlias.body.data.length, 2);
  assert.equal(viaAlias.body.pagination.pageSize, 2);

  // Cursor walk: after the first two, in pages of 2, with the same other parameters.
  const seen: string[] = [];
  let r = await ten.api.get(`/events?after=${all[1].id}&limit=2`);
  for (;;) {
    assert.equal(r.status, 200, JSON.stringify(r.body));
    seen.push(...r.body.data.map((e: any) => e.id));
    assert.equal(r.body.pagination.hasNext, r.body.pagination.nextCursor !== null);
    if (!r.body.pagination.nextCursor) break;
    r = await ten.api.get(`/events?after=${all[1].id}&limit=2&cursor=${encodeURIComponent(r.body.pagination.nextCursor)}`);
  }
  assert.deepEqual(
    seen,
    all.slice(2).map((e) => e.id),
  );
  // A cursor is bound to its filters, key and tenant.
  const first = await ten.api.get('/events?limit=2');
  const cursor = encodeURIComponent(first.body.pagination.nextCursor);
  assert.equal((await ten.api.get(`/events?limit=2&types=contact.created&cursor=${cursor}`)).body.error, 'invalid_cursor');
  assert.equal((await ten.api.get(`/events?limit=2&cursor=${cursor}x`)).body.error, 'invalid_cursor');
  const other = await newTenant(t);
  assert.equal((await other.api.get(`/events?limit=2&cursor=${cursor}`)).body.error, 'invalid_cursor');
});

test("events of one transaction are listed in the order they were written; a later transaction's after them", async () => {
  const ten = await newTenant(t);
  await withTx(t.database.db, async (tx) => {
    for (let i = 0; i < 5; i++) await emitEvent(tx, ten.tenantId, 'tag.created', { id: `tg_${i}`, name: `t${i}` });
  });
  await contact(ten.api, 'after-tx');
  const events = await allEvents(ten.api, '', 6);
  assert.deepEqual(
    events.map((e) => e.data.tag?.name ?? e.type),
    ['t0', 't1', 't2', 't3', 't4', 'contact.created'],
  );
});

test('wait: no event yet → held until one is committed, then answered at once with it', async () => {
  const ten = await newTenant(t);
  await contact(ten.api, 'seen');
  const last = (await allEvents(ten.api, '', 1)).at(-1).id;
  const started = Date.now();
  const polling = ten.api.get(`/events?after=${last}&wait=10`);
  await sleep(300);
  const c = await contact(ten.api, 'new');
  const wroteAt = Date.now();
  const r = await polling;
  const latency = Date.now() - wroteAt;
  assert.equal(r.status, 200);
  assert.deepEqual(
    r.body.data.map((e: any) => e.data.contact.id),
    [c.id],
  );
  assert.ok(Date.now() - started >= 300, 'it waited');
  assert.ok(latency < 500, `answered ${latency} ms after the commit`);
  assert.equal(t.app.eventWaiters.waiting, 0);
});

test('wait: a write made with an Idempotency-Key (its own transaction, committed when the answer is stored) wakes the long-poll too', async () => {
  const ten = await newTenant(t);
  const polling = ten.api.get('/events?wait=10');
  await sleep(200);
  const c = await ten.api.post('/contacts', { firstName: 'Idem', email: `idem-${Date.now()}@events.test` }, { 'idempotency-key': `ev-${Date.now()}` });
  assert.equal(c.status, 201);
  const wroteAt = Date.now();
  const r = await polling;
  assert.deepEqual(
    r.body.data.map((e: any) => e.data.contact.id),
    [c.body.id],
  );
  assert.ok(Date.now() - wroteAt < 500, `answered ${Date.now() - wroteAt} ms after the commit`);
});

test('wait: a matching event already there answers at once; none within the wait → 200 with empty data when it ends', async () => {
  const ten = await newTenant(t);
  await contact(ten.api, 'there');
  let started = Date.now();
  const now = await ten.api.get('/events?wait=5');
  assert.equal(now.body.data.length, 1);
  assert.ok(Date.now() - started < 1000);
  started = Date.now();
  const r = await ten.api.get(`/events?after=${now.body.data[0].id}&wait=1`);
  const took = Date.now() - started;
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.data, []);
  assert.ok(took >= 950 && took < 2500, `waited ${took} ms`);
});

test('wait with types: an event of another type (or of another tenant) does not end the wait; a matching one does', async () => {
  const ten = await newTenant(t);
  const other = await newTenant(t);
  let done = false;
  const mine = await contact(ten.api, 'mine');
  const theirs = await contact(other.api, 'theirs');
  const last = (await allEvents(ten.api, '', 1)).at(-1).id;
  const polling = ten.api.get(`/events?after=${last}&types=contact.updated&wait=10`).then((r) => {
    done = true;
    return r;
  });
  await sleep(200);
  await contact(ten.api, 'not-an-update');
  await other.api.patch(`/contacts/${theirs.id}`, { lastName: 'Theirs' });
  await sleep(400);
  assert.equal(done, false, 'still waiting after events of other types and tenants');
  assert.equal((await ten.api.patch(`/contacts/${mine.id}`, { lastName: 'Mine' })).status, 200);
  const r = await polling;
  assert.deepEqual(
    r.body.data.map((e: any) => [e.type, e.data.contact.id]),
    [['contact.updated', mine.id]],
  );
});

test('waiting requests are bounded per API key: the 11th is 429 too_many_waiting_requests with Retry-After; a returned one frees its slot', async () => {
  const ten = await newTenant(t);
  const polls = Array.from({ length: 10 }, () => ten.api.get('/events?wait=3'));
  await sleep(300);
  assert.equal(t.app.eventWaiters.waiting, 10);
  const r = await ten.api.get('/events?wait=3');
  assert.equal(r.status, 429);
  assert.equal(r.body.error, 'too_many_waiting_requests');
  assert.equal(r.body.limit, 10);
  assert.equal(r.headers['retry-after'], '1');
  // Without wait the same key still reads; another key of the tenant may still wait.
  assert.equal((await ten.api.get('/events')).status, 200);
  // An event answers them all and frees every slot.
  await contact(ten.api, 'wake');
  const answered = await Promise.all(polls);
  assert.ok(answered.every((x) => x.status === 200 && x.body.data.length === 1));
  assert.equal(t.app.eventWaiters.waiting, 0);
  const again = await ten.api.get('/events?wait=1&types=deal.won');
  assert.equal(again.status, 200);
});

test('waiting requests are bounded per server process (EVENT_WAIT_MAX)', async () => {
  const small = await testApp({ EVENT_WAIT_MAX: '3' });
  const a = await newTenant(small);
  const b = await newTenant(small);
  const polls = [a.api.get('/events?wait=2'), a.api.get('/events?wait=2'), b.api.get('/events?wait=2')];
  await sleep(300);
  const r = await b.api.get('/events?wait=2');
  assert.equal(r.status, 429);
  assert.equal(r.body.error, 'too_many_waiting_requests');
  assert.equal(r.body.limit, 3);
  await Promise.all(polls);
  assert.equal((await b.api.get('/events?wait=0')).status, 200);
});

test('a client that disconnects frees its waiting slot', async () => {
  const ten = await newTenant(t);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as { port: number };
  const controller = new AbortController();
  const pending = fetch(`http://127.0.0.1:${port}/api/v1/events?wait=20`, { headers: { 'x-api-key': ten.api.key }, signal: controller.signal }).catch((e) => e);
  for (let i = 0; i < 50 && t.app.eventWaiters.waiting === 0; i++) await sleep(20);
  assert.equal(t.app.eventWaiters.waiting, 1);
  controller.abort();
  await pending;
  for (let i = 0; i < 50 && t.app.eventWaiters.waiting > 0; i++) await sleep(20);
  assert.equal(t.app.eventWaiters.waiting, 0);
});

test('closing the server answers waiting requests at once with what they have (200, empty data)', async () => {
  const own = await testApp();
  const ten = await newTenant(own);
  const started = Date.now();
  const polling = ten.api.get('/events?wait=20');
  await sleep(300);
  own.app.eventWaiters.close();
  const r = await polling;
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.data, []);
  assert.ok(Date.now() - started < 2000);
  // Once closing, a request with wait answers without waiting.
  const s2 = Date.now();
  assert.equal((await ten.api.get('/events?wait=20')).status, 200);
  assert.ok(Date.now() - s2 < 1000);
});

test(
  'never miss an event (PostgreSQL): positions follow commit order — an event raised first by a transaction that commits last comes last, and is not skipped',
  { skip: DIALECT !== 'postgres' && 'SQLite serializes writers: insertion order is commit order' },
  async () => {
    const ten: Tenant = await newTenant(t);
    await contact(ten.api, 'base');
    const base = (await allEvents(ten.api, '', 1)).at(-1).id;

    // Transaction A raises its event first and stays open; B raises a later one and commits.
    let releaseA!: () => void;
    const holdA = new Promise<void>((r) => (releaseA = r));
    let aRaised!: () => void;
    const aWritten = new Promise<void>((r) => (aRaised = r));
    const txA = withTx(t.database.db, async (tx) => {
      await emitEvent(tx, ten.tenantId, 'tag.created', { id: 'tg_a', name: 'A' });
      aRaised();
      await holdA;
    });
    await aWritten;
    let b: any;
    let polling: Promise<any>;
    try {
      b = await contact(ten.api, 'B');
      // B is committed and readable at once; A, committed later, gets a later position.
      const first = await allEvents(ten.api, `&after=${base}`, 1);
      assert.deepEqual(
        first.map((e) => e.data.contact?.id),
        [b.id],
      );
      polling = ten.api.get(`/events?after=${first[0].id}&wait=10`);
      await sleep(200);
    } finally {
      releaseA();
      await txA;
    }
    const r = await polling;
    assert.deepEqual(
      r.body.data.map((e: any) => e.data.tag?.name),
      ['A'],
      'the reader that went past B still gets A',
    );
    assert.deepEqual(
      (await allEvents(ten.api, `&after=${base}`, 2)).map((e) => e.data.tag?.name ?? e.data.contact?.id),
      [b.id, 'A'],
    );
  },
);

test(
  "never miss an event (PostgreSQL): a transaction whose events are written holds the tenant's next writer until it commits; other tenants go on",
  { skip: DIALECT !== 'postgres' && 'SQLite serializes writers' },
  async () => {
    const ten: Tenant = await newTenant(t);
    const other: Tenant = await newTenant(t);
    await contact(ten.api, 'base2');
    const base = (await allEvents(ten.api, '', 1)).at(-1).id;

    // A's events are written (with their positions) at its commit; A is held right there, before COMMIT.
    let go!: () => void;
    const goA = new Promise<void>((r) => (go = r));
    let flushed!: () => void;
    const aFlushed = new Promise<void>((r) => (flushed = r));
    const pause: DeferredWrites<null> = {
      async flush() {
        flushed();
        await goA;
      },
    };
    const txA = withTx(t.database.db, async (tx) => {
      await emitEvent(tx, ten.tenantId, 'tag.created', { id: 'tg_held', name: 'held' });
      await deferWrite(tx, pause, null);
    });
    await aFlushed;

    // B would otherwise take the next position and commit first: a reader going past B would skip A.
    let bDone = false;
    const b = contact(ten.api, 'B2').then((body) => ((bDone = true), body));
    try {
      const started = Date.now();
      await contact(other.api, 'elsewhere');
      assert.ok(Date.now() - started < 1000, 'another tenant is not held');
      await sleep(300);
      assert.equal(bDone, false, "B waits for the tenant's log");
      assert.deepEqual(await allEvents(ten.api, `&after=${base}`), []);
    } finally {
      go();
      await txA;
    }
    const bBody = await b;
    assert.deepEqual(
      (await allEvents(ten.api, `&after=${base}`, 2)).map((e) => e.data.tag?.name ?? e.data.contact?.id),
      ['held', bBody.id],
    );
  },
);

test('OpenAPI: GET /events is listEvents under the tag Events, with retention and long-polling documented and examples', async () => {
  const r = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  const doc = JSON.parse(r.body);
  const op = doc.paths['/api/v1/events'].get;
  assert.equal(op.operationId, 'listEvents');
  assert.deepEqual(op.tags, ['Events']);
  assert.match(op.description, /\*\*Retention\.\*\* Events are kept for the retention period \(30 days by default\)/);
  assert.doesNotMatch(op.description, /EVENT_|CONTRACT|spec \d/, 'no server setting or internal reference in what integrators read');
  assert.match(op.description, /wait=/);
  assert.ok(op['x-scopes'].includes('events:read'));
  const names = op.parameters.map((p: any) => p.name).sort();
  assert.deepEqual(names, ['after', 'cursor', 'limit', 'pageSize', 'types', 'wait']);
  const ok = op.responses['200'].content['application/json'].schema;
  assert.ok(JSON.stringify(ok).includes('evt_'), 'an example event');
  assert.ok(op.responses['429']);
});

test(
  'isolation (PostgreSQL): a long open write transaction, of another tenant or of this one, holds no committed event back',
  { skip: DIALECT !== 'postgres' && 'SQLite serializes writers' },
  async () => {
    const ten: Tenant = await newTenant(t);
    const other: Tenant = await newTenant(t);
    await contact(ten.api, 'base3');
    const base = (await allEvents(ten.api, '', 1)).at(-1).id;
    let end!: () => void;
    const ended = new Promise<void>((r) => (end = r));
    let openCount = 0;
    let bothOpen!: () => void;
    const opened = new Promise<void>((r) => (bothOpen = r));
    // Each holds a transaction id (what the old rule waited for) and has raised an event, and stays open.
    const open = (tenantId: string) =>
      withTx(t.database.db, async (tx) => {
        await sql`select pg_current_xact_id()`.execute(tx);
        await emitEvent(tx, tenantId, 'tag.created', { id: 'tg_bulk', name: 'bulk' });
        if (++openCount === 2) bothOpen();
        await ended;
      });
    // A bulk import of another tenant, and one of this tenant.
    const txs = [open(other.tenantId), open(ten.tenantId)];
    let b: any;
    try {
      await opened;
      const polling = ten.api.get(`/events?after=${base}&wait=10`);
      await sleep(100);
      b = await contact(ten.api, 'B3');
      const wroteAt = Date.now();
      const r = await polling;
      assert.deepEqual(
        r.body.data.map((e: any) => e.data.contact.id),
        [b.id],
      );
      assert.ok(Date.now() - wroteAt < 500, `answered ${Date.now() - wroteAt} ms after the commit`);
      assert.deepEqual(
        (await allEvents(ten.api, `&after=${base}`, 1)).map((e) => e.data.contact?.id),
        [b.id],
      );
    } finally {
      end();
      await Promise.all(txs);
    }
    assert.deepEqual(
      (await allEvents(ten.api, `&after=${base}`, 2)).map((e) => e.data.tag?.name ?? e.data.contact?.id),
      [b.id, 'bulk'],
    );
  },
);

test("a page copies each stored payload's `data` as it is; a payload stored in another key order is read as well", async () => {
  const ten: Tenant = await newTenant(t);
  const c = await contact(ten.api, 'raw');
  const stored = [...(await storedPayloads(ten.tenantId)).values()][0];
  // What an older writer might have stored: the same payload, keys in another order, with escapes in data.
  const data = { contact: { ...stored.data.contact, lastName: 'O"Brien \\ \u00e9\u2028' } };
  await t.database.db
    .insertInto('events')
    .values({
      tenant_id: ten.tenantId,
      id: 'evt_other_order',
      type: 'contact.updated',
      payload: JSON.stringify({ data, timestamp: '2026-11-01T00:00:00.000Z', event: 'contact.updated', tenantId: ten.tenantId }),
      created_at: '2026-11-01T00:00:00.000Z',
    })
    .execute();
  const events = await allEvents(ten.api, '', 2);
  assert.deepEqual(events[0].data, stored.data);
  assert.equal(events[0].occurredAt, stored.timestamp);
  assert.equal(events[0].data.contact.id, c.id);
  assert.deepEqual(events[1], { id: 'evt_other_order', type: 'contact.updated', occurredAt: '2026-11-01T00:00:00.000Z', data });
});
