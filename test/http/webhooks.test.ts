import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, DIALECT, newTenant, testApp, type TestApp } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { isolatedPostgresUrl } from '../helpers/webhooks-e2e.js';
import { emitEvent } from '../../src/events/outbox.js';
import { EVENT_TYPES } from '../../src/events/catalog.js';
import { withTx } from '../../src/db/index.js';
import { decryptSecret } from '../../src/util/crypto.js';
import { openHeaders } from '../../src/modules/webhooks/webhooks.service.js';
import { SCOPES } from '../../src/auth/scopes.js';

// NOTE: the delivery queue is global to a database; on PostgreSQL this file gets its own database so no
// worker process of another test file attempts (and changes) the deliveries observed here.
const t: TestApp = await testApp(DIALECT === 'postgres' ? { DATABASE_URL: await isolatedPostgresUrl('webhooks_http') } : {});

const HOOK = { name: 'ERP', url: 'https://hooks.example.com/crm', events: ['deal.won'] };

function setupWithKeys() {
  const s = STANDARD_SETUP();
  s.apiKeys.push(
    { ref: 'hooks', name: 'Hooks only', user: 'ana', scopes: ['webhooks:manage'] },
    { ref: 'almost', name: 'Everything else', user: 'ana', scopes: SCOPES.filter((x) => x !== 'webhooks:manage') },
  );
  return s;
}

async function emit(tenantId: string, type: (typeof EVENT_TYPES)[number]['key'], record: Record<string, unknown> = { id: 'rec_1' }) {
  return withTx(t.database.db, (tx) => emitEvent(tx, tenantId, type, record));
}

test('event types: the catalog of spec 6.1, the proposal status events and the changes of C.4', async () => {
  const { api } = await newTenant(t);
  const r = await api.get('/webhooks/event-types');
  assert.equal(r.status, 200);
  assert.deepEqual(
    r.body.map((e: any) => e.key),
    [
      'contact.created',
      'contact.updated',
      'contact.deleted',
      'contact.restored',
      'contact.erased',
      'contact.merged',
      'company.created',
      'company.updated',
      'company.deleted',
      'company.restored',
      'company.merged',
      'deal.created',
      'deal.updated',
      'deal.stage_changed',
      'deal.won',
      'deal.lost',
      'deal.deleted',
      'deal.restored',
      'activity.created',
      'activity.updated',
      'activity.deleted',
      'tag.created',
      'tag.updated',
      'tag.deleted',
      'list.member_added',
      'list.member_removed',
      'list.restored',
      'proposal.sent',
      'proposal.accepted',
      'proposal.declined',
      'proposal.expired',
      'proposal.restored',
      'form.submitted',
      'webhook.disabled',
    ],
  );
  for (const e of r.body) {
    assert.deepEqual(Object.keys(e).sort(), ['key', 'label', 'objectType']);
    assert.equal(e.objectType, e.key.split('.')[0]);
    assert.ok(e.label.length > 0);
  }
});

