// The SDK against the real service: the compiled `crm serve` (dist/) on a free port, its own database (a
// fresh DATA_DIR on SQLite, a fresh PostgreSQL database on that pass), a tenant made by `crm setup apply`,
// and a real HTTPS receiver for the webhooks it delivers. Everything below goes through the SDK's sources
// (sdk/src) as an integrator's code would call it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createClient, CrmApiError, verifyWebhook, WebhookVerificationError, type CrmClient, type FetchLike } from '../../sdk/src/index.js';
import { makeTestCert, opensslAvailable } from '../helpers/test-cert.js';
import { plainHeaders, startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { stack } from '../helpers/webhooks-e2e.js';
import type { RunningServer } from '../helpers/server.js';

const skip = !opensslAvailable() && 'openssl is not available to make the test certificate';

describe('the SDK against a running server', { skip }, () => {
  let rx: Receiver;
  let server: RunningServer;
  let apiKey: string;
  let crm: CrmClient;
  /** Every request the SDK sent, as `METHOD path?query`. */
  const sent: string[] = [];
  const counting: FetchLike = (request, init) => {
    const u = new URL(request.url);
    sent.push(`${request.method} ${u.pathname}${u.search}`);
    return fetch(request, init);
  };

  before(async () => {
    const cert = makeTestCert();
    rx = await startReceiver(cert);
    const s = await stack('sdk', {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS: '1,1,1,1',
      WEBHOOK_TIMEOUT_MS: '2000',
      NODE_EXTRA_CA_CERTS: cert.caFile,
    });
    server = await s.start();
    apiKey = (await s.tenant()).apiKeys.full;
    crm = createClient({ baseUrl: server.url, apiKey, fetch: counting });
  });
  after(async () => {
    await server?.stop();
    await rx?.close();
  });

  test('restore: client.contacts.restore brings back a deleted contact, typed; a live one throws CrmApiError not_deleted', async () => {
    const { data: c } = await crm.POST('/api/v1/contacts', { body: { firstName: 'Restored', email: `r.${randomUUID().slice(0, 8)}@sdk.test` } });
    await crm.DELETE('/api/v1/contacts/{id}', { params: { path: { id: c.id } } });
    const back = await crm.contacts.restore(c.id);
    assert.equal(back.id, c.id);
    assert.equal(back.firstName, 'Restored');
    await assert.rejects(crm.contacts.restore(c.id), (err: unknown) => err instanceof CrmApiError && err.status === 409 && err.code === 'not_deleted');
    const { data: l } = await crm.POST('/api/v1/lists', { body: { name: `SDK ${randomUUID().slice(0, 8)}`, objectType: 'contact', kind: 'static' } });
    await crm.DELETE('/api/v1/lists/{id}', { params: { path: { id: l.id } } });
    assert.equal((await crm.lists.restore(l.id)).id, l.id);
  });

  test('duplicates: client.contacts.duplicates and client.companies.duplicates page the probable pairs, typed', async () => {
    const local = `sdk${randomUUID().slice(0, 8)}`;
    const { data: a } = await crm.POST('/api/v1/contacts', { body: { firstName: 'Dup', email: `${local}+crm@gmail.com` } });
    const { data: b } = await crm.POST('/api/v1/contacts', { body: { firstName: 'Other', email: `${local.slice(0, 4)}.${local.slice(4)}@gmail.com` } });
    const page = await crm.contacts.duplicates({ reason: 'email', pageSize: 100 });
    const pair = page.data.find((p) => p.ids.includes(a.id));
    assert.deepEqual(pair, { ids: [a.id, b.id].sort(), score: 0.9, reasons: ['email'] });
    assert.equal(sent.at(-1), 'GET /api/v1/contacts/duplicates?reason=email&pageSize=100');
    const companies = await crm.companies.duplicates();
    assert.ok(Array.isArray(companies.data));
    await assert.rejects(
      crm.contacts.duplicates({ reason: 'cnpj' as 'email' }),
      (err: unknown) => err instanceof CrmApiError && err.status === 400 && err.code === 'validation_failed',
    );
  });

  test('merge and erase: client.contacts.merge folds one contact into another, client.contacts.erase forgets one', async () => {
    const { data: a } = await crm.POST('/api/v1/contacts', { body: { firstName: 'Primary' } });
    const { data: b } = await crm.POST('/api/v1/contacts', {
      body: { firstName: 'Folded', lastName: 'Lastname', email: `m.${randomUUID().slice(0, 8)}@sdk.test` },
    });
    const merged = await crm.contacts.merge(a.id, b.id);
    assert.deepEqual([merged.id, merged.lastName, merged.email], [a.id, 'Lastname', b.email]);
    await assert.rejects(
      crm.GET('/api/v1/contacts/{id}', { params: { path: { id: b.id } } }),
      (err: unknown) => err instanceof CrmApiError && err.status === 404,
    );
    assert.equal(await crm.contacts.erase(a.id), undefined);
    await assert.rejects(crm.contacts.erase(a.id), (err: unknown) => err instanceof CrmApiError && err.status === 404);
  });

  test('audit log: client.auditLog.list pages the entries newest first, with filters', async () => {
    const { data: c } = await crm.POST('/api/v1/contacts', { body: { firstName: 'Audited' } });
    const page = await crm.auditLog.list({ objectId: c.id });
    assert.deepEqual(
      page.data.map((e) => e.action),
      ['contact.created'],
    );
    assert.equal(page.data[0].actor.type, 'api_key');
    assert.equal(page.pagination.total, null);
  });

  test('create, get and list a contact, typed end to end', async () => {
    const email = `ana.${randomUUID().slice(0, 8)}@sdk.test`;
    const { data: created, response } = await crm.POST('/api/v1/contacts', { body: { firstName: 'Ana', lastName: 'SDK', email: email.toUpperCase() } });
    assert.equal(response.status, 201);
    assert.match(created.id, /^con_/);
    assert.equal(created.email, email, 'the service lower-cases e-mails');

    const { data: read } = await crm.GET('/api/v1/contacts/{id}', { params: { path: { id: created.id } } });
    assert.deepEqual(read, created);

    const { data: page } = await crm.GET('/api/v1/contacts', { params: { query: { search: email, pageSize: 10 } } });
    assert.deepEqual(
      page.data.map((c) => c.id),
      [created.id],
    );
    assert.equal(page.pagination.total, 1);
    assert.equal(page.pagination.nextCursor, null);
  });

  test('a 404 throws CrmApiError with the contract body and the request id', async () => {
    const err = await crm.GET('/api/v1/contacts/{id}', { params: { path: { id: 'con_doesnotexist' } }, headers: { 'X-Request-Id': 'sdk-404-check' } }).then(
      () => assert.fail('a missing contact must throw'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof CrmApiError, String(err));
    assert.equal(err.status, 404);
    assert.equal(err.code, 'not_found');
    assert.equal(err.body.error, 'not_found');
    assert.ok(err.message.length > 0);
    assert.deepEqual(err.details, []);
    assert.equal(err.requestId, 'sdk-404-check');
    assert.equal(err.method, 'GET');
  });

  test('a 400 carries the validation details; a 409 its extras', async () => {
    const bad = { firstName: 42, score: 'high', nickname: 'x' } as unknown as { firstName: string };
    const err = await crm.POST('/api/v1/contacts', { body: bad }).catch((e: unknown) => e);
    assert.ok(err instanceof CrmApiError);
    assert.equal(err.status, 400);
    assert.equal(err.code, 'validation_failed');
    assert.deepEqual(err.details.map((d) => d.field).sort(), ['firstName', 'nickname', 'score']);
    assert.ok(err.details.every((d) => typeof d.message === 'string' && d.message.length > 0));
    assert.match(err.requestId ?? '', /.+/);

    const email = `dup.${randomUUID().slice(0, 8)}@sdk.test`;
    const { data: first } = await crm.POST('/api/v1/contacts', { body: { firstName: 'First', email } });
    const dup = await crm.POST('/api/v1/contacts', { body: { firstName: 'Second', email } }).catch((e: unknown) => e);
    assert.ok(dup instanceof CrmApiError);
    assert.equal(dup.status, 409);
    assert.equal(dup.code, 'duplicate_email');
    assert.equal(dup.body.existingContactId, first.id);
  });

  test('paginate walks every page of contacts, of a search and of the event log, each record once', async () => {
    const marker = `Paged${randomUUID().slice(0, 8)}`;
    const inputs = Array.from({ length: 120 }, (_, i) => ({ firstName: `P${i}`, lastName: marker }));
    const created: string[] = [];
    for (const chunk of [inputs.slice(0, 100), inputs.slice(100)]) {
      const { data, response } = await crm.POST('/api/v1/contacts/batch/create', { body: { inputs: chunk } });
      assert.equal(response.status, 200);
      assert.equal(data.failed, 0);
      for (const r of data.results) created.push(r.id!);
    }
    assert.equal(new Set(created).size, 120);

    const collect = async <T extends { id: string }>(it: AsyncIterable<T>) => {
      const ids: string[] = [];
      for await (const record of it) ids.push(record.id);
      return ids;
    };

    sent.length = 0;
    const listed = await collect(crm.paginate('/api/v1/contacts', { query: { search: marker, pageSize: 50 } }));
    assert.equal(listed.length, 120, 'each record once');
    assert.deepEqual([...listed].sort(), [...created].sort());
    assert.equal(sent.length, 3, `three pages: ${sent.join(', ')}`);
    assert.ok(
      sent.slice(1).every((r) => r.includes('cursor=') && !r.includes('page=')),
      'later pages by cursor',
    );

    sent.length = 0;
    const body = { filters: { operator: 'AND' as const, conditions: [{ field: 'lastName', operator: 'eq' as const, value: marker }] }, pageSize: 50 };
    const searched = await collect(crm.paginate('/api/v1/contacts/search', { body }));
    assert.deepEqual([...searched].sort(), [...created].sort());
    assert.equal(sent.length, 3);

    const fromLog = new Set<string>();
    let events = 0;
    for await (const event of crm.paginate('/api/v1/events', { query: { types: 'contact.created', limit: 50 } })) {
      events++;
      const contact = (event.data as { contact?: { id: string; lastName: string | null } }).contact;
      if (contact?.lastName === marker) fromLog.add(contact.id);
    }
    assert.deepEqual([...fromLog].sort(), [...created].sort());
    assert.ok(events >= 120);

    // Leaving the loop early stops fetching.
    sent.length = 0;
    for await (const _ of crm.paginate('/api/v1/contacts', { query: { search: marker, pageSize: 50 } })) break;
    assert.equal(sent.length, 1);
  });

  test('a POST cut off after the server ran it is retried with the same Idempotency-Key and replayed', async () => {
    const keys: (string | null)[] = [];
    let cut = false;
    const flaky: FetchLike = async (request, init) => {
      keys.push(request.headers.get('idempotency-key'));
      const response = await fetch(request, init);
      if (!cut) {
        // The server handled the request and answered; the client never sees the answer.
        cut = true;
        await response.arrayBuffer();
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
      }
      return response;
    };
    const client = createClient({ baseUrl: server.url, apiKey, fetch: flaky, retries: { retries: 2, baseDelayMs: 10 } });
    const email = `retry.${randomUUID().slice(0, 8)}@sdk.test`;
    const { data, response } = await client.POST('/api/v1/contacts', { body: { firstName: 'Retried', email } });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('idempotent-replayed'), 'true', 'the second attempt is the stored answer');
    assert.equal(keys.length, 2);
    assert.match(keys[0] ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(keys[1], keys[0], 'one key for every attempt of the call');

    const { data: page } = await crm.GET('/api/v1/contacts', { params: { query: { search: email } } });
    assert.deepEqual(
      page.data.map((c) => c.id),
      [data.id],
      'one contact was created',
    );

    // Another call gets another key; a key the caller gives is sent as given.
    const { response: other } = await client.POST('/api/v1/contacts', { body: { firstName: 'Other', email: `o.${email}` } });
    assert.equal(other.headers.get('idempotent-replayed'), null);
    assert.notEqual(keys[2], keys[0]);
    const mine = `order-${randomUUID()}`;
    const once = await crm.POST('/api/v1/contacts', { body: { firstName: 'Mine', email: `m.${email}` }, params: { header: { 'idempotency-key': mine } } });
    const twice = await crm.POST('/api/v1/contacts', { body: { firstName: 'Mine', email: `m.${email}` }, params: { header: { 'idempotency-key': mine } } });
    assert.equal(twice.response.headers.get('idempotent-replayed'), 'true');
    assert.equal(twice.data.id, once.data.id);
  });

  test('webhook deliveries: paginated through the Link header, each verified with verifyWebhook', async () => {
    const { data: hook } = await crm.POST('/api/v1/webhooks', { body: { name: 'SDK', url: rx.url('/sdk'), events: ['contact.created'] } });
    assert.ok(hook.secret?.startsWith('whsec_'));
    const secret = hook.secret!;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await crm.POST('/api/v1/contacts', { body: { firstName: `Hooked ${i}` } })).data.id);
    await rx.waitFor(() => rx.on('/sdk').length >= 5, 30_000, 'five deliveries');

    sent.length = 0;
    const deliveries = [];
    for await (const d of crm.paginate('/api/v1/webhooks/{id}/deliveries', { path: { id: hook.id }, query: { limit: 2 } })) deliveries.push(d);
    assert.equal(deliveries.length, 5);
    assert.equal(new Set(deliveries.map((d) => d.id)).size, 5, 'each delivery once');
    assert.equal(sent.length, 3, `pages of 2, 2 and 1: ${sent.join(', ')}`);

    const standard = new Webhook(secret);
    for (const rec of rx.on('/sdk')) {
      const payload = verifyWebhook(secret, rec.headers, rec.body);
      assert.equal(payload.event, 'contact.created');
      if (payload.event === 'contact.created') assert.ok(ids.includes(payload.data.contact.id));
      assert.deepEqual(standard.verify(rec.body.toString('utf8'), plainHeaders(rec.headers)), payload, 'the reference verifier agrees');

      const tampered = Buffer.from(rec.body);
      tampered[tampered.length - 2] ^= 1;
      assert.throws(
        () => verifyWebhook(secret, rec.headers, tampered),
        (e: unknown) => e instanceof WebhookVerificationError && e.reason === 'invalid_signature',
      );
      assert.throws(
        () => verifyWebhook(secret, rec.headers, rec.body, { now: new Date(Date.now() + 301_000) }),
        (e: unknown) => e instanceof WebhookVerificationError && e.reason === 'timestamp_out_of_tolerance',
      );
      assert.throws(() => verifyWebhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`, rec.headers, rec.body), WebhookVerificationError);
      // The X-Service-Signature variant alone.
      const { 'webhook-signature': _, ...serviceOnly } = rec.headers;
      assert.equal(verifyWebhook(secret, serviceOnly, rec.body).event, 'contact.created');
      assert.throws(
        () => verifyWebhook(secret, serviceOnly, tampered),
        (e: unknown) => e instanceof WebhookVerificationError && e.reason === 'invalid_signature',
      );
    }
  });
});
