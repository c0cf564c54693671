// Delivery operations of CONTRACT C.4 end to end: the real `crm serve` process and its delivery worker,
// a real HTTPS receiver on 127.0.0.1. Manual retry and recovery producing new attempts, Retry-After
// honoured, and a failing endpoint deactivated after WEBHOOK_DISABLE_AFTER_HOURS (set small here).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withTx } from '../../src/db/index.js';
import { emitEvent } from '../../src/events/outbox.js';
import { makeTestCert, opensslAvailable, type TestCert } from '../helpers/test-cert.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { eventually, http, stack, type Stack } from '../helpers/webhooks-e2e.js';
import type { RunningServer } from '../helpers/server.js';

const skip = !opensslAvailable() && 'openssl is not available to make the test certificate';

interface Running {
  s: Stack;
  server: RunningServer;
  api: ReturnType<typeof http>;
  tenantId: string;
}

async function running(label: string, cert: TestCert, extra: Record<string, string>): Promise<Running> {
  const s = await stack(label, {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_DELAYS: '1,1,1,1',
    WEBHOOK_TIMEOUT_MS: '2000',
    NODE_EXTRA_CA_CERTS: cert.caFile,
    ...extra,
  });
  const server = await s.start();
  const t = await s.tenant();
  return { s, server, api: http(server.url, t.apiKeys.full), tenantId: t.tenantId };
}

