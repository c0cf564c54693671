// Delivery operations of CONTRACT C.4 at the HTTP level (no worker runs: WORKERS=false): the filtered,
// cursor-paged history with its Link header, the manual retry, recovery, the scheduling rules
// (Retry-After, attempt cycles) and endpoint health. Attempts with a real receiver: test/e2e/webhooks-operations.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, DIALECT, newTenant, testApp, type TestApp } from '../helpers/app.js';
import { isolatedPostgresUrl } from '../helpers/webhooks-e2e.js';
import { emitEvent } from '../../src/events/outbox.js';
import type { EventType } from '../../src/events/catalog.js';
import { withTx } from '../../src/db/index.js';
import { outcome, trackHealth, MAX_ATTEMPTS } from '../../src/modules/webhooks/webhooks.attempts.js';
import { parseRetryAfter, type AttemptResult } from '../../src/modules/webhooks/webhooks.sender.js';
import { loadConfig } from '../../src/config.js';

// NOTE: the delivery queue is global to a database; on PostgreSQL this file gets its own database.
const t: TestApp = await testApp(DIALECT === 'postgres' ? { DATABASE_URL: await isolatedPostgresUrl('webhooks_dlv_http') } : {});

// Loopback is refused by the private-network rule (WEBHOOK_ALLOW_PRIVATE_NETWORKS=false): an attempt fails at once.
const REFUSED_URL = 'https://127.0.0.1:1/crm';

const emit = (tenantId: string, type: EventType, record: Record<string, unknown> = { id: 'rec_1' }) =>
  withTx(t.database.db, (tx) => emitEvent(tx, tenantId, type, record));

async function setStatus(tenantId: string, ids: string[], set: Record<string, unknown>) {
  if (ids.length === 0) throw new Error('setStatus: no ids');
  await t.database.db.updateTable('webhook_deliveries').set(set).where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
}

function nextLink(res: { headers: Record<string, any> }): URL | undefined {
  const link = res.headers.link as string | undefined;
  if (!link) return undefined;
  const m = /^<([^>]+)>; rel="next"$/.exec(link);
  assert.ok(m, `Link header shape: ${link}`);
  return new URL(m[1]);
}

test('deliveries list: status and event filters; bad values 400', async () => {
  const { api, tenantId } = await newTenant(t);
  const w = (await api.post('/webhooks', { name: 'all', url: REFUSED_URL, events: ['deal.won', 'deal.lost'] })).body;
  for (let i = 0; i < 3; i++) await emit(tenantId, 'deal.won');
  for (let i = 0; i < 2; i++) await emit(tenantId, 'deal.lost');
  const all = (await api.get(`/webhooks/${w.id}/deliveries`)).body as any[];
  assert.equal(all.length, 5);
  const won = all.filter((d) => d.event === 'deal.won').map((d) => d.id);
  await setStatus(tenantId, [won[0]], { status: 'permanent_failure', next_attempt_at: null });
  await setStatus(tenantId, [won[1]], { status: 'delivered', next_attempt_at: null });

  const byEvent = await api.get(`/webhooks/${w.id}/deliveries?event=deal.lost`);
  assert.equal(byEvent.status, 200);
  assert.deepEqual(
    byEvent.body.map((d: any) => d.event),
    ['deal.lost', 'deal.lost'],
  );
  assert.deepEqual(
    (await api.get(`/webhooks/${w.id}/deliveries?status=permanent_failure`)).body.map((d: any) => d.id),
    [won[0]],
  );
  assert.deepEqual(
    (await api.get(`/webhooks/${w.id}/deliveries?status=delivered&event=deal.won`)).body.map((d: any) => d.id),
    [won[1]],
  );
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries?status=pending`)).body.length, 3);
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries?status=delivered&event=deal.lost`)).body.length, 0);
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries?status=retry_scheduled`)).body.length, 0);

  for (const q of ['status=failed', 'status=', 'event=deal.nope', 'event=', 'limit=0', 'limit=101', 'pageSize=101', 'limit=5&pageSize=6', 'other=1']) {
    const r = await api.get(`/webhooks/${w.id}/deliveries?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed', q);
  }
  assert.match(
    (await api.get(`/webhooks/${w.id}/deliveries?status=failed`)).body.message +
      JSON.stringify((await api.get(`/webhooks/${w.id}/deliveries?status=failed`)).body.details),
    /permanent_failure/,
  );
  // pageSize is an alias of limit; equal values are fine.
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries?pageSize=2`)).body.length, 2);
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries?pageSize=2&limit=2`)).body.length, 2);
});

