import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECT, newTenant, testApp } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { withTx } from '../../src/db/index.js';
import { emitEvent } from '../../src/events/outbox.js';

// GET /metrics (Prometheus text format, prom-client): requests by route template and status, refusals,
// authentication failures, long-poll waiters, the oldest due delivery; never a tenant id or a key.
const t = await testApp();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function scrape(app = t.app): Promise<string> {
  const r = await app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(r.statusCode, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return r.body;
}

/** The value of one sample (`name{labels}`), 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

test('requests are counted and timed by method, route template and status; no ids, tenants or keys in the labels', async () => {
  const ten = await newTenant(t);
  const c = await ten.api.post('/contacts', { firstName: 'Metric', email: `m-${Date.now()}@metrics.test` });
  const before = await scrape();
  const series = 'crm_http_requests_total{method="GET",route="/api/v1/contacts/:id",status="200"}';
  const missing = 'crm_http_requests_total{method="GET",route="/api/v1/contacts/:id",status="404"}';
  for (let i = 0; i < 3; i++) assert.equal((await ten.api.get(`/contacts/${c.body.id}`)).status, 200);
  assert.equal((await ten.api.get('/contacts/ct_nope')).status, 404);
  const after = await scrape();
  assert.equal(sample(after, series) - sample(before, series), 3);
  assert.equal(sample(after, missing) - sample(before, missing), 1);
  const count = 'crm_http_request_duration_seconds_count{method="GET",route="/api/v1/contacts/:id",status="200"}';
  assert.equal(sample(after, count) - sample(before, count), 3);
  assert.ok(after.includes('crm_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/v1/contacts/:id",status="200"}'));
  assert.ok(after.includes('crm_process_cpu_seconds_total'), "Node's own metrics");
  for (const secret of [ten.tenantId, ten.api.key, c.body.id]) assert.ok(!after.includes(secret), `no ${secret} in the metrics`);
});

test('every route is counted under its template, whichever plugin added it; unknown paths as `unmatched`', async () => {
  const before = await scrape();
  const series = [
    ['GET', '/healthz', 200],
    ['HEAD', '/healthz', 200],
    ['GET', '/api/v1/openapi.json', 200],
    ['GET', '/metrics', 200],
  ] as const;
  for (const [method, url] of series) assert.equal((await t.app.inject({ method, url })).statusCode, 200);
  assert.equal((await t.app.inject({ method: 'GET', url: '/no/such/path' })).statusCode, 404);
  assert.equal((await t.app.inject({ method: 'DELETE', url: '/no/such/path' })).statusCode, 404);
  const after = await scrape();
  const diff = (s: string) => sample(after, s) - sample(before, s);
  for (const [method, route] of series) {
    // The scrape before this one is answered after it is counted: /metrics counts one more.
    const n = route === '/metrics' ? 2 : 1;
    assert.equal(diff(`crm_http_requests_total{method="${method}",route="${route}",status="200"}`), n, `${method} ${route}`);
    assert.equal(diff(`crm_http_request_duration_seconds_count{method="${method}",route="${route}",status="200"}`), n, `${method} ${route}`);
  }
  assert.equal(diff('crm_http_requests_total{method="GET",route="unmatched",status="404"}'), 1);
  assert.equal(diff('crm_http_requests_total{method="DELETE",route="unmatched",status="404"}'), 1);
  // Buckets are cumulative and end with +Inf = count.
  const route = 'method="GET",route="/healthz",status="200"';
  const buckets = after
    .split('\n')
    .filter((l) => l.startsWith('crm_http_request_duration_seconds_bucket{') && l.includes(route))
    .map((l) => Number(l.split(' ').pop()));
  assert.equal(buckets.length, 16);
  for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i] >= buckets[i - 1]);
  assert.equal(buckets.at(-1), sample(after, `crm_http_request_duration_seconds_count{${route}}`));
});

test('authentication failures and 429 refusals are counted by error code', async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push({ ref: 'slow', name: 'Slow', user: 'ana', scopes: ['*'], rateLimit: 1 });
  const ten = await newTenant(t, setup);
  const before = await scrape();
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/contacts' })).statusCode, 401);
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/contacts', headers: { 'x-api-key': 'crm_live_nothing_like_a_key' } })).statusCode, 401);
  const slow = ten.as('slow');
  assert.equal((await slow.get('/contacts')).status, 200);
  assert.equal((await slow.get('/contacts')).status, 429);
  const after = await scrape();
  assert.equal(sample(after, 'crm_auth_failures_total{code="missing_api_key"}') - sample(before, 'crm_auth_failures_total{code="missing_api_key"}'), 1);
  assert.equal(sample(after, 'crm_auth_failures_total{code="invalid_api_key"}') - sample(before, 'crm_auth_failures_total{code="invalid_api_key"}'), 1);
  assert.equal(
    sample(after, 'crm_refused_requests_total{code="rate_limit_exceeded"}') - sample(before, 'crm_refused_requests_total{code="rate_limit_exceeded"}'),
    1,
  );
});

test('gauges: waiting long-polls, and the age of the oldest due webhook delivery', async () => {
  const ten = await newTenant(t);
  const polling = ten.api.get('/events?wait=2');
  await sleep(200);
  assert.ok(sample(await scrape(), 'crm_event_waiting_requests') >= 1);
  await polling;

  const hook = await ten.api.post('/webhooks', { name: 'm', url: 'https://example.test/m', events: ['deal.won'] });
  assert.equal(hook.status, 201);
  await withTx(t.database.db, (tx) => emitEvent(tx, ten.tenantId, 'deal.won', { id: 'deal_m' }));
  const past = new Date(Date.now() - 120_000).toISOString();
  await t.database.db.updateTable('webhook_deliveries').set({ next_attempt_at: past }).where('tenant_id', '=', ten.tenantId).execute();
  const age = sample(await scrape(), 'crm_webhook_oldest_due_delivery_age_seconds');
  // PostgreSQL's `test` database is shared with other files, whose due deliveries may be older still.
  assert.ok(age >= 120 && (DIALECT === 'postgres' || age < 3600), `oldest due delivery ${age} s`);
  await t.database.db.updateTable('webhook_deliveries').set({ status: 'delivered', next_attempt_at: null }).where('tenant_id', '=', ten.tenantId).execute();
});

test('PostgreSQL: the pool of writes and point reads is shown', { skip: DIALECT !== 'postgres' && 'PostgreSQL only' }, async () => {
  const text = await scrape();
  assert.ok(sample(text, 'crm_db_pool_connections{state="total"}') >= 1);
  assert.ok(text.includes('crm_db_pool_connections{state="waiting"}'));
});

test('METRICS=false: no /metrics route', async () => {
  const off = await testApp({ METRICS: 'false' });
  assert.equal((await off.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404);
});