test('webhooks: create (201, full secret once), read, list, update, delete', async () => {
  const { api } = await newTenant(t);
  const c = await api.post('/webhooks', { ...HOOK, headers: { Authorization: 'Bearer x' } });
  assert.equal(c.status, 201);
  const w = c.body;
  assert.match(w.id, /^whk_/);
  assert.equal(w.name, 'ERP');
  assert.equal(w.url, HOOK.url);
  assert.deepEqual(w.events, ['deal.won']);
  assert.equal(w.isActive, true);
  assert.deepEqual(w.headers, { Authorization: '••••' }, 'header values are write-only, even in the create answer (C.5)');
  assert.match(w.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  assert.equal(Buffer.from(w.secret.slice(6), 'base64').length, 24);
  assert.equal(w.createdAt, w.updatedAt);
  assert.match(w.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const got = await api.get(`/webhooks/${w.id}`);
  assert.equal(got.status, 200);
  assert.equal(got.body.secret, w.secret.slice(0, 10), 'reads show whsec_ + 4 characters');
  assert.deepEqual({ ...got.body, secret: w.secret }, w);
  const list = await api.get('/webhooks');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body, [got.body]);
  assert.ok(!JSON.stringify(list.body).includes(w.secret));

  const inactive = await api.post('/webhooks', { ...HOOK, name: 'Off', isActive: false });
  assert.equal(inactive.body.isActive, false);
  assert.deepEqual(inactive.body.headers, {});
  assert.equal((await api.get('/webhooks')).body.length, 2);

  const p = await api.patch(`/webhooks/${w.id}`, {
    name: 'ERP 2',
    url: 'https://other.example.com:8443/x?y=1',
    events: ['deal.lost', 'deal.won', 'deal.lost'],
    isActive: false,
    headers: { 'X-Tenant': 'acme' },
  });
  assert.equal(p.status, 200);
  assert.equal(p.body.name, 'ERP 2');
  assert.equal(p.body.url, 'https://other.example.com:8443/x?y=1');
  assert.deepEqual(p.body.events, ['deal.lost', 'deal.won'], 'deduplicated, order kept');
  assert.equal(p.body.isActive, false);
  assert.deepEqual(p.body.headers, { 'X-Tenant': '••••' }, 'headers are replaced as a whole');
  assert.equal(p.body.secret, got.body.secret);
  assert.ok(p.body.updatedAt >= w.updatedAt);
  const same = await api.patch(`/webhooks/${w.id}`, {});
  assert.equal(same.status, 200);
  assert.deepEqual(same.body, p.body);
  const back = await api.patch(`/webhooks/${w.id}`, { isActive: true, headers: {} });
  assert.equal(back.body.isActive, true);
  assert.deepEqual(back.body.headers, {});

  assert.equal((await api.delete(`/webhooks/${w.id}`)).status, 204);
  assert.equal((await api.get(`/webhooks/${w.id}`)).status, 404);
  assert.equal((await api.delete(`/webhooks/${w.id}`)).status, 404);
  assert.equal((await api.patch(`/webhooks/${w.id}`, { isActive: false })).status, 404);
  assert.deepEqual(
    (await api.get('/webhooks')).body.map((x: any) => x.id),
    [inactive.body.id],
  );
});

test('webhooks: the secret is stored encrypted; rotation shows a new one once and replaces it', async () => {
  const { api, tenantId } = await newTenant(t);
  const w = (await api.post('/webhooks', HOOK)).body;
  const row = await t.database.db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', w.id).executeTakeFirstOrThrow();
  assert.ok(!row.secret_enc.includes(w.secret.slice(6)));
  assert.equal(decryptSecret(t.config.secretKey(), row.secret_enc, `webhook:${tenantId}:${w.id}`), w.secret);

  const r = await api.post(`/webhooks/${w.id}/rotate-secret`);
  assert.equal(r.status, 200);
  assert.match(r.body.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  assert.notEqual(r.body.secret, w.secret);
  assert.equal(r.body.id, w.id);
  assert.equal(r.body.name, w.name);
  assert.equal((await api.get(`/webhooks/${w.id}`)).body.secret, r.body.secret.slice(0, 10));
  const row2 = await t.database.db
    .selectFrom('webhooks')
    .select('secret_enc')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', w.id)
    .executeTakeFirstOrThrow();
  assert.equal(decryptSecret(t.config.secretKey(), row2.secret_enc, `webhook:${tenantId}:${w.id}`), r.body.secret);
  assert.equal((await api.post('/webhooks/whk_missing/rotate-secret')).status, 404);
});

test('webhooks: custom header values are write-only (C.5): every read masks them, the stored values stay real', async () => {
  const { api, tenantId } = await newTenant(t);
  const TOKEN = 'Bearer s3cr3t-token-value';
  const masked = { Authorization: '••••', 'X-Env': '••••' };
  const stored = async (id: string) => {
    const row = await t.database.db.selectFrom('webhooks').select('headers').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirstOrThrow();
    return openHeaders(t.config.secretKey(), tenantId, id, row.headers);
  };
  const c = await api.post('/webhooks', { ...HOOK, headers: { Authorization: TOKEN, 'X-Env': 'prod' } });
  assert.equal(c.status, 201);
  const id = c.body.id;
  const reads = [c, await api.get(`/webhooks/${id}`), await api.patch(`/webhooks/${id}`, { name: 'Renamed' }), await api.post(`/webhooks/${id}/rotate-secret`)];
  for (const r of reads) {
    assert.equal(r.status, r === c ? 201 : 200);
    assert.deepEqual(r.body.headers, masked);
    assert.ok(!r.raw.body.includes('s3cr3t') && !r.raw.body.includes('prod'), 'no value in any answer');
  }
  const list = await api.get('/webhooks');
  assert.deepEqual(list.body.find((w: any) => w.id === id).headers, masked);
  assert.ok(!list.raw.body.includes('s3cr3t'));
  // Writes keep the real values: what deliveries send (the e2e tests check the wire).
  assert.deepEqual(await stored(id), { Authorization: TOKEN, 'X-Env': 'prod' });

  // A PATCH with headers replaces them all, as before; the answer is masked too.
  const p = await api.patch(`/webhooks/${id}`, { headers: { Authorization: `${TOKEN}-2` } });
  assert.deepEqual(p.body.headers, { Authorization: '••••' });
  assert.deepEqual(await stored(id), { Authorization: `${TOKEN}-2` });
  // Sending back the mask a read showed would store the mask: refused, naming the header.
  const back = await api.patch(`/webhooks/${id}`, { headers: (await api.get(`/webhooks/${id}`)).body.headers });
  assert.equal(back.status, 400);
  assert.equal(back.body.error, 'validation_failed');
  assert.equal(back.body.details[0].field, 'headers.Authorization');
  assert.match(back.body.details[0].message, /masked/);
  assert.deepEqual(await stored(id), { Authorization: `${TOKEN}-2` }, 'nothing changed');
  assert.deepEqual((await api.get(`/webhooks/${id}`)).body.headers, { Authorization: '••••' });
});

test('webhooks: validation codes (validation_failed, invalid_url, invalid_event)', async () => {
  const { api } = await newTenant(t);
  const expect = async (body: unknown, code: string, field?: string) => {
    const r = await api.post('/webhooks', body as any);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, code, JSON.stringify(body));
    if (field) assert.ok(JSON.stringify(r.body).includes(field), `${JSON.stringify(body)} → ${JSON.stringify(r.body)}`);
  };
  // missing or mistyped fields
  await expect({ url: HOOK.url, events: HOOK.events }, 'validation_failed', 'name');
  await expect({ name: 'x', events: HOOK.events }, 'validation_failed', 'url');
  await expect({ name: 'x', url: HOOK.url }, 'validation_failed', 'events');
  await expect({}, 'validation_failed');
  await expect({ ...HOOK, name: '' }, 'validation_failed', 'name');
  await expect({ ...HOOK, name: '   ' }, 'validation_failed', 'name');
  await expect({ ...HOOK, url: 42 }, 'validation_failed', 'url');
  await expect({ ...HOOK, events: [] }, 'validation_failed', 'events');
  await expect({ ...HOOK, events: 'deal.won' }, 'validation_failed', 'events');
  await expect({ ...HOOK, events: [42] }, 'validation_failed', 'events[0]');
  await expect({ ...HOOK, isActive: 'true' }, 'validation_failed', 'isActive');
  await expect({ ...HOOK, extra: 1 }, 'validation_failed', 'extra');
  await expect({ ...HOOK, secret: 'whsec_mine' }, 'validation_failed', 'secret');
  await expect({ ...HOOK, id: 'whk_1' }, 'validation_failed', 'id');
  // URLs
  for (const url of [
    'http://hooks.example.com/x',
    'ftp://hooks.example.com',
    'hooks.example.com/x',
    'not a url',
    '',
    'https://',
    'https:// spaced.example.com',
    'https://user:pw@hooks.example.com/',
    `https://example.com/${'a'.repeat(2100)}`,
    'javascript:alert(1)',
  ]) {
    await expect({ ...HOOK, url }, 'invalid_url', 'url');
  }
  // events
  await expect({ ...HOOK, events: ['deal.won', 'deal.teleported'] }, 'invalid_event', 'events[1]');
  await expect({ ...HOOK, events: ['webhook.test'] }, 'invalid_event', 'events[0]');
  await expect({ ...HOOK, events: ['DEAL.WON'] }, 'invalid_event');
  // headers
  for (const name of [
    'Content-Type',
    'user-agent',
    'HOST',
    'Content-Length',
    'X-Service-Event',
    'x-service-anything',
    'Webhook-Id',
    'webhook-signature',
    'Connection',
    'Transfer-Encoding',
  ]) {
    await expect({ ...HOOK, headers: { [name]: 'v' } }, 'validation_failed', `headers.${name}`);
  }
  await expect({ ...HOOK, headers: { 'Bad Header': 'v' } }, 'validation_failed', 'headers.Bad Header');
  await expect({ ...HOOK, headers: { 'X-Ok': 'line\r\nInjected: 1' } }, 'validation_failed', 'headers.X-Ok');
  await expect({ ...HOOK, headers: { 'X-Ok': 1 } }, 'validation_failed', 'headers.X-Ok');
  await expect({ ...HOOK, headers: { 'X-A': '1', 'x-a': '2' } }, 'validation_failed', 'x-a');
  await expect({ ...HOOK, headers: ['X-A: 1'] }, 'validation_failed', 'headers');
  await expect({ ...HOOK, headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])) }, 'validation_failed', 'headers');
  assert.deepEqual((await api.get('/webhooks')).body, [], 'nothing was created');

  const ok = await api.post('/webhooks', {
    ...HOOK,
    url: 'https://10.0.0.1/private-is-judged-at-delivery',
    headers: { Authorization: 'Bearer t', 'X-Api-Version': '2' },
  });
  assert.equal(ok.status, 201);
  const id = ok.body.id;
  const patch = async (body: unknown, code: string) => {
    const r = await api.patch(`/webhooks/${id}`, body as any);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, code, JSON.stringify(body));
  };
  await patch({ url: 'http://hooks.example.com' }, 'invalid_url');
  await patch({ url: 'nope' }, 'invalid_url');
  await patch({ events: ['nope'] }, 'invalid_event');
  await patch({ events: [] }, 'validation_failed');
  await patch({ headers: { 'webhook-id': 'x' } }, 'validation_failed');
  await patch({ name: '' }, 'validation_failed');
  await patch({ isActive: null }, 'validation_failed');
  await patch({ secret: 'whsec_x' }, 'validation_failed');
  await patch({ createdAt: '2020-01-01T00:00:00.000Z' }, 'validation_failed');
  const after = (await api.get(`/webhooks/${id}`)).body;
  assert.deepEqual({ ...after, secret: ok.body.secret }, ok.body, 'failed patches change nothing');
});

