// Several `crm worker` processes sharing one PostgreSQL delivery queue (FOR UPDATE SKIP LOCKED + leases,
// woken by LISTEN/NOTIFY): every event delivered at least once, never two attempts of one delivery at
// the same time, and the delivery records add up to what the receiver saw.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { withTx } from '../../src/db/index.js';
import { contextFor } from '../../src/http/context.js';
import { emitEvent } from '../../src/events/outbox.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { makeTestCert, opensslAvailable } from '../helpers/test-cert.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { eventually, IS_PG, stack, type Stack } from '../helpers/webhooks-e2e.js';
import type { RunningServer } from '../helpers/server.js';

const EVENTS = 1000;
const skip = !IS_PG
  ? 'PostgreSQL only (runs in the TEST_DB=postgres pass): several worker processes share one PostgreSQL queue'
  : !opensslAvailable() && 'openssl is not available to make the test certificate';

describe('two crm worker processes on one PostgreSQL queue', { skip }, () => {
  let rx: Receiver;
  let s: Stack;
  const workers: RunningServer[] = [];

  before(async () => {
    const cert = makeTestCert();
    rx = await startReceiver(cert);
    s = await stack('webhooks_scale', {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS: '1,1,1,1',
      // Generous: the test counts attempts exactly, and a busy CI machine must not turn a slow 200 into a timeout.
      WEBHOOK_TIMEOUT_MS: '10000',
      NODE_EXTRA_CA_CERTS: cert.caFile,
    });
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await rx?.close();
  });

  test(`${EVENTS} events: each delivered at least once, no attempt twice at a time, records add up`, async () => {
    const tenant = await s.tenant();
    const ctx = contextFor(s.database, s.config, tenant.tenantId, null);
    const hook = await createWebhook(ctx, { name: 'scale', url: rx.url('/scale'), events: ['deal.created'] });
    // Every tenth event fails its first attempt (retried a second later); answers take 0–20 ms.
    const failsFirst = (id: string) => createHash('sha256').update(id).digest()[0] % 10 === 0;
    rx.route('/scale', (r) => {
      const id = String(r.headers['webhook-id']);
      const nth = rx.on('/scale').filter((x) => x.headers['webhook-id'] === id).length;
      return { status: nth === 1 && failsFirst(id) ? 503 : 200, delayMs: Math.floor(Math.random() * 20) };
    });

    workers.push(await s.start({}, 'worker'), await s.start({}, 'worker'));
    await new Promise((r) => setTimeout(r, 1500)); // both LISTENing

    const t0 = Date.now();
    const eventIds: string[] = [];
    // Four writers, five events per transaction (as a write that raises several events would).
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = w * 5; i < EVENTS; i += 20) {
        await withTx(s.database.db, async (tx) => {
          for (let j = i; j < i + 5; j++) eventIds.push(await emitEvent(tx, tenant.tenantId, 'deal.created', { id: `deal_${j}`, title: `Deal ${j}` }));
        });
      }
    });
    await Promise.all(writers);

    const counts = async () =>
      s.database.db
        .selectFrom('webhook_deliveries')
        .select(['status', s.database.db.fn.countAll<number>().as('n'), s.database.db.fn.sum<number>('attempts').as('attempts')])
        .where('tenant_id', '=', tenant.tenantId)
        .groupBy('status')
        .execute();
    await eventually(async () => (await counts()).some((c) => c.status === 'delivered' && Number(c.n) === EVENTS), 90_000, `${EVENTS} delivered`);
    const elapsed = Date.now() - t0;

    const got = rx.on('/scale');
    const byEvent = new Map<string, number>();
    for (const r of got) byEvent.set(String(r.headers['webhook-id']), (byEvent.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    assert.deepEqual(new Set(byEvent.keys()), new Set(eventIds), 'every event reached the receiver');
    assert.equal(rx.maxConcurrentPerEvent(), 1, 'never two attempts of one delivery at the same time');

    const rows = await s.database.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'attempts', 'status', 'lease_owner'])
      .where('tenant_id', '=', tenant.tenantId)
      .execute();
    assert.equal(rows.length, EVENTS, 'one delivery record per event');
    const expectedRetries = eventIds.filter(failsFirst).length;
    let attempts = 0;
    for (const d of rows) {
      assert.equal(d.status, 'delivered');
      assert.equal(d.lease_owner, null);
      assert.equal(d.attempts, byEvent.get(d.event_id), `attempts of ${d.event_id} match what the receiver saw`);
      assert.equal(d.attempts, failsFirst(d.event_id) ? 2 : 1);
      attempts += d.attempts;
    }
    assert.equal(attempts, got.length, 'the records add up to the requests received');
    assert.equal(got.length, EVENTS + expectedRetries);
    assert.ok(
      workers.every((w) => w.proc.exitCode === null),
      'both workers still running',
    );
    console.log(`# ${EVENTS} events (${expectedRetries} retried once) delivered by 2 workers in ${elapsed} ms`);
    assert.equal(hook.events[0], 'deal.created');
  });
});
