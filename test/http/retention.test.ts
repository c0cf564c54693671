import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp } from '../helpers/app.js';
import { retentionPass } from '../../src/workers/retention.js';
import { loadConfig } from '../../src/config.js';

// CONTRACT C.4 retention: events older than EVENT_RETENTION_DAYS and delivery records older than
// DELIVERY_RETENTION_DAYS are deleted in small batches while the API keeps answering; an event a delivery
// still waits for is kept.
const t = await testApp();
const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

function delivery(tenantId: string, id: string, eventId: string, status: string, createdAt: string) {
  return {
    tenant_id: tenantId,
    id,
    webhook_id: 'wh_gone',
    event_id: eventId,
    event: 'contact.created',
    status,
    status_code: null,
    response_snippet: null,
    duration_ms: null,
    attempts: status === 'pending' ? 0 : 1,
    last_error: null,
    next_attempt_at: status === 'pending' || status === 'retry_scheduled' ? createdAt : null,
    delivered_at: null,
    lease_owner: null,
    lease_until: null,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

test('a retention pass deletes old events and finished deliveries in batches, keeps what a pending delivery needs, while the API answers', async () => {
  const ten = await newTenant(t);
  const { db } = t.database;
  const old: string[] = [];
  const rows = [];
  for (let i = 0; i < 120; i++) {
    const id = `evt_old_${ten.tenantId}_${i}`;
    old.push(id);
    rows.push({
      tenant_id: ten.tenantId,
      id,
      type: 'contact.created',
      payload: JSON.stringify({ event: 'contact.created', tenantId: ten.tenantId, timestamp: ago(40), data: { contact: { id: `ct_${i}` } } }),
      created_at: ago(40 - i / 1000),
    });
  }
  await db.insertInto('events').values(rows).execute();
  await db
    .insertInto('webhook_deliveries')
    .values([
      delivery(ten.tenantId, `dlv_old_done_${ten.tenantId}`, old[0], 'delivered', ago(40)),
      delivery(ten.tenantId, `dlv_old_failed_${ten.tenantId}`, old[1], 'permanent_failure', ago(35)),
      delivery(ten.tenantId, `dlv_old_waiting_${ten.tenantId}`, old[2], 'retry_scheduled', ago(40)),
      delivery(ten.tenantId, `dlv_recent_${ten.tenantId}`, old[3], 'delivered', ago(1)),
    ])
    .execute();
  const fresh = await ten.api.post('/contacts', { firstName: 'Fresh', email: `fresh-${Date.now()}@ret.test` });
  assert.equal(fresh.status, 201);
  // NOTE: on PostgreSQL events become readable once the database's older transactions end (other test
  // files' long seeding transactions among them).
  for (let i = 0; i < 600 && (await ten.api.get('/events?limit=1000')).body.data.length < 121; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal((await ten.api.get('/events?limit=1000')).body.data.length, 121);

  // The API keeps answering during the pass (batches of 7 rows: many short statements).
  let stop = false;
  const statuses: number[] = [];
  const load = (async () => {
    while (!stop) {
      statuses.push((await ten.api.get(`/contacts/${fresh.body.id}`)).status);
      // inject() can complete without leaving the microtask queue; real requests arrive as I/O.
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const r = await retentionPass(t.database, { eventRetentionDays: 30, deliveryRetentionDays: 30, batch: 7 });
  stop = true;
  await load;
  assert.ok(statuses.length > 0 && statuses.every((s) => s === 200), `statuses ${[...new Set(statuses)]}`);

  assert.ok(r.events >= 119, JSON.stringify(r));
  const left = await ten.api.get('/events?limit=1000');
  assert.deepEqual(
    left.body.data.map((e: any) => e.id),
    [old[2], left.body.data.at(-1).id],
    'only the event a delivery still waits for, and the recent one, remain',
  );
  assert.equal(left.body.data.at(-1).data.contact.id, fresh.body.id);
  const deliveries = await db.selectFrom('webhook_deliveries').select('id').where('tenant_id', '=', ten.tenantId).orderBy('id').execute();
  assert.deepEqual(
    deliveries.map((d) => d.id),
    [`dlv_old_waiting_${ten.tenantId}`, `dlv_recent_${ten.tenantId}`],
  );

  // A second pass has nothing to do; `after` naming a deleted event matches nothing, as a filter naming any
  // missing id (B.2): 200 with no events (start again without it).
  const again = await retentionPass(t.database, { eventRetentionDays: 30, deliveryRetentionDays: 30, batch: 7 });
  assert.equal(again.events, 0);
  const gone = await ten.api.get(`/events?after=${old[5]}`);
  assert.equal(gone.status, 200);
  assert.deepEqual(gone.body.data, []);
});

test('a pass that is told to stop ends after the batch in hand; the next pass deletes the rest', async () => {
  const ten = await newTenant(t);
  const { db } = t.database;
  const rows = Array.from({ length: 30 }, (_, i) => ({
    tenant_id: ten.tenantId,
    id: `evt_stop_${ten.tenantId}_${i}`,
    type: 'contact.created',
    payload: JSON.stringify({ event: 'contact.created', tenantId: ten.tenantId, timestamp: ago(40), data: { contact: { id: `ct_${i}` } } }),
    created_at: ago(40 - i / 1000),
  }));
  await db.insertInto('events').values(rows).execute();
  const left = async () => (await db.selectFrom('events').select('id').where('tenant_id', '=', ten.tenantId).execute()).length;

  // A shutdown aborts the signal: the pass returns after one batch instead of working through the backlog.
  const stopped = new AbortController();
  stopped.abort();
  const r = await retentionPass(t.database, { eventRetentionDays: 30, deliveryRetentionDays: 30, batch: 7, signal: stopped.signal });
  assert.equal(r.events, 7, JSON.stringify(r));
  assert.equal(await left(), 23);

  const rest = await retentionPass(t.database, { eventRetentionDays: 30, deliveryRetentionDays: 30, batch: 7 });
  assert.ok(rest.events >= 23, JSON.stringify(rest));
  assert.equal(await left(), 0);
});

test('retention settings: EVENT_RETENTION_DAYS (default 30); DELIVERY_RETENTION_DAYS follows it unless set', () => {
  assert.equal(loadConfig({}).eventRetentionDays, 30);
  assert.equal(loadConfig({}).deliveryRetentionDays, 30);
  assert.equal(loadConfig({ EVENT_RETENTION_DAYS: '7' }).deliveryRetentionDays, 7);
  assert.equal(loadConfig({ EVENT_RETENTION_DAYS: '7', DELIVERY_RETENTION_DAYS: '90' }).deliveryRetentionDays, 90);
  assert.equal(loadConfig({ EVENT_RETENTION_DAYS: '0.5' }).eventRetentionDays, 0.5);
  assert.throws(() => loadConfig({ EVENT_RETENTION_DAYS: 'soon' }), /EVENT_RETENTION_DAYS/);
  assert.throws(() => loadConfig({ DELIVERY_RETENTION_DAYS: '-1' }), /DELIVERY_RETENTION_DAYS/);
});