test('webhooks: scope webhooks:manage is required, and is enough', async () => {
  const tenant = await newTenant(t, setupWithKeys());
  const hooks = tenant.as('hooks');
  const almost = tenant.as('almost');
  const created = await hooks.post('/webhooks', HOOK);
  assert.equal(created.status, 201);
  const id = created.body.id;
  const calls: [string, string, unknown?][] = [
    ['get', '/webhooks/event-types'],
    ['get', '/webhooks'],
    ['get', `/webhooks/${id}`],
    ['post', '/webhooks', HOOK],
    ['patch', `/webhooks/${id}`, { name: 'x' }],
    ['post', `/webhooks/${id}/rotate-secret`],
    ['post', `/webhooks/${id}/test`],
    ['get', `/webhooks/${id}/deliveries`],
    ['delete', `/webhooks/${id}`],
  ];
  for (const c of [almost, tenant.as('ro')]) {
    for (const [m, url, body] of calls) {
      const r = await (c as any)[m](url, body);
      assert.equal(r.status, 403, `${m} ${url}`);
      assert.equal(r.body.error, 'insufficient_scope');
      assert.deepEqual(r.body.required, ['webhooks:manage']);
    }
  }
  for (const [m, url] of [
    ['get', '/webhooks/event-types'],
    ['get', '/webhooks'],
    ['get', `/webhooks/${id}`],
    ['get', `/webhooks/${id}/deliveries`],
  ]) {
    assert.equal((await (hooks as any)[m](url)).status, 200, url);
  }
  assert.equal((await hooks.post(`/webhooks/${id}/rotate-secret`)).status, 200);
  assert.equal((await hooks.patch(`/webhooks/${id}`, { name: 'y' })).status, 200);
  assert.equal((await hooks.delete(`/webhooks/${id}`)).status, 204);
  assert.equal((await client(t.app, undefined).get('/webhooks')).status, 401);
});

