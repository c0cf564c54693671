// Each event type fired by the operation that raises it (CONTRACT B.9), through the real server process,
// to a real HTTPS receiver: only to active webhooks subscribed to it, with the record as a single read
// returns it; and never for a write that failed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { dataKeyOf, EVENT_TYPES } from '../../src/events/catalog.js';
import { makeTestCert, opensslAvailable } from '../helpers/test-cert.js';
import { plainHeaders, startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { eventually, http, sleep, stack, type Stack } from '../helpers/webhooks-e2e.js';
import type { RunningServer } from '../helpers/server.js';

const skip = !opensslAvailable() && 'openssl is not available to make the test certificate';
const ALL = EVENT_TYPES.map((e) => e.key);

/** The first request of each event (webhook-id): delivery is at least once. */
function once(reqs: Receiver['requests']): Receiver['requests'] {
  const seen = new Set<string>();
  return reqs.filter((r) => {
    const id = String(r.headers['webhook-id']);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

describe('events fired by their operations', { skip }, () => {
  let rx: Receiver;
  let s: Stack;
  let server: RunningServer;
  let api: ReturnType<typeof http>;
  let tenant: { tenantId: string; refs: Record<string, string>; apiKeys: Record<string, string> };

  before(async () => {
    const cert = makeTestCert();
    rx = await startReceiver(cert);
    s = await stack('webhooks_events', {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS: '1,1,1,1',
      WEBHOOK_TIMEOUT_MS: '1000',
      NODE_EXTRA_CA_CERTS: cert.caFile,
    });
    server = await s.start();
    tenant = await s.tenant();
    api = http(server.url, tenant.apiKeys.full);
  });
  after(async () => {
    await server?.stop();
    await rx?.close();
  });

  test('every event type reaches exactly the webhooks subscribed to it', async () => {
    const { refs } = tenant;
    const mk = async (name: string, path: string, events: string[], isActive = true) => {
      const r = await api.post('/webhooks', { name, url: rx.url(path), events, isActive });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body;
    };
    const all = await mk('all', '/all', ALL);
    await mk('contacts', '/contact-created', ['contact.created']);
    await mk('closing', '/closing', ['deal.won', 'deal.lost']);
    await mk('proposals', '/proposal-final', ['proposal.accepted', 'proposal.declined', 'proposal.expired']);
    await mk('off', '/off', ALL, false);
    const ok = (r: { status: number; body: any }, status: number) => {
      assert.equal(r.status, status, JSON.stringify(r.body));
      return r.body;
    };

    // contacts: API create and update, form intake create and update
    const contact = ok(await api.post('/contacts', { firstName: 'Ana', email: 'ana@events.test' }), 201);
    ok(await api.patch(`/contacts/${contact.id}`, { lastName: 'Souza' }), 200);
    const form = ok(await api.get(`/forms/${refs.contact_us}`), 200);
    const embed = new URL(form.embedUrl);
    const intake = (body: unknown) =>
      fetch(`${server.url}${embed.pathname}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const sub1 = await intake({ email: 'lead@events.test', name: 'Lead' });
    assert.equal(sub1.status, 201, await sub1.clone().text());
    const formContactId = (await sub1.json()).contactId;
    const sub2 = await intake({ email: 'lead@events.test', name: 'Lead again' });
    assert.equal(sub2.status, 201);

    // deals: create, stage change, won; another lost
    const deal = ok(await api.post('/deals', { title: 'Deal A', pipelineId: refs.sales, stageId: refs.lead, value: 1000 }), 201);
    ok(await api.patch(`/deals/${deal.id}`, { stageId: refs.proposal }), 200);
    ok(await api.patch(`/deals/${deal.id}`, { isWon: true }), 200);
    const deal2 = ok(await api.post('/deals', { title: 'Deal B', pipelineId: refs.sales, stageId: refs.lead }), 201);
    ok(await api.patch(`/deals/${deal2.id}`, { isLost: true, lossReasonId: refs.price, lossNotes: 'too expensive' }), 200);

    // proposals: draft (no event) → sent → accepted / declined / expired
    const props = [];
    for (const [i, final] of ['accepted', 'declined', 'expired'].entries()) {
      const p = ok(await api.post('/proposals', { subject: `Proposal ${i}`, dealId: i === 0 ? deal.id : undefined }), 201);
      ok(await api.patch(`/proposals/${p.id}`, { status: 'sent' }), 200);
      ok(await api.patch(`/proposals/${p.id}`, { status: final }), 200);
      props.push(p);
    }

    // C.4: companies, tags, activities, static lists, deletions.
    const company = ok(await api.post('/companies', { name: 'Acme' }), 201);
    ok(await api.patch(`/companies/${company.id}`, { industry: 'Retail' }), 200);
    const tag = ok(await api.post('/tags', { name: 'Hot' }), 201);
    ok(await api.patch(`/tags/${tag.id}`, { color: '#00ff00' }), 200);
    const activity = ok(await api.post('/activities', { type: 'task', title: 'Call', contactIds: [contact.id] }), 201);
    ok(await api.patch(`/activities/${activity.id}`, { title: 'Call back' }), 200);
    ok(await api.delete(`/activities/${activity.id}`), 204);
    const list = ok(await api.post('/lists', { name: 'Static', objectType: 'contact', kind: 'static' }), 201);
    ok(await api.post(`/lists/${list.id}/members`, { objectIds: [contact.id] }), 200);
    ok(await api.delete(`/lists/${list.id}/members/${contact.id}`), 204);
    ok(await api.delete(`/tags/${tag.id}`), 204);
    const deal3 = ok(await api.post('/deals', { title: 'Deal C', pipelineId: refs.sales, stageId: refs.lead }), 201);
    ok(await api.delete(`/deals/${deal3.id}`), 204);
    ok(await api.delete(`/companies/${company.id}`), 204);
    ok(await api.delete(`/contacts/${formContactId}`), 204);

    // D.1 restores, D.2 merges, D.5 an erasure.
    ok(await api.post(`/contacts/${formContactId}/restore`), 200);
    ok(await api.post(`/companies/${company.id}/restore`), 200);
    ok(await api.post(`/deals/${deal3.id}/restore`), 200);
    ok(await api.delete(`/lists/${list.id}`), 204);
    ok(await api.post(`/lists/${list.id}/restore`), 200);
    ok(await api.delete(`/proposals/${props[1].id}`), 204);
    ok(await api.post(`/proposals/${props[1].id}/restore`), 200);
    const [c1, c2] = [ok(await api.post('/contacts', { firstName: 'M1' }), 201), ok(await api.post('/contacts', { firstName: 'M2' }), 201)];
    ok(await api.post('/contacts/merge', { primaryId: c1.id, mergedId: c2.id }), 200);
    const [o1, o2] = [ok(await api.post('/companies', { name: 'O1' }), 201), ok(await api.post('/companies', { name: 'O2' }), 201)];
    ok(await api.post('/companies/merge', { primaryId: o1.id, mergedId: o2.id }), 200);
    const erased = ok(await api.post('/contacts', { firstName: 'Gone' }), 201);
    ok(await api.post(`/contacts/${erased.id}/erase`), 204);

    const expected = [
      'contact.created',
      'contact.updated',
      'contact.created',
      'form.submitted',
      'contact.updated',
      'form.submitted',
      'deal.created',
      'deal.stage_changed',
      'deal.updated',
      'deal.won',
      'deal.updated',
      'deal.created',
      'deal.lost',
      'deal.updated',
      'proposal.sent',
      'proposal.accepted',
      'proposal.sent',
      'proposal.declined',
      'proposal.sent',
      'proposal.expired',
      'company.created',
      'company.updated',
      'tag.created',
      'tag.updated',
      'activity.created',
      'activity.updated',
      'activity.deleted',
      'list.member_added',
      'list.member_removed',
      'tag.deleted',
      'deal.created',
      'deal.deleted',
      'company.deleted',
      'contact.deleted',
      'contact.restored',
      'company.restored',
      'deal.restored',
      'list.restored',
      'proposal.restored',
      'contact.created',
      'contact.created',
      'contact.merged',
      'company.created',
      'company.created',
      'company.merged',
      'contact.created',
      'contact.erased',
    ];
    // Every type of the catalog but webhook.disabled (its own tests) is raised here.
    assert.deepEqual(
      ALL.filter((k) => !expected.includes(k)),
      ['webhook.disabled'],
    );
    await rx.waitFor(() => once(rx.on('/all')).length >= expected.length, 20_000, 'all events at /all');
    await sleep(1000); // nothing more should come
    // Delivery is at least once: a slow answer (a loaded machine, a 1 s timeout) may be retried, so
    // events are counted by their webhook-id.
    const got = once(rx.on('/all'));
    assert.deepEqual(got.map((r) => r.json.event).sort(), [...expected].sort(), 'each operation raised its event, once');
    for (const r of got) {
      assert.equal(r.headers['x-service-event'], r.json.event);
      assert.equal(r.json.tenantId, tenant.tenantId);
      const type = dataKeyOf(r.json.event);
      // `contact.erased` holds the id alone (dataKey '').
      assert.equal(typeof (type === '' ? r.json.data.id : r.json.data[type]?.id), 'string', `data.${type} holds the record`);
      assert.equal(r.headers['x-service-signature'], 'sha256=' + createHmac('sha256', all.secret).update(r.body).digest('hex'));
      new Webhook(all.secret).verify(r.body.toString('utf8'), plainHeaders(r.headers));
    }
    const find = (event: string, id: string) => got.find((r) => r.json.event === event && r.json.data[dataKeyOf(event)].id === id)!;

    // The record is the single read (the last event of a record carries its current state).
    assert.deepEqual(find('contact.updated', contact.id).json.data.contact, ok(await api.get(`/contacts/${contact.id}`), 200));
    assert.equal(find('contact.created', contact.id).json.data.contact.email, 'ana@events.test');
    assert.ok(find('contact.created', formContactId) && find('contact.updated', formContactId), 'form intake raises contact events');
    assert.deepEqual(find('deal.won', deal.id).json.data.deal, ok(await api.get(`/deals/${deal.id}`), 200));
    assert.deepEqual(find('deal.lost', deal2.id).json.data.deal, ok(await api.get(`/deals/${deal2.id}`), 200));
    const moved = find('deal.stage_changed', deal.id).json.data;
    assert.equal(moved.previousStageId, refs.lead);
    assert.equal(moved.deal.stageId, refs.proposal);
    assert.equal(find('deal.created', deal.id).json.data.deal.stageId, refs.lead);
    assert.deepEqual(find('proposal.expired', props[2].id).json.data.proposal, ok(await api.get(`/proposals/${props[2].id}`), 200));
    assert.equal(find('proposal.sent', props[0].id).json.data.proposal.status, 'sent');
    assert.deepEqual(find('company.updated', company.id).json.data.previous, { industry: null });
    assert.deepEqual(find('contact.deleted', formContactId).json.data.contact.id, formContactId);
    assert.equal(find('list.member_added', list.id).json.data.objectId, contact.id);

    // Only subscribed, active webhooks.
    assert.deepEqual(
      once(rx.on('/contact-created')).map((r) => r.json.event),
      ['contact.created', 'contact.created', 'contact.created', 'contact.created', 'contact.created'],
    );
    assert.deepEqual(
      once(rx.on('/closing'))
        .map((r) => r.json.event)
        .sort(),
      ['deal.lost', 'deal.won'],
    );
    assert.deepEqual(
      once(rx.on('/proposal-final'))
        .map((r) => r.json.event)
        .sort(),
      ['proposal.accepted', 'proposal.declined', 'proposal.expired'],
    );
    assert.equal(rx.on('/off').length, 0, 'an inactive webhook gets nothing');

    // Delivery records add up: one per (event, webhook), each delivered once.
    const records = await eventually(
      async () => {
        const d = (await api.get(`/webhooks/${all.id}/deliveries?limit=100`)).body as any[];
        return d.length === expected.length && d.every((x) => x.status === 'delivered') ? d : null;
      },
      15_000,
      'delivered records',
    );
    assert.deepEqual(new Set(records.map((d) => d.eventId)), new Set(got.map((r) => r.headers['webhook-id'])));
    assert.ok(records.every((d) => d.attempts >= 1));
    const perEvent = new Map<string, number>();
    for (const r of rx.on('/all')) perEvent.set(String(r.headers['webhook-id']), (perEvent.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    for (const d of records) assert.ok(perEvent.get(d.eventId)! <= d.attempts, 'no request beyond the recorded attempts');
  });

  test('a write that fails records no event (no event without its change)', async () => {
    const w = (await api.post('/webhooks', { name: 'failures', url: rx.url('/failures'), events: ALL })).body;
    const countEvents = async () => (await s.database.db.selectFrom('events').select('id').where('tenant_id', '=', tenant.tenantId).execute()).length;
    const first = await api.post('/contacts', { firstName: 'Dup', email: 'dup@events.test' });
    assert.equal(first.status, 201);
    await rx.waitFor(() => rx.on('/failures').length >= 1, 10_000, 'the first create');
    const before = await countEvents();

    const dup = await api.post('/contacts', { firstName: 'Dup 2', email: 'DUP@events.test' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error, 'duplicate_email');
    const other = (await api.post('/contacts', { firstName: 'Other', email: 'other@events.test' })).body;
    const dupPatch = await api.patch(`/contacts/${other.id}`, { email: 'dup@events.test' });
    assert.equal(dupPatch.status, 409);
    const deal = (await api.post('/deals', { title: 'X', pipelineId: tenant.refs.sales, stageId: tenant.refs.lead })).body;
    assert.equal((await api.patch(`/deals/${deal.id}`, { isWon: true, isLost: true })).status, 422);
    const bad = await api.post('/deals', { title: 'Y', pipelineId: tenant.refs.sales, stageId: tenant.refs.p_intro });
    assert.equal(bad.status, 409);
    const p = (await api.post('/proposals', { subject: 'Z' })).body;
    assert.equal((await api.patch(`/proposals/${p.id}`, { status: 'accepted' })).status, 422, 'draft → accepted is not a move');

    await sleep(1500);
    // Only the successful writes raised events: the second contact and the deal.
    assert.equal(await countEvents(), before + 2);
    assert.deepEqual(
      once(rx.on('/failures'))
        .map((r) => r.json.event)
        .sort(),
      ['contact.created', 'contact.created', 'deal.created'],
    );
    assert.deepEqual(
      once(rx.on('/failures'))
        .map((r) => r.json.data.contact?.email ?? r.json.data.deal.title)
        .sort(),
      ['X', 'dup@events.test', 'other@events.test'],
    );
    assert.equal((await api.get(`/webhooks/${w.id}/deliveries`)).body.length, 3);
  });
});