describe('delivery operations (real server process, real HTTPS receiver)', { skip }, () => {
  let rx: Receiver;
  let cert: TestCert;
  let main: Running;
  let n = 0;

  before(async () => {
    cert = makeTestCert();
    rx = await startReceiver(cert);
    main = await running('webhooks_ops', cert, {});
  });
  after(async () => {
    await main?.server.stop();
    await rx?.close();
  });

  async function hook(r: Running, events: string[]) {
    const path = `/ops${++n}`;
    const res = await r.api.post('/webhooks', { name: `hook ${n}`, url: rx.url(path), events });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { ...res.body, path } as { id: string; path: string };
  }
  const emit = (r: Running, record: Record<string, unknown>) => withTx(r.s.database.db, (tx) => emitEvent(tx, r.tenantId, 'deal.won', record));
  const deliveriesOf = async (r: Running, id: string) => (await r.api.get(`/webhooks/${id}/deliveries`)).body as any[];

  test('retry after permanent_failure: one more attempt now, same delivery and webhook-id, attempts 6', async () => {
    const w = await hook(main, ['deal.won']);
    rx.route(w.path, { status: 500, body: 'down' });
    const eventId = await emit(main, { id: 'deal_r' });
    const failed = await eventually(async () => (await deliveriesOf(main, w.id)).find((d) => d.status === 'permanent_failure'), 20_000, 'permanent_failure');
    assert.equal(failed.attempts, 5);
    assert.equal(rx.on(w.path).length, 5);
    rx.route(w.path, { status: 200, body: 'back' });
    const r = await main.api.post(`/webhooks/${w.id}/deliveries/${failed.id}/retry`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.id, failed.id);
    assert.equal(r.body.status, 'delivered');
    assert.equal(r.body.attempts, 6);
    assert.equal(r.body.statusCode, 200);
    assert.equal(r.body.responseSnippet, 'back');
    assert.equal(r.body.lastError, undefined);
    const got = rx.on(w.path);
    assert.equal(got.length, 6, 'exactly one more request');
    assert.equal(got[5].headers['webhook-id'], eventId, 'the same event id as every attempt');
    assert.notEqual(got[5].headers['x-service-delivery'], got[4].headers['x-service-delivery']);
    assert.equal((await deliveriesOf(main, w.id)).length, 1);
  });

  test('recover: permanent failures since a time are attempted again by the worker, with a fresh cycle', async () => {
    const w = await hook(main, ['deal.won']);
    rx.route(w.path, { status: 503, body: 'maintenance' });
    const since = new Date().toISOString();
    await emit(main, { id: 'deal_a' });
    await emit(main, { id: 'deal_b' });
    await eventually(
      async () => (await deliveriesOf(main, w.id)).filter((d) => d.status === 'permanent_failure').length === 2,
      20_000,
      'two permanent failures',
    );
    rx.route(w.path, { status: 204 });
    const r = await main.api.post(`/webhooks/${w.id}/recover`, { since });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { scheduled: 2 });
    const done = await eventually(
      async () => {
        const ds = await deliveriesOf(main, w.id);
        return ds.every((d) => d.status === 'delivered') && ds;
      },
      10_000,
      'both delivered after recovery',
    );
    assert.deepEqual(
      done.map((d: any) => d.attempts),
      [6, 6],
    );
    assert.equal(rx.on(w.path).length, 12);
  });

  test('Retry-After on 503 (seconds) and 429 (HTTP date) delays the next attempt at least that long', async () => {
    const w = await hook(main, ['deal.won']);
    let calls = 0;
    rx.route(w.path, () => {
      calls++;
      if (calls === 1) return { status: 503, headers: { 'retry-after': '3' } };
      if (calls === 2) return { status: 429, headers: { 'retry-after': new Date(Date.now() + 4_000).toUTCString() } };
      return { status: 200 };
    });
    await emit(main, { id: 'deal_ra' });
    await rx.waitFor(() => rx.on(w.path).length === 3, 20_000, 'three attempts');
    const [a, b, c] = rx.on(w.path).map((x) => x.at);
    assert.ok(b - a >= 2_900, `second attempt ${b - a} ms after the first: Retry-After 3 s beats the 1 s delay`);
    // An HTTP date has whole seconds: at least 3 s of the 4 s remain after rounding.
    assert.ok(c - b >= 2_900, `third attempt ${c - b} ms after the second`);
    const [d] = await eventually(
      async () => {
        const ds = await deliveriesOf(main, w.id);
        return ds[0]?.status === 'delivered' && ds;
      },
      5_000,
      'delivered',
    );
    assert.equal(d.attempts, 3);
  });

  test('a webhook failing for WEBHOOK_DISABLE_AFTER_HOURS is deactivated with disabledReason; webhook.disabled reaches the others', async () => {
    // Its own server and database: 0.0005 h = 1.8 s would deactivate the other tests' failing hooks too.
    const r = await running('webhooks_health', cert, { WEBHOOK_DISABLE_AFTER_HOURS: '0.0005' });
    try {
      const sick = await hook(r, ['deal.won']);
      const ops = await hook(r, ['webhook.disabled']);
      rx.route(sick.path, { status: 500, body: 'broken' });
      await emit(r, { id: 'deal_h' });
      await rx.waitFor(() => rx.on(ops.path).length === 1, 20_000, 'webhook.disabled delivered to the other webhook');
      const w = (await r.api.get(`/webhooks/${sick.id}`)).body;
      assert.equal(w.isActive, false);
      assert.match(w.disabledReason, /no successful delivery since .*last error: HTTP 500/);
      // Attempts 1 s apart from t0: the first failed attempt at or past 1.8 s is the third.
      assert.equal(rx.on(sick.path).length, 3);
      const [d] = await deliveriesOf(r, sick.id);
      assert.equal(d.status, 'permanent_failure');
      assert.equal(d.attempts, 3);
      const body = rx.on(ops.path)[0].json;
      assert.equal(body.event, 'webhook.disabled');
      assert.deepEqual(body.data.webhook, w, 'data.webhook is the webhook as GET /webhooks/:id returns it');
      await new Promise((res) => setTimeout(res, 1_500));
      assert.equal(rx.on(sick.path).length, 3, 'nothing more is sent to it');
      // Re-activated, it gets new events and a fresh health record.
      rx.route(sick.path, { status: 200 });
      const on = await r.api.patch(`/webhooks/${sick.id}`, { isActive: true });
      assert.equal(on.body.disabledReason, null);
      await emit(r, { id: 'deal_h2' });
      await rx.waitFor(() => rx.on(sick.path).length === 4, 10_000, 'delivered after reactivation');
    } finally {
      await r.server.stop();
    }
  });
});