test('webhooks: tenant isolation (webhooks, deliveries, rotation, test endpoint)', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const w = (await a.api.post('/webhooks', { ...HOOK, events: ['contact.created'] })).body;
  const mine = (await b.api.post('/webhooks', { ...HOOK, events: ['contact.created'] })).body;
  await emit(a.tenantId, 'contact.created');
  assert.equal((await b.api.get(`/webhooks/${w.id}`)).status, 404);
  assert.equal((await b.api.patch(`/webhooks/${w.id}`, { isActive: false })).status, 404);
  assert.equal((await b.api.post(`/webhooks/${w.id}/rotate-secret`)).status, 404);
  assert.equal((await b.api.post(`/webhooks/${w.id}/test`)).status, 404);
  assert.equal((await b.api.get(`/webhooks/${w.id}/deliveries`)).status, 404);
  assert.equal((await b.api.delete(`/webhooks/${w.id}`)).status, 404);
  assert.deepEqual(
    (await b.api.get('/webhooks')).body.map((x: any) => x.id),
    [mine.id],
  );
  assert.deepEqual((await b.api.get(`/webhooks/${mine.id}/deliveries`)).body, [], "A's event is not delivered to B's webhook");
  const still = (await a.api.get(`/webhooks/${w.id}`)).body;
  assert.equal(still.isActive, true);
  assert.equal(still.secret, w.secret.slice(0, 10));
  assert.equal((await a.api.get(`/webhooks/${w.id}/deliveries`)).body.length, 1);
});

