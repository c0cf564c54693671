// Webhook delivery end to end: the real `crm serve` process (dist/), its in-process delivery worker, and a
// real HTTPS receiver on 127.0.0.1 with a self-signed certificate trusted through NODE_EXTRA_CA_CERTS.
// Events are written here straight through the outbox (as the services do, in a transaction), so this
// file depends on no other resource; webhooks-events.test.ts fires them through the API operations.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { withTx } from '../../src/db/index.js';
import { emitEvent } from '../../src/events/outbox.js';
import type { EventType } from '../../src/events/catalog.js';
import { makeTestCert, opensslAvailable } from '../helpers/test-cert.js';
import { plainHeaders, startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { eventually, http, sleep, stack, type Stack } from '../helpers/webhooks-e2e.js';
import { CLI, IS_PG, TEST_SECRET, type RunningServer } from '../helpers/server.js';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const skip = !opensslAvailable() && 'openssl is not available to make the test certificate';

describe('webhook delivery (real server process, real HTTPS receiver)', { skip }, () => {
  let rx: Receiver;
  let s: Stack;
  let server: RunningServer;
  let api: ReturnType<typeof http>;
  let tenantId: string;
  let n = 0;

  before(async () => {
    const cert = makeTestCert();
    rx = await startReceiver(cert);
    s = await stack('webhooks_e2e', {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS: '1,1,1,1',
      WEBHOOK_TIMEOUT_MS: '1000',
      NODE_EXTRA_CA_CERTS: cert.caFile,
    });
    server = await s.start();
    const t = await s.tenant();
    tenantId = t.tenantId;
    api = http(server.url, t.apiKeys.full);
  });
  after(async () => {
    await server?.stop();
    await rx?.close();
  });

  /** A webhook to a fresh receiver path. */
  async function hook(events: string[], extra: Record<string, unknown> = {}) {
    const path = `/h${++n}`;
    const r = await api.post('/webhooks', { name: `hook ${n}`, url: rx.url(path), events, ...extra });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return { ...r.body, path } as { id: string; secret: string; path: string; url: string };
  }

  const emit = (type: EventType, record: Record<string, unknown>, extra?: Record<string, unknown>) =>
    withTx(s.database.db, (tx) => emitEvent(tx, tenantId, type, record, extra));

  const deliveries = async (id: string) => (await api.get(`/webhooks/${id}/deliveries`)).body as any[];

  function verify(secret: string, req: Receiver['requests'][number]) {
    const mine = Buffer.from('sha256=' + createHmac('sha256', secret).update(req.body).digest('hex'));
    const theirs = Buffer.from(String(req.headers['x-service-signature']));
    assert.ok(mine.length === theirs.length && timingSafeEqual(mine, theirs), 'X-Service-Signature verifies');
    new Webhook(secret).verify(req.body.toString('utf8'), plainHeaders(req.headers)); // throws if it does not
  }

  test('a delivery: headers, exact body, both signatures, custom headers, delivery record', async () => {
    const w = await hook(['deal.won'], { headers: { Authorization: 'Bearer token-1', 'X-Env': 'test' } });
    const unsubscribed = await hook(['deal.lost']);
    const deal = { id: 'deal_1', title: 'Big deal — ação', value: 1234.5 };
    const eventId = await emit('deal.won', deal);
    await rx.waitFor(() => rx.on(w.path).length === 1, 10_000, 'the delivery');
    const got = rx.on(w.path)[0];
    const stored = await s.database.db
      .selectFrom('events')
      .select('payload')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    assert.equal(got.body.toString('utf8'), stored.payload, 'the body is the stored payload, byte for byte');
    assert.equal(got.json.event, 'deal.won');
    assert.equal(got.json.tenantId, tenantId);
    assert.match(got.json.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(got.json.data, { deal });
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['user-agent'], 'Service-Webhook/1.0');
    assert.equal(got.headers['x-service-event'], 'deal.won');
    assert.match(String(got.headers['x-service-delivery']), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(got.headers['webhook-id'], eventId);
    assert.ok(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000) < 10);
    assert.match(String(got.headers['webhook-signature']), /^v1,/);
    assert.equal(got.headers.authorization, 'Bearer token-1');
    assert.equal(got.headers['x-env'], 'test');
    verify(w.secret, got);

    const d = await eventually(async () => (await deliveries(w.id)).find((x) => x.status === 'delivered'), 5000, 'delivered record');
    assert.equal(d.eventId, eventId);
    assert.equal(d.event, 'deal.won');
    assert.equal(d.statusCode, 200);
    assert.equal(d.responseSnippet, 'ok');
    assert.equal(d.attempts, 1);
    assert.equal(typeof d.durationMs, 'number');
    assert.ok(d.deliveredAt >= d.createdAt);
    assert.equal(d.nextAttemptAt, null);
    assert.equal(d.lastError, undefined);
    assert.equal(rx.on(unsubscribed.path).length, 0, 'not sent to a webhook not subscribed to it');
    assert.equal((await deliveries(unsubscribed.id)).length, 0);

    // The process that made the attempt counts it in GET /metrics (by outcome, no tenant or webhook id).
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const delivered = /^crm_webhook_attempts_total\{outcome="delivered"\} (\d+)$/m.exec(metrics);
    assert.ok(delivered && Number(delivered[1]) >= 1, 'crm_webhook_attempts_total{outcome="delivered"}');
    assert.ok(!metrics.includes(tenantId) && !metrics.includes(w.id), 'no tenant or webhook id in the metrics');
  });

  test('POST /webhooks/:id/test: one signed webhook.test attempt now, recorded', async () => {
    const w = await hook(['contact.created'], { isActive: false });
    rx.route(w.path, { status: 202, body: 'x'.repeat(5000) });
    const r = await api.post(`/webhooks/${w.id}/test`);
    assert.equal(r.status, 200);
    assert.equal(r.body.success, true);
    assert.equal(r.body.statusCode, 202);
    assert.equal(r.body.responseSnippet, 'x'.repeat(1024), 'at most 1 KiB of the answer');
    assert.equal(typeof r.body.durationMs, 'number');
    assert.equal(r.body.error, undefined);
    const got = rx.on(w.path);
    assert.equal(got.length, 1);
    assert.equal(got[0].headers['x-service-event'], 'webhook.test');
    assert.equal(got[0].json.event, 'webhook.test');
    assert.equal(got[0].json.data.webhook.id, w.id);
    verify(w.secret, got[0]);
    const d = await deliveries(w.id);
    assert.equal(d.length, 1);
    assert.deepEqual([d[0].id, d[0].event, d[0].status, d[0].attempts, d[0].statusCode], [r.body.deliveryId, 'webhook.test', 'delivered', 1, 202]);
    assert.equal(d[0].eventId, got[0].headers['webhook-id']);

    rx.route(w.path, { status: 503, body: 'down' });
    const bad = await api.post(`/webhooks/${w.id}/test`);
    assert.deepEqual([bad.body.success, bad.body.statusCode, bad.body.responseSnippet, bad.body.error], [false, 503, 'down', 'HTTP 503']);
    await sleep(1500);
    assert.equal(rx.on(w.path).length, 2, 'a failed test is not retried');
    assert.equal((await deliveries(w.id))[0].status, 'permanent_failure');
  });

  test('500, 404, timeouts and refused connections are retried on the short schedule; 5 attempts then permanent_failure', async () => {
    const fail500 = await hook(['deal.lost']);
    rx.route(fail500.path, { status: 500, body: 'boom' });
    const flaky404 = await hook(['deal.lost']);
    rx.route(flaky404.path, () => (rx.on(flaky404.path).length <= 2 ? { status: 404, body: 'not yet' } : { status: 204 }));
    const slow = await hook(['deal.lost']);
    rx.route(slow.path, () => (rx.on(slow.path).length === 1 ? { hang: true } : { status: 200 }));
    const refused = await hook(['deal.lost'], { url: 'https://127.0.0.1:1/refused' });
    const redirect = await hook(['deal.lost']);
    rx.route(redirect.path, { status: 301, headers: { location: rx.url(fail500.path) } });

    const t0 = Date.now();
    const eventId = await emit('deal.lost', { id: 'deal_2' });

    // Connection refused → retried; a new URL applies to the next attempt.
    const dRefused = await eventually(async () => (await deliveries(refused.id)).find((x) => x.attempts >= 2), 15_000, 'refused retried');
    assert.equal(dRefused.status, 'retry_scheduled');
    assert.equal(dRefused.statusCode, null);
    assert.equal(dRefused.lastError, 'connection refused');
    assert.equal((await api.patch(`/webhooks/${refused.id}`, { url: rx.url(refused.path) })).status, 200);
    const dFixed = await eventually(async () => (await deliveries(refused.id)).find((x) => x.status === 'delivered'), 15_000, 'delivered after the URL change');
    assert.ok(dFixed.attempts >= 3 && dFixed.attempts <= 5);
    assert.equal(rx.on(refused.path)[0].headers['webhook-id'], eventId);

    // 500 → five attempts, each a second or more after the previous one ended, then permanent_failure.
    const d500 = await eventually(async () => (await deliveries(fail500.id)).find((x) => x.status === 'permanent_failure'), 30_000, '500 → permanent_failure');
    assert.equal(d500.attempts, 5);
    assert.equal(d500.statusCode, 500);
    assert.equal(d500.responseSnippet, 'boom');
    assert.equal(d500.lastError, 'HTTP 500');
    assert.equal(d500.nextAttemptAt, null);
    const got500 = rx.on(fail500.path);
    assert.equal(got500.length, 5);
    for (let i = 1; i < 5; i++) assert.ok(got500[i].at - got500[i - 1].at >= 950, `retry ${i} waited the configured delay`);
    assert.ok(
      got500.every((r) => r.headers['webhook-id'] === eventId),
      'the same webhook-id on every attempt',
    );
    assert.equal(new Set(got500.map((r) => r.headers['x-service-delivery'])).size, 5, 'a new X-Service-Delivery per attempt');
    assert.ok(new Set(got500.map((r) => r.headers['webhook-timestamp'])).size >= 2, 'webhook-timestamp is the attempt time');

    // 404 twice, then 2xx → delivered at the third attempt.
    const d404 = await eventually(async () => (await deliveries(flaky404.id)).find((x) => x.status === 'delivered'), 15_000, '404 then delivered');
    assert.equal(d404.attempts, 3);
    assert.equal(d404.statusCode, 204);
    assert.equal(d404.lastError, undefined);

    // A hung destination is cut off at WEBHOOK_TIMEOUT_MS, then retried.
    const dSlow = await eventually(async () => (await deliveries(slow.id)).find((x) => x.status === 'delivered'), 15_000, 'timeout then delivered');
    assert.equal(dSlow.attempts, 2);
    const gotSlow = rx.on(slow.path);
    assert.ok(gotSlow[1].at - gotSlow[0].at >= 1700, 'timeout (1 s) + retry delay (1 s)');

    // A redirect is a failure, not followed.
    const dRedirect = await eventually(async () => (await deliveries(redirect.id)).find((x) => x.attempts >= 2), 15_000, 'redirect retried');
    assert.equal(dRedirect.statusCode, 301);
    assert.match(dRedirect.lastError, /redirect/);

    assert.ok(Date.now() - t0 < 60_000);
  });

  test('an intermediate failure is visible: retry_scheduled with lastError and nextAttemptAt', async () => {
    const w = await hook(['deal.created']);
    rx.route(w.path, { hang: true });
    await emit('deal.created', { id: 'deal_3' });
    const d = await eventually(async () => (await deliveries(w.id)).find((x) => x.attempts === 1), 10_000, 'first attempt');
    assert.equal(d.status, 'retry_scheduled');
    assert.match(d.lastError, /timeout/);
    assert.equal(d.statusCode, null);
    assert.ok(d.durationMs >= 900 && d.durationMs < 3000, `durationMs ${d.durationMs}`);
    assert.ok(d.nextAttemptAt > d.createdAt);
    await api.delete(`/webhooks/${w.id}`);
  });

  test('deleting or deactivating a webhook stops its scheduled retries at once', async () => {
    const del = await hook(['contact.updated']);
    const off = await hook(['contact.updated']);
    rx.route(del.path, { status: 500 });
    rx.route(off.path, { status: 500 });
    await emit('contact.updated', { id: 'con_1' });
    await rx.waitFor(() => rx.on(del.path).length === 1 && rx.on(off.path).length === 1, 10_000, 'first attempts');
    await eventually(async () => (await deliveries(off.id)).find((x) => x.status === 'retry_scheduled'), 5000, 'retry scheduled');
    assert.equal((await api.delete(`/webhooks/${del.id}`)).status, 204);
    assert.equal((await api.patch(`/webhooks/${off.id}`, { isActive: false })).status, 200);
    const [d] = await deliveries(off.id);
    assert.equal(d.status, 'permanent_failure');
    assert.match(d.lastError, /webhook deactivated/);
    await sleep(3500); // three retry delays
    assert.equal(rx.on(del.path).length, 1, 'no retry after deletion');
    assert.equal(rx.on(off.path).length, 1, 'no retry after deactivation');
    await api.patch(`/webhooks/${off.id}`, { isActive: true });
    await sleep(1500);
    assert.equal(rx.on(off.path).length, 1, 'reactivation does not revive them');
  });

  test('rotate-secret: the next attempt is signed with the new secret', async () => {
    const w = await hook(['proposal.sent']);
    rx.route(w.path, () => (rx.on(w.path).length === 1 ? { status: 500 } : { status: 200 }));
    await emit('proposal.sent', { id: 'prop_1' }, { previousStatus: 'draft' });
    await rx.waitFor(() => rx.on(w.path).length === 1, 10_000, 'first attempt');
    verify(w.secret, rx.on(w.path)[0]);
    const rotated = await api.post(`/webhooks/${w.id}/rotate-secret`);
    assert.equal(rotated.status, 200);
    const secret = rotated.body.secret;
    assert.notEqual(secret, w.secret);
    await rx.waitFor(() => rx.on(w.path).length === 2, 10_000, 'the retry');
    const retry = rx.on(w.path)[1];
    verify(secret, retry);
    assert.throws(() => verify(w.secret, retry), 'the old secret no longer verifies');
    assert.deepEqual(retry.json.data, { proposal: { id: 'prop_1' }, previousStatus: 'draft' });
  });

  test('private-network guard: without WEBHOOK_ALLOW_PRIVATE_NETWORKS a 127.0.0.1 destination is refused', async () => {
    const guarded = await stack('webhooks_ssrf', {
      WEBHOOK_RETRY_DELAYS: '1,1,1,1',
      WEBHOOK_TIMEOUT_MS: '1000',
      NODE_EXTRA_CA_CERTS: makeTestCert().caFile,
      // SQLite: no CRM_SECRET_KEY, so the server generates one into DATA_DIR (A.2) and uses it.
      CRM_SECRET_KEY: IS_PG ? TEST_SECRET : '',
    });
    const srv = await guarded.start();
    try {
      if (!IS_PG) assert.match(readFileSync(path.join(guarded.dataDir, 'secret.key'), 'utf8').trim(), /^[0-9a-f]{64}$/);
      const t = await guarded.tenant();
      const g = http(srv.url, t.apiKeys.full);
      const ssrfPath = '/ssrf';
      const w = (await g.post('/webhooks', { name: 'local', url: rx.url(ssrfPath), events: ['deal.won'] })).body;
      assert.match(w.id, /^whk_/, 'a private URL is accepted at creation (judged at delivery time)');
      const byName = (await g.post('/webhooks', { name: 'local by name', url: `https://localhost:${rx.port}${ssrfPath}`, events: ['deal.won'] })).body;
      await withTx(guarded.database.db, (tx) => emitEvent(tx, t.tenantId, 'deal.won', { id: 'deal_9' }));
      const d = await eventually(
        async () => ((await g.get(`/webhooks/${w.id}/deliveries`)).body as any[]).find((x) => x.attempts >= 1),
        10_000,
        'refused attempt',
      );
      assert.equal(d.status, 'retry_scheduled');
      assert.equal(d.statusCode, null);
      assert.match(d.lastError, /127\.0\.0\.1 is a private or reserved address/);
      const d2 = await eventually(
        async () => ((await g.get(`/webhooks/${byName.id}/deliveries`)).body as any[]).find((x) => x.attempts >= 1),
        10_000,
        'refused attempt by name',
      );
      assert.match(d2.lastError, /localhost resolves to .* private or reserved address/);
      const test = await g.post(`/webhooks/${w.id}/test`);
      assert.equal(test.body.success, false);
      assert.match(test.body.error, /private or reserved/);
      assert.equal(rx.on(ssrfPath).length, 0, 'nothing reached the receiver');
    } finally {
      await srv.stop();
    }
  });

  test(
    'CRM_SECRET_KEY: crm serve and crm worker refuse to start without it on PostgreSQL',
    { skip: !IS_PG && 'SQLite generates the key (covered above)' },
    () => {
      for (const command of ['serve', 'worker']) {
        const r = spawnSync(process.execPath, [CLI, command], { env: { ...s.env, CRM_SECRET_KEY: '', PORT: '0' }, encoding: 'utf8', timeout: 20_000 });
        assert.equal(r.status, 1, `${command}: ${r.stdout} ${r.stderr}`);
        const out = JSON.parse(r.stdout);
        assert.equal(out.error, 'invalid_config');
        assert.match(out.message, /CRM_SECRET_KEY/);
      }
    },
  );
});