test('deliveries list: cursor pages in a Link header (repeating the query), absent on the last page; every delivery once', async () => {
  const { api, tenantId } = await newTenant(t);
  const w = (await api.post('/webhooks', { name: 'all', url: REFUSED_URL, events: ['deal.won', 'deal.lost'] })).body;
  for (let i = 0; i < 7; i++) await emit(tenantId, 'deal.won');
  await emit(tenantId, 'deal.lost');
  const everything = (await api.get(`/webhooks/${w.id}/deliveries`)).body.map((d: any) => d.id);
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries`)).headers.link, undefined, 'no Link on the last page');
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries?limit=8`)).headers.link, undefined, 'a full last page has no Link either');

  const seen: string[] = [];
  let res = await api.get(`/webhooks/${w.id}/deliveries?event=deal.won&limit=3`);
  let pages = 0;
  for (;;) {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    pages++;
    seen.push(...res.body.map((d: any) => d.id));
    assert.ok(res.body.every((d: any) => d.event === 'deal.won'));
    const next = nextLink(res);
    if (!next) break;
    assert.equal(next.pathname, `/api/v1/webhooks/${w.id}/deliveries`);
    assert.equal(next.searchParams.get('event'), 'deal.won', 'the other parameters are repeated');
    assert.equal(next.searchParams.get('limit'), '3');
    assert.ok(next.searchParams.get('cursor'));
    // A delivery made during the walk shifts nothing (keyset, newest first: it is before the cursor).
    if (pages === 1) await emit(tenantId, 'deal.won');
    res = await api.get(`${next.pathname.replace('/api/v1', '')}${next.search}`);
  }
  assert.equal(pages, 3);
  assert.deepEqual(
    seen,
    everything.filter((id: string) => seen.includes(id)),
    'newest first, in the order of the full list',
  );
  assert.equal(seen.length, 7);
  assert.equal(new Set(seen).size, 7, 'no delivery twice');

  const first = await api.get(`/webhooks/${w.id}/deliveries?limit=2`);
  const cursor = nextLink(first)!.searchParams.get('cursor')!;
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries?limit=2&cursor=${encodeURIComponent(cursor)}`)).status, 200);
  // Bound to the filters, the webhook, the key and the tenant; malformed or forged: 400 invalid_cursor.
  const bad = [
    `/webhooks/${w.id}/deliveries?limit=2&event=deal.won&cursor=${encodeURIComponent(cursor)}`,
    `/webhooks/${w.id}/deliveries?limit=2&status=pending&cursor=${encodeURIComponent(cursor)}`,
    `/webhooks/${w.id}/deliveries?cursor=garbage`,
    `/webhooks/${w.id}/deliveries?cursor=`,
    `/webhooks/${w.id}/deliveries?cursor=${'A'.repeat(2100)}`,
    `/webhooks/${w.id}/deliveries?cursor=${encodeURIComponent(cursor.slice(0, -2) + (cursor.endsWith('AA') ? 'BB' : 'AA'))}`,
  ];
  for (const url of bad) {
    const r = await api.get(url);
    assert.equal(r.status, 400, url);
    assert.equal(r.body.error, 'invalid_cursor', url);
  }
  const other = (await api.post('/webhooks', { name: 'other', url: REFUSED_URL, events: ['deal.won'] })).body;
  assert.equal((await api.get(`/webhooks/${other.id}/deliveries?limit=2&cursor=${encodeURIComponent(cursor)}`)).body.error, 'invalid_cursor');
  const b = await newTenant(t);
  assert.equal((await b.api.get(`/webhooks/${w.id}/deliveries?limit=2&cursor=${encodeURIComponent(cursor)}`)).status, 404);
  const bHook = (await b.api.post('/webhooks', { name: 'b', url: REFUSED_URL, events: ['deal.won'] })).body;
  assert.equal((await b.api.get(`/webhooks/${bHook.id}/deliveries?cursor=${encodeURIComponent(cursor)}`)).body.error, 'invalid_cursor');
});

test('retry: one more attempt now, appended to the same delivery (even after permanent_failure); 404 and 409 cases', async () => {
  const { api, tenantId } = await newTenant(t);
  const w = (await api.post('/webhooks', { name: 'down', url: REFUSED_URL, events: ['deal.won'] })).body;
  await emit(tenantId, 'deal.won');
  const [d] = (await api.get(`/webhooks/${w.id}/deliveries`)).body;
  await setStatus(tenantId, [d.id], { status: 'permanent_failure', attempts: 5, next_attempt_at: null, last_error: 'HTTP 500', status_code: 500 });

  const r = await api.post(`/webhooks/${w.id}/deliveries/${d.id}/retry`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.id, d.id);
  assert.equal(r.body.eventId, d.eventId);
  assert.equal(r.body.attempts, 6, 'appended to the same delivery');
  assert.equal(r.body.status, 'permanent_failure', 'an ended delivery that fails again stays ended');
  assert.equal(r.body.statusCode, null);
  assert.match(r.body.lastError, /private or reserved/);
  assert.equal(r.body.nextAttemptAt, null);
  const again = await api.post(`/webhooks/${w.id}/deliveries/${d.id}/retry`);
  assert.equal(again.body.attempts, 7);
  const listed = (await api.get(`/webhooks/${w.id}/deliveries`)).body;
  assert.equal(listed.length, 1, 'no new delivery record');
  assert.equal(listed[0].attempts, 7);

  // A delivery still waiting for its retries keeps them: the manual attempt is extra.
  await emit(tenantId, 'deal.won');
  const waiting = (await api.get(`/webhooks/${w.id}/deliveries?status=pending`)).body[0];
  const w1 = await api.post(`/webhooks/${w.id}/deliveries/${waiting.id}/retry`);
  assert.equal(w1.body.attempts, 1);
  assert.equal(w1.body.status, 'retry_scheduled');
  assert.ok(w1.body.nextAttemptAt > new Date().toISOString());
  const row = await t.database.db
    .selectFrom('webhook_deliveries')
    .select('attempt_limit')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', waiting.id)
    .executeTakeFirstOrThrow();
  assert.equal(row.attempt_limit, MAX_ATTEMPTS + 1, 'five automatic attempts are still ahead of it');

  // 404: unknown delivery, a delivery of another webhook, another tenant.
  const other = (await api.post('/webhooks', { name: 'other', url: REFUSED_URL, events: ['deal.lost'] })).body;
  assert.equal((await api.post(`/webhooks/${w.id}/deliveries/dlv_nope/retry`)).status, 404);
  assert.equal((await api.post(`/webhooks/${other.id}/deliveries/${d.id}/retry`)).status, 404);
  const b = await newTenant(t);
  assert.equal((await b.api.post(`/webhooks/${w.id}/deliveries/${d.id}/retry`)).status, 404);
  const bHook = (await b.api.post('/webhooks', { name: 'b', url: REFUSED_URL, events: ['deal.won'] })).body;
  assert.equal((await b.api.post(`/webhooks/${bHook.id}/deliveries/${d.id}/retry`)).status, 404);

  // 409 while an attempt is in flight (a live lease), and for an inactive webhook.
  await setStatus(tenantId, [d.id], { lease_owner: 'someone', lease_until: new Date(Date.now() + 60_000).toISOString() });
  const busy = await api.post(`/webhooks/${w.id}/deliveries/${d.id}/retry`);
  assert.equal(busy.status, 409);
  assert.equal(busy.body.error, 'delivery_in_progress');
  await setStatus(tenantId, [d.id], { lease_owner: null, lease_until: null });
  await api.patch(`/webhooks/${w.id}`, { isActive: false });
  const off = await api.post(`/webhooks/${w.id}/deliveries/${d.id}/retry`);
  assert.equal(off.status, 409);
  assert.equal(off.body.error, 'webhook_inactive');
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries`)).body.find((x: any) => x.id === d.id).attempts, 7, 'nothing attempted');
  await api.delete(`/webhooks/${w.id}`);
  assert.equal((await api.post(`/webhooks/${w.id}/deliveries/${d.id}/retry`)).status, 404, 'a deleted webhook takes its deliveries');

  // Scope webhooks:manage.
  const ro = client(t.app, (await newTenant(t)).apiKeys.ro);
  assert.equal((await ro.post(`/webhooks/${w.id}/deliveries/${d.id}/retry`)).status, 403);
});