test('events: one delivery per active webhook subscribed to the event, none for others; rolled back with the change', async () => {
  const { api, tenantId } = await newTenant(t);
  const sub = (await api.post('/webhooks', { ...HOOK, name: 'sub', events: ['contact.created', 'deal.won'] })).body;
  const other = (await api.post('/webhooks', { ...HOOK, name: 'other', events: ['deal.won'] })).body;
  const off = (await api.post('/webhooks', { ...HOOK, name: 'off', events: ['contact.created'], isActive: false })).body;
  const second = (await api.post('/webhooks', { ...HOOK, name: 'second', events: ['contact.updated', 'contact.created'] })).body;

  const contact = { id: 'con_1', firstName: 'Ana' };
  const eventId = await emit(tenantId, 'contact.created', contact);
  const ev = await t.database.db.selectFrom('events').selectAll().where('tenant_id', '=', tenantId).where('id', '=', eventId).executeTakeFirstOrThrow();
  assert.equal(ev.type, 'contact.created');
  const payload = JSON.parse(ev.payload);
  assert.deepEqual(Object.keys(payload), ['event', 'tenantId', 'timestamp', 'data']);
  assert.equal(payload.event, 'contact.created');
  assert.equal(payload.tenantId, tenantId);
  assert.deepEqual(payload.data, { contact });

  const d = (await api.get(`/webhooks/${sub.id}/deliveries`)).body;
  assert.equal(d.length, 1);
  assert.deepEqual(
    Object.keys(d[0]).sort(),
    [
      'attempts',
      'createdAt',
      'deliveredAt',
      'durationMs',
      'event',
      'eventId',
      'id',
      'nextAttemptAt',
      'responseSnippet',
      'status',
      'statusCode',
      'webhookId',
    ].sort(),
  );
  assert.equal(d[0].eventId, eventId);
  assert.equal(d[0].event, 'contact.created');
  assert.equal(d[0].webhookId, sub.id);
  assert.equal(d[0].status, 'pending');
  assert.equal(d[0].attempts, 0);
  assert.equal(d[0].statusCode, null);
  assert.equal(d[0].deliveredAt, null);
  assert.equal(d[0].nextAttemptAt, d[0].createdAt);
  assert.equal((await api.get(`/webhooks/${second.id}/deliveries`)).body.length, 1);
  assert.equal((await api.get(`/webhooks/${other.id}/deliveries`)).body.length, 0, 'not subscribed');
  assert.equal((await api.get(`/webhooks/${off.id}/deliveries`)).body.length, 0, 'inactive');

  // A change that rolls back takes its event and deliveries with it.
  await assert.rejects(
    withTx(t.database.db, async (tx) => {
      await emitEvent(tx, tenantId, 'deal.won', { id: 'deal_1' });
      throw new Error('rollback');
    }),
    /rollback/,
  );
  const events = await t.database.db.selectFrom('events').select('type').where('tenant_id', '=', tenantId).execute();
  assert.deepEqual(
    events.map((e) => e.type),
    ['contact.created'],
  );
  assert.equal((await api.get(`/webhooks/${sub.id}/deliveries`)).body.length, 1);
  assert.equal((await api.get(`/webhooks/${other.id}/deliveries`)).body.length, 0);

  // Events raised while inactive are never delivered, even after reactivation (B.9).
  await api.patch(`/webhooks/${off.id}`, { isActive: true });
  assert.equal((await api.get(`/webhooks/${off.id}/deliveries`)).body.length, 0);
  await emit(tenantId, 'contact.created');
  assert.equal((await api.get(`/webhooks/${off.id}/deliveries`)).body.length, 1);
});

