// Crash safety of the outbox and of the delivery worker, with the real server process killed with SIGKILL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestCert, opensslAvailable } from '../helpers/test-cert.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { eventually, http, sleep, stack, type Stack } from '../helpers/webhooks-e2e.js';

const skip = !opensslAvailable() && 'openssl is not available to make the test certificate';
const TIMEOUT_MS = 1000;

describe('webhooks survive crashes', { skip }, () => {
  let rx: Receiver;
  let s: Stack;
  let tenant: { tenantId: string; refs: Record<string, string>; apiKeys: Record<string, string> };

  before(async () => {
    const cert = makeTestCert();
    rx = await startReceiver(cert);
    s = await stack('webhooks_crash', {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS: '1,1,1,1',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      NODE_EXTRA_CA_CERTS: cert.caFile,
    });
    tenant = await s.tenant();
  });
  after(async () => {
    await rx?.close();
  });

  test('kill -9 right after the writes: every committed change has its event, in the event log, and every event is delivered', async () => {
    let server = await s.start();
    let api = http(server.url, tenant.apiKeys.full);
    const w = (await api.post('/webhooks', { name: 'crash', url: rx.url('/crash'), events: ['contact.created'] })).body;
    const slow = (await api.post('/webhooks', { name: 'in flight', url: rx.url('/in-flight'), events: ['contact.created'] })).body;
    // Until the crash, /in-flight never answers: its attempts are in flight (leased) when the process dies.
    let hang = true;
    rx.route('/in-flight', () => (hang ? { hang: true } : { status: 200 }));

    // A burst of writes, and SIGKILL as soon as an attempt to /in-flight is under way (on a busy machine the
    // worker may not have claimed one yet when the last 201 arrives).
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => api.post('/contacts', { firstName: `Burst ${i}`, email: `burst${i}@crash.test` })));
    await rx.waitFor(() => rx.on('/in-flight').length > 0, 10_000, 'an attempt in flight to /in-flight');
    await server.kill();
    hang = false;
    assert.ok(created.every((r) => r.status === 201));
    const ids = new Set(created.map((r) => r.body.id));

    // No change without its event, no event without its change.
    const events = await s.database.db
      .selectFrom('events')
      .select(['id', 'payload'])
      .where('tenant_id', '=', tenant.tenantId)
      .where('type', '=', 'contact.created')
      .execute();
    assert.deepEqual(new Set(events.map((e) => JSON.parse(e.payload).data.contact.id)), ids);
    const contacts = await s.database.db.selectFrom('contacts').select('id').where('tenant_id', '=', tenant.tenantId).execute();
    assert.deepEqual(new Set(contacts.map((c) => c.id)), ids);
    const eventIds = new Set(events.map((e) => e.id));

    // The attempts cut off by the crash: still leased, not recorded.
    const cutOff = await s.database.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'lease_until', 'attempts'])
      .where('tenant_id', '=', tenant.tenantId)
      .where('webhook_id', '=', slow.id)
      .where('lease_owner', 'is not', null)
      .where('status', 'in', ['pending', 'retry_scheduled'])
      .execute();
    assert.ok(cutOff.length > 0, 'some attempts were in flight at the crash');

    const restartedAt = Date.now();
    server = await s.start();
    api = http(server.url, tenant.apiKeys.full);
    // C.4: the event log holds every event committed before the kill, each once.
    const logged = await eventually(
      async () => {
        const page = (await api.get('/events?types=contact.created&limit=1000')).body;
        return page.data.length >= eventIds.size ? page.data : null;
      },
      10_000,
      'the event log after the restart',
    );
    assert.deepEqual(logged.map((e: any) => e.id).sort(), [...eventIds].sort());
    assert.deepEqual(new Set(logged.map((e: any) => e.data.contact.id)), ids);
    const has = (path: string) => new Set(rx.on(path).map((r) => String(r.headers['webhook-id'])));
    await rx.waitFor(() => [...eventIds].every((id) => has('/crash').has(id)), 20_000, 'every event at /crash');
    // An attempt cut off by the crash is made again once its lease (WEBHOOK_TIMEOUT_MS + 10 s) expires, not before.
    const again = (eventId: string) => rx.on('/in-flight').find((r) => r.headers['webhook-id'] === eventId && r.at >= restartedAt);
    await rx.waitFor(() => cutOff.every((c) => again(c.event_id)), 30_000, 'the interrupted attempts again');
    for (const c of cutOff) {
      const leaseEnd = Date.parse(c.lease_until!);
      const at = again(c.event_id)!.at;
      assert.ok(at >= leaseEnd - 50, 'never while the first attempt could still be running');
      assert.ok(at <= leaseEnd + 2_000, `redone ${at - leaseEnd} ms after the lease expired`);
    }
    await rx.waitFor(() => [...eventIds].every((id) => has('/in-flight').has(id)), 20_000, 'every event at /in-flight');

    const done = async (id: string) => {
      const d = (await api.get(`/webhooks/${id}/deliveries?limit=100`)).body as any[];
      return d.length === ids.size && d.every((x) => x.status === 'delivered') ? d : null;
    };
    await eventually(() => done(w.id), 10_000, 'delivery records of /crash');
    const records = await eventually(() => done(slow.id), 10_000, 'delivery records of /in-flight');
    for (const c of cutOff) assert.equal(records.find((d) => d.eventId === c.event_id).attempts, c.attempts + 1, 'the cut-off attempt is not counted');
    await server.stop();
  });

  test('SIGTERM: the server finishes the attempts in flight, records them and exits 0', async () => {
    const server = await s.start();
    const api = http(server.url, tenant.apiKeys.full);
    const w = (await api.post('/webhooks', { name: 'graceful', url: rx.url('/graceful'), events: ['contact.created'] })).body;
    rx.route('/graceful', { status: 200, delayMs: 600 });
    assert.equal((await api.post('/contacts', { firstName: 'Graceful', email: 'graceful@crash.test' })).status, 201);
    await rx.waitFor(() => rx.on('/graceful').length === 1, 10_000, 'the attempt');
    const code = await server.stop();
    assert.equal(code, 0);
    const [d] = await s.database.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('tenant_id', '=', tenant.tenantId)
      .where('webhook_id', '=', w.id)
      .execute();
    assert.equal(d.status, 'delivered', 'the attempt in flight was finished and recorded before exit');
    assert.equal(d.attempts, 1);
    assert.equal(d.lease_owner, null);
    await sleep(10);
  });
});