test('recover { since }: permanent failures created at or after since are due now with five more attempts', async () => {
  const { api, tenantId } = await newTenant(t);
  const w = (await api.post('/webhooks', { name: 'down', url: REFUSED_URL, events: ['deal.won', 'deal.lost'] })).body;
  for (let i = 0; i < 4; i++) await emit(tenantId, 'deal.won');
  await emit(tenantId, 'deal.lost');
  const ds = (await api.get(`/webhooks/${w.id}/deliveries`)).body as any[];
  const [old, a, b, delivered] = ds.map((d) => d.id);
  const waitingIds = ds.slice(4).map((d) => d.id);
  await setStatus(tenantId, [old], { created_at: '2026-01-01T00:00:00.000Z' });
  await setStatus(tenantId, [old, a, b], { status: 'permanent_failure', attempts: 5, next_attempt_at: null, last_error: 'HTTP 500' });
  await setStatus(tenantId, [delivered], { status: 'delivered', attempts: 1, next_attempt_at: null });
  const other = (await api.post('/webhooks', { name: 'other', url: REFUSED_URL, events: ['deal.won'] })).body;
  await emit(tenantId, 'deal.won');
  const otherDs = (await api.get(`/webhooks/${other.id}/deliveries`)).body.map((d: any) => d.id);
  await setStatus(tenantId, otherDs, { status: 'permanent_failure', attempts: 5, next_attempt_at: null });

  const before = new Date().toISOString();
  const r = await api.post(`/webhooks/${w.id}/recover`, { since: '2026-06-01T00:00:00Z' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body, { scheduled: 2 });
  const after = new Map(((await api.get(`/webhooks/${w.id}/deliveries`)).body as any[]).map((d) => [d.id, d]));
  for (const id of [a, b]) {
    const d = after.get(id);
    assert.equal(d.status, 'retry_scheduled');
    assert.equal(d.attempts, 5, 'attempts keep counting');
    assert.ok(d.nextAttemptAt >= before && d.nextAttemptAt <= new Date().toISOString(), 'due now');
  }
  assert.equal(after.get(old).status, 'permanent_failure', 'created before since');
  assert.equal(after.get(delivered).status, 'delivered');
  assert.ok(waitingIds.every((id) => after.get(id).status === 'pending'));
  const limits = await t.database.db
    .selectFrom('webhook_deliveries')
    .select(['id', 'attempt_limit'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', [a, b])
    .execute();
  assert.ok(
    limits.every((x) => x.attempt_limit === 5 + MAX_ATTEMPTS),
    'the 5-attempt cap allows a fresh cycle',
  );
  assert.ok(
    ((await api.get(`/webhooks/${other.id}/deliveries`)).body as any[]).every((d) => d.status === 'permanent_failure'),
    'other webhooks untouched',
  );
  // Nothing left to recover; since is inclusive.
  assert.deepEqual((await api.post(`/webhooks/${w.id}/recover`, { since: '2026-06-01T00:00:00Z' })).body, { scheduled: 0 });
  await setStatus(tenantId, [old], { status: 'permanent_failure' });
  assert.deepEqual((await api.post(`/webhooks/${w.id}/recover`, { since: '2026-01-01T00:00:00.000Z' })).body, { scheduled: 1 });

  for (const body of [{}, { since: 'yesterday' }, { since: '2026-13-01T00:00:00Z' }, { since: 5 }, { since: '2026-06-01T00:00:00Z', extra: 1 }]) {
    const bad = await api.post(`/webhooks/${w.id}/recover`, body);
    assert.equal(bad.status, 400, JSON.stringify(body));
    assert.equal(bad.body.error, 'validation_failed');
  }
  assert.equal((await api.post('/webhooks/whk_nope/recover', { since: '2026-06-01T00:00:00Z' })).status, 404);
  const tb = await newTenant(t);
  assert.equal((await tb.api.post(`/webhooks/${w.id}/recover`, { since: '2026-06-01T00:00:00Z' })).status, 404);
  await api.patch(`/webhooks/${w.id}`, { isActive: false });
  const off = await api.post(`/webhooks/${w.id}/recover`, { since: '2026-01-01T00:00:00Z' });
  assert.equal(off.status, 409);
  assert.equal(off.body.error, 'webhook_inactive');

  // Idempotency keys apply: a repeat answers the stored result and schedules nothing.
  await api.patch(`/webhooks/${w.id}`, { isActive: true });
  await setStatus(tenantId, [a], { status: 'permanent_failure', next_attempt_at: null });
  const k = { 'idempotency-key': `recover-${w.id}` };
  const first = await api.post(`/webhooks/${w.id}/recover`, { since: '2026-06-01T00:00:00Z' }, k);
  assert.ok(first.body.scheduled >= 1); // the deactivation above ended the others too
  await setStatus(tenantId, [a], { status: 'permanent_failure', next_attempt_at: null });
  const replay = await api.post(`/webhooks/${w.id}/recover`, { since: '2026-06-01T00:00:00Z' }, k);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.deepEqual(replay.body, first.body);
  assert.equal(
    (await api.get(`/webhooks/${w.id}/deliveries?status=permanent_failure`)).body.some((d: any) => d.id === a),
    true,
    'the replay changed nothing',
  );
});

const failed = (endedAt: Date, extra: Partial<AttemptResult> = {}): AttemptResult => ({
  success: false,
  statusCode: 503,
  responseSnippet: 'busy',
  durationMs: 5,
  error: 'HTTP 503',
  attemptId: 'a',
  endedAt,
  ...extra,
});

test('scheduling: delays from the end of the attempt, Retry-After at least, the cap, a fresh cycle after recovery', () => {
  const config = loadConfig({ WEBHOOK_RETRY_DELAYS: '60,300,1800,7200', CRM_SECRET_KEY: '11'.repeat(32) });
  const end = new Date('2026-11-22T10:00:00.000Z');
  const at = (s: number) => new Date(end.getTime() + s * 1000).toISOString();
  assert.equal(outcome(config, { attempts: 0, attempt_limit: null }, failed(end)).next_attempt_at, at(60));
  assert.equal(outcome(config, { attempts: 3, attempt_limit: null }, failed(end)).next_attempt_at, at(7200));
  const last = outcome(config, { attempts: 4, attempt_limit: null }, failed(end, { retryAfterMs: 5_000 }));
  assert.deepEqual([last.status, last.next_attempt_at, last.attempts], ['permanent_failure', null, 5], 'Retry-After stays within the cap');
  // Retry-After longer than the delay wins; shorter does not shorten it.
  assert.equal(outcome(config, { attempts: 0, attempt_limit: null }, failed(end, { retryAfterMs: 600_000 })).next_attempt_at, at(600));
  assert.equal(outcome(config, { attempts: 0, attempt_limit: null }, failed(end, { retryAfterMs: 1_000 })).next_attempt_at, at(60));
  // Recovered (limit = attempts + 5): the first retry of the new cycle waits the first delay again.
  assert.equal(outcome(config, { attempts: 5, attempt_limit: 10 }, failed(end)).next_attempt_at, at(60));
  assert.equal(outcome(config, { attempts: 9, attempt_limit: 10 }, failed(end)).status, 'permanent_failure');
  const ok = outcome(config, { attempts: 2, attempt_limit: null }, { ...failed(end), success: true, statusCode: 200, error: undefined });
  assert.deepEqual([ok.status, ok.delivered_at, ok.attempts], ['delivered', end.toISOString(), 3]);
});

test('Retry-After: seconds or an HTTP date, never negative, capped', () => {
  const now = Date.parse('2026-11-22T10:00:00.000Z');
  assert.equal(parseRetryAfter('120', now), 120_000);
  assert.equal(parseRetryAfter(' 0 ', now), 0);
  assert.equal(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now), 30_000);
  assert.equal(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now), 0);
  assert.equal(parseRetryAfter(['5', '9'], now), 5_000);
  assert.equal(parseRetryAfter('99999999999', now), 7 * 24 * 3_600_000);
  for (const bad of [undefined, '', 'soon', '-5', '1.5', 'Sunday']) assert.equal(parseRetryAfter(bad, now), undefined, String(bad));
});

test('endpoint health: failing for WEBHOOK_DISABLE_AFTER_HOURS deactivates the webhook with a reason and a webhook.disabled event', async () => {
  const config = { ...t.config, webhookDisableAfterHours: 1 };
  const { api, tenantId } = await newTenant(t);
  const sick = (await api.post('/webhooks', { name: 'sick', url: REFUSED_URL, events: ['deal.won', 'webhook.disabled'] })).body;
  const watcher = (await api.post('/webhooks', { name: 'ops', url: REFUSED_URL, events: ['webhook.disabled'] })).body;
  const bystander = (await api.post('/webhooks', { name: 'crm', url: REFUSED_URL, events: ['deal.won'] })).body;
  assert.equal((await api.get(`/webhooks/${sick.id}`)).body.disabledReason, null);
  await emit(tenantId, 'deal.won');
  const health = (endedAt: Date, success = false) =>
    withTx(t.database.db, (tx) =>
      trackHealth(tx, config, tenantId, sick.id, success ? { ...failed(endedAt), success: true, error: undefined } : failed(endedAt)),
    );
  const t0 = Date.parse('2026-11-22T10:00:00.000Z');
  const h = (hours: number) => new Date(t0 + hours * 3_600_000);

  await health(h(0));
  await health(h(0.9));
  await health(h(0.95), true); // a success ends the streak
  await health(h(1.5)); // a new streak starts here
  await health(h(2.4));
  let w = (await api.get(`/webhooks/${sick.id}`)).body;
  assert.equal(w.isActive, true, 'not yet an hour since the first failure after the last success');
  await health(h(2.5));
  w = (await api.get(`/webhooks/${sick.id}`)).body;
  assert.equal(w.isActive, false);
  assert.match(w.disabledReason, /^no successful delivery since 2026-11-22T11:30:00\.000Z .*last error: HTTP 503$/);
  await health(h(3)); // already off: no second event

  const events = await t.database.db
    .selectFrom('events')
    .select(['id', 'payload'])
    .where('tenant_id', '=', tenantId)
    .where('type', '=', 'webhook.disabled')
    .execute();
  assert.equal(events.length, 1);
  const payload = JSON.parse(events[0].payload);
  assert.equal(payload.event, 'webhook.disabled');
  assert.deepEqual(payload.data.webhook, w, 'data.webhook is the webhook as GET /webhooks/:id returns it');
  const toWatcher = (await api.get(`/webhooks/${watcher.id}/deliveries?event=webhook.disabled`)).body;
  assert.equal(toWatcher.length, 1, 'delivered to the other webhooks subscribed to it');
  assert.equal(toWatcher[0].eventId, events[0].id);
  assert.equal((await api.get(`/webhooks/${sick.id}/deliveries?event=webhook.disabled`)).body.length, 0, 'not to the disabled webhook itself');
  assert.equal((await api.get(`/webhooks/${bystander.id}/deliveries?event=webhook.disabled`)).body.length, 0, 'not to unsubscribed webhooks');
  const ended = (await api.get(`/webhooks/${sick.id}/deliveries?event=deal.won`)).body[0];
  assert.equal(ended.status, 'permanent_failure', 'its waiting deliveries end');
  assert.match(ended.lastError, /disabled/);

  // Re-activation clears the reason and starts health afresh.
  const on = await api.patch(`/webhooks/${sick.id}`, { isActive: true });
  assert.equal(on.body.isActive, true);
  assert.equal(on.body.disabledReason, null);
  await health(h(10));
  assert.equal((await api.get(`/webhooks/${sick.id}`)).body.isActive, true, 'the old streak does not count');
  // Deactivated by hand: no reason.
  assert.equal((await api.patch(`/webhooks/${sick.id}`, { isActive: false })).body.disabledReason, null);
});

test('openapi: the delivery operations are documented', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const list = doc.paths['/api/v1/webhooks/{id}/deliveries'].get;
  assert.equal(list.operationId, 'listWebhookDeliveries');
  assert.deepEqual(
    list.parameters
      .filter((p: any) => p.in === 'query')
      .map((p: any) => p.name)
      .sort(),
    ['cursor', 'event', 'limit', 'pageSize', 'status'],
  );
  assert.ok(list.responses['200'].headers?.Link || list.responses['200'].headers?.link, JSON.stringify(list.responses['200']).slice(0, 600));
  assert.equal(doc.paths['/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry'].post.operationId, 'retryWebhookDelivery');
  const recover = doc.paths['/api/v1/webhooks/{id}/recover'].post;
  assert.equal(recover.operationId, 'recoverWebhookDeliveries');
  assert.ok(recover.responses['409'] && recover.responses['400']);
  assert.ok(JSON.stringify(doc).includes('disabledReason'));
});