test('deactivation ends waiting deliveries (never attempted, even after reactivation); deletion removes them', async () => {
  const { api, tenantId } = await newTenant(t);
  const w = (await api.post('/webhooks', { ...HOOK, events: ['deal.won'] })).body;
  await emit(tenantId, 'deal.won');
  await emit(tenantId, 'deal.won');
  const off = await api.patch(`/webhooks/${w.id}`, { isActive: false });
  assert.equal(off.status, 200);
  let d = (await api.get(`/webhooks/${w.id}/deliveries`)).body;
  assert.equal(d.length, 2);
  for (const x of d) {
    assert.equal(x.status, 'permanent_failure');
    assert.equal(x.lastError, 'webhook deactivated');
    assert.equal(x.nextAttemptAt, null);
    assert.equal(x.attempts, 0);
  }
  await emit(tenantId, 'deal.won');
  await api.patch(`/webhooks/${w.id}`, { isActive: true });
  d = (await api.get(`/webhooks/${w.id}/deliveries`)).body;
  assert.equal(d.length, 2, 'the event raised while inactive was not queued');
  assert.ok(
    d.every((x: any) => x.status === 'permanent_failure'),
    'reactivation does not revive them',
  );

  await emit(tenantId, 'deal.won');
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries`)).body.length, 3);
  assert.equal((await api.delete(`/webhooks/${w.id}`)).status, 204);
  const rows = await t.database.db.selectFrom('webhook_deliveries').select('id').where('tenant_id', '=', tenantId).where('webhook_id', '=', w.id).execute();
  assert.equal(rows.length, 0, 'nothing left for a worker to attempt');
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries`)).status, 404);
});

test('deliveries: newest first, limit default 50 and max 100', async () => {
  const { api, tenantId } = await newTenant(t);
  const w = (await api.post('/webhooks', { ...HOOK, events: ['deal.created'] })).body;
  const ids: string[] = [];
  for (let i = 0; i < 55; i++) {
    ids.push(await emit(tenantId, 'deal.created', { id: `deal_${i}` }));
    await new Promise((r) => setTimeout(r, 2)); // distinct createdAt (ties break by id)
  }
  const all = await api.get(`/webhooks/${w.id}/deliveries`);
  assert.equal(all.status, 200);
  assert.equal(all.body.length, 50);
  const five = (await api.get(`/webhooks/${w.id}/deliveries?limit=5`)).body;
  assert.deepEqual(
    five.map((x: any) => x.eventId),
    ids.slice(-5).reverse(),
  );
  assert.equal((await api.get(`/webhooks/${w.id}/deliveries?limit=100`)).body.length, 55);
  // C.5: `pageSize` is an alias of `limit` (same range); both given and different is 400 naming pageSize.
  assert.deepEqual((await api.get(`/webhooks/${w.id}/deliveries?pageSize=5`)).body, five);
  assert.deepEqual((await api.get(`/webhooks/${w.id}/deliveries?pageSize=5&limit=5`)).body, five);
  const clash = await api.get(`/webhooks/${w.id}/deliveries?pageSize=5&limit=6`);
  assert.equal(clash.status, 400);
  assert.deepEqual(
    clash.body.details.map((d: any) => d.field),
    ['pageSize'],
  );
  for (const q of ['limit=101', 'limit=0', 'limit=-1', 'limit=abc', 'page=2', 'pageSize=101', 'pageSize=0']) {
    const r = await api.get(`/webhooks/${w.id}/deliveries?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed', q);
  }
  assert.equal((await api.get('/webhooks/whk_nope/deliveries')).status, 404);
});

test('test endpoint: one attempt now, recorded in the history; private destinations refused by default', async () => {
  const { api } = await newTenant(t);
  const w = (await api.post('/webhooks', { ...HOOK, url: 'https://127.0.0.1:9/hook', isActive: false })).body;
  const r = await api.post(`/webhooks/${w.id}/test`);
  assert.equal(r.status, 200);
  assert.deepEqual(Object.keys(r.body).sort(), ['deliveryId', 'durationMs', 'error', 'responseSnippet', 'statusCode', 'success']);
  assert.equal(r.body.success, false);
  assert.equal(r.body.statusCode, null);
  assert.equal(r.body.responseSnippet, null);
  assert.match(r.body.error, /127\.0\.0\.1 is a private or reserved address/);
  const d = (await api.get(`/webhooks/${w.id}/deliveries`)).body;
  assert.equal(d.length, 1);
  assert.equal(d[0].id, r.body.deliveryId);
  assert.equal(d[0].event, 'webhook.test');
  assert.equal(d[0].status, 'permanent_failure', 'a test is never retried');
  assert.equal(d[0].attempts, 1);
  assert.equal(d[0].lastError, r.body.error);
  assert.equal(d[0].nextAttemptAt, null);
  assert.equal((await api.post('/webhooks/whk_nope/test')).status, 404);
});

test('openapi: the document describes every event payload in its webhooks section', async () => {
  const r = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(r.statusCode, 200);
  const doc = r.json();
  for (const key of [...EVENT_TYPES.map((e) => e.key), 'webhook.test']) {
    const op = doc.webhooks?.[key]?.post;
    assert.ok(op, `webhooks.${key}`);
    const schema = op.requestBody.content['application/json'].schema;
    assert.deepEqual(schema.required, ['event', 'tenantId', 'timestamp', 'data']);
  }
  assert.ok(doc.webhooks['deal.stage_changed'].post.requestBody.content['application/json'].schema.properties.data.properties.previousStageId);
  // Every reference of the section resolves (the record schemas belong to other modules).
  const refs = JSON.stringify(doc.webhooks).match(/"\$ref":"[^"]+"/g) ?? [];
  assert.ok(refs.length >= 3);
  for (const ref of refs) {
    const name = ref.slice(8, -1).replace('#/components/schemas/', '');
    assert.ok(doc.components.schemas[name], `${ref} resolves`);
  }
  assert.ok(doc.paths['/api/v1/webhooks'].post);
  assert.ok(doc.paths['/api/v1/webhooks/{id}/deliveries'].get);
});
