// CONTRACT D.4 audit log: GET /audit-log (scope audit:read) lists, newest first and by cursor, an entry for every
// change — through the API (actor api_key: the key's id and name, the request's id, address and user agent), a
// public form's submission (public_form), the operator's CLI (operator) and the workers (system) — written in the
// change's transaction, with field names only, never values; filters objectType, objectId, actorId, action, since,
// until; append-only; entries past AUDIT_RETENTION_DAYS are deleted by the workers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { createKey, revokeKey } from '../../src/admin/keys.js';
import { retentionPass } from '../../src/workers/retention.js';

const t = await testApp();
let seq = 0;

async function post(api: Client, url: string, body: Record<string, unknown>): Promise<any> {
  const r = await api.post(url, body);
  assert.equal(r.status, 201, `${url} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function audit(api: Client, query = ''): Promise<any[]> {
  const r = await api.get(`/audit-log?pageSize=100${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data;
}

/** A tenant whose keys include one that may read the audit log only. */
async function tenant(): Promise<Tenant> {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push({ ref: 'auditor', name: 'Auditor', user: 'ana', scopes: ['audit:read'] });
  return newTenant(t, setup);
}

test('API changes: one entry each, newest first, actor api_key with the request’s id, address and agent, field names and never values', async () => {
  const ten = await tenant();
  const { api } = ten;
  const name = `Secret Name ${++seq}`;
  const created = await api.post('/companies', { name, domain: `secret${seq}.test` }, { 'user-agent': 'audit-test/1.0' });
  assert.equal(created.status, 201);
  const patched = await api.patch(`/companies/${created.body.id}`, { name: `${name} 2` });
  assert.equal(patched.status, 200);
  assert.equal((await api.delete(`/companies/${created.body.id}`)).status, 204);

  const entries = await audit(api, `&objectId=${created.body.id}`);
  assert.deepEqual(
    entries.map((e) => e.action),
    ['company.deleted', 'company.updated', 'company.created'],
  );
  const [, updated, first] = entries;
  assert.deepEqual(first.changes.sort(), ['domain', 'name']);
  assert.deepEqual(updated.changes, ['name']);
  const keyId = (
    await t.database.db.selectFrom('api_keys').select('id').where('tenant_id', '=', ten.tenantId).where('name', '=', 'Integration').executeTakeFirstOrThrow()
  ).id;
  assert.deepEqual(first.actor, { type: 'api_key', id: keyId, name: 'Integration' });
  assert.equal(first.requestId, created.headers['x-request-id']);
  assert.equal(first.userAgent, 'audit-test/1.0');
  assert.equal(first.ip, '127.0.0.1');
  assert.equal(first.objectType, 'company');
  assert.match(first.id, /^aud_/);
  assert.deepEqual(Object.keys(first).sort(), ['action', 'actor', 'changes', 'id', 'ip', 'objectId', 'objectType', 'occurredAt', 'requestId', 'userAgent']);
  const text = JSON.stringify(entries);
  assert.ok(!text.includes('Secret Name') && !text.includes(`secret${seq}.test`), 'no value of the record in the log');

  // A refused write leaves no entry (the entry is in the change's transaction).
  const before = (await audit(api)).length;
  assert.equal((await api.post('/companies', { name: 'Dup', domain: `taken${++seq}.test` })).status, 201);
  assert.equal((await api.post('/companies', { name: 'Dup 2', domain: `taken${seq}.test` })).status, 409);
  assert.equal((await audit(api)).length, before + 1);
});

test('contacts: created, updated, deleted and restored through the API, e-mail never in the log', async () => {
  const { api } = await tenant();
  const email = `private.person${++seq}@example.test`;
  const c = await post(api, '/contacts', { firstName: 'Private', email, phone: `+55 11 9${String(20_000_000 + seq)}` });
  assert.equal((await api.patch(`/contacts/${c.id}`, { lastName: 'Person' })).status, 200);
  assert.equal((await api.delete(`/contacts/${c.id}`)).status, 204);
  assert.equal((await api.post(`/contacts/${c.id}/restore`)).status, 200);
  const entries = await audit(api, `&objectId=${c.id}`);
  assert.deepEqual(
    entries.map((e) => e.action),
    ['contact.restored', 'contact.deleted', 'contact.updated', 'contact.created'],
  );
  assert.deepEqual(entries[3].changes.sort(), ['email', 'firstName', 'phone']);
  assert.deepEqual(entries[2].changes, ['lastName']);
  const text = JSON.stringify(entries);
  assert.ok(!text.includes(email) && !text.includes('Person'), text);
});

test('changes that raise no event: proposals, lists and webhooks (created, updated, deleted, secret rotated)', async () => {
  const { api } = await tenant();
  const p = await post(api, '/proposals', { subject: `P${++seq}` });
  assert.equal((await api.patch(`/proposals/${p.id}`, { subject: 'Changed', status: 'sent' })).status, 200);
  assert.equal((await api.delete(`/proposals/${p.id}`)).status, 204);
  assert.deepEqual(
    (await audit(api, `&objectId=${p.id}`)).map((e) => [e.action, [...e.changes].sort()]),
    [
      ['proposal.deleted', []],
      ['proposal.updated', ['subject']],
      ['proposal.sent', ['status']],
      // A create names every field the new record holds (defaults included), never their values.
      ['proposal.created', ['adjustment', 'discount', 'number', 'ownerId', 'status', 'subject', 'subtotal', 'total']],
    ],
  );
  const l = await post(api, '/lists', { name: `L${++seq}`, objectType: 'contact', kind: 'static' });
  assert.equal((await api.patch(`/lists/${l.id}`, { description: 'x' })).status, 200);
  assert.equal((await api.delete(`/lists/${l.id}`)).status, 204);
  assert.deepEqual(
    (await audit(api, `&objectId=${l.id}`)).map((e) => [e.action, [...e.changes].sort()]),
    [
      ['list.deleted', []],
      ['list.updated', ['description']],
      ['list.created', ['kind', 'memberCount', 'name', 'objectType']],
    ],
  );
  const w = await post(api, '/webhooks', { name: 'Hook', url: 'https://hooks.example.com/crm', events: ['contact.created'] });
  assert.equal((await api.post(`/webhooks/${w.id}/rotate-secret`)).status, 200);
  assert.equal((await api.patch(`/webhooks/${w.id}`, { isActive: false })).status, 200);
  assert.equal((await api.delete(`/webhooks/${w.id}`)).status, 204);
  const hooks = await audit(api, `&objectId=${w.id}`);
  assert.deepEqual(
    hooks.map((e) => [e.action, e.changes]),
    [
      ['webhook.deleted', []],
      ['webhook.updated', ['isActive']],
      ['webhook.secret_rotated', ['secret']],
      ['webhook.created', ['name', 'url', 'events']],
    ],
  );
  assert.ok(!JSON.stringify(hooks).includes('whsec_'), 'no secret in the log');
});

test('filters (objectType, objectId, actorId, action, since, until) and cursor pages, newest first', async () => {
  const ten = await tenant();
  const { api } = ten;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await post(api, '/tags', { name: `t${++seq}` })).id);
  // `since` and `until` are inclusive, to the millisecond: `mid` is a millisecond of its own.
  await new Promise((r) => setTimeout(r, 5));
  const mid = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 5));
  const other = await post(ten.as('wo'), '/contacts', { firstName: 'By wo' });
  const all = await audit(api);
  // Newest first: the contact, then the tags in reverse, then the setup's entries.
  assert.equal(all[0].objectId, other.id);
  assert.deepEqual(
    all.slice(1, 6).map((e) => e.objectId),
    [...ids].reverse(),
  );
  assert.deepEqual(
    (await audit(api, '&objectType=tag')).map((e) => e.objectId),
    [...ids].reverse(),
  );
  assert.deepEqual(
    (await audit(api, '&action=tag.created')).map((e) => e.objectId),
    [...ids].reverse(),
  );
  const woKey = all[0].actor.id;
  assert.deepEqual(
    (await audit(api, `&actorId=${woKey}`)).map((e) => e.objectId),
    [other.id],
  );
  assert.deepEqual(
    (await audit(api, `&since=${encodeURIComponent(mid)}`)).map((e) => e.objectId),
    [other.id],
  );
  assert.ok((await audit(api, `&until=${encodeURIComponent(mid)}`)).every((e) => e.objectId !== other.id));
  const bad = await api.get('/audit-log?since=yesterday');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, 'validation_failed');
  assert.equal(bad.body.details[0].field, 'since');

  // Cursor pages walk the same entries in the same order.
  const walked: string[] = [];
  let cursor: string | null = null;
  do {
    const r: any = await api.get(`/audit-log?pageSize=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.pagination.total, null);
    walked.push(...r.body.data.map((e: any) => e.id));
    cursor = r.body.pagination.nextCursor;
  } while (cursor);
  assert.deepEqual(
    walked,
    all.map((e) => e.id),
  );
});

test('scope audit:read (or *), one tenant’s entries only, and no call changes the log', async () => {
  const ten = await tenant();
  const other = await tenant();
  await post(ten.api, '/tags', { name: `mine ${++seq}` });
  const denied = await ten.as('ro').get('/audit-log');
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error, 'insufficient_scope');
  const mine = await audit(ten.as('auditor'));
  assert.ok(mine.length > 0);
  const theirs = await audit(other.api);
  assert.ok(theirs.every((e) => !mine.some((m) => m.id === e.id)));
  assert.deepEqual(await audit(other.api, `&objectId=${mine[0].objectId}`), []);
  for (const method of ['post', 'patch', 'put'] as const) {
    const r = await ten.api[method]('/audit-log', {});
    assert.ok(r.status >= 400 && r.status < 500, `${method} ${r.status}`);
  }
  assert.ok((await ten.api.delete(`/audit-log/${mine[0].id}`)).status >= 400);
  assert.deepEqual(
    (await audit(ten.api)).map((e) => e.id),
    mine.map((e) => e.id),
  );
});

test('actors public_form, operator and system: a submission, keys created and revoked, a setup, a purge', async () => {
  const ten = await tenant();
  const { api } = ten;
  // The setup of the tenant (the operator's `crm setup apply`) and its keys.
  const setupEntries = await audit(api, '&objectType=tenant');
  assert.deepEqual(
    setupEntries.map((e) => [e.action, e.actor]),
    [['tenant.setup_applied', { type: 'operator', id: null, name: null }]],
  );
  assert.ok(setupEntries[0].changes.includes('users'));
  const key = await createKey(t.database.db, { tenantId: ten.tenantId, name: 'Made by CLI', scopes: ['contacts:read'] });
  await revokeKey(t.database.db, key.id);
  assert.deepEqual(
    (await audit(api, `&objectId=${key.id}`)).map((e) => [e.action, e.actor.type, e.changes]),
    [
      ['api_key.revoked', 'operator', ['revokedAt']],
      ['api_key.created', 'operator', ['name', 'scopes', 'rateLimit']],
    ],
  );
  assert.ok(!JSON.stringify(await audit(api, `&objectId=${key.id}`)).includes(key.key), 'never the key');

  // A public form's submission: the form is the actor, with the submitter's address and agent.
  const form = (await api.get('/forms')).body.find((f: any) => f.slug === 'contact-us');
  const r = await t.app.inject({
    method: 'POST',
    url: new URL(form.embedUrl).pathname,
    payload: { email: `form${++seq}@acme.test`, name: 'Former', plan: 'ent' },
    headers: { 'user-agent': 'browser/9' },
    remoteAddress: '203.0.113.9',
  });
  assert.equal(r.statusCode, 201, r.body);
  const byForm = await audit(api, `&actorId=${form.id}`);
  assert.deepEqual(byForm.map((e) => e.action).sort(), ['contact.created', 'form.submitted']);
  for (const e of byForm) {
    assert.deepEqual(e.actor, { type: 'public_form', id: form.id, name: form.name });
    assert.equal(e.ip, '203.0.113.9');
    assert.equal(e.userAgent, 'browser/9');
  }

  // The workers: a deletion past the restore window is purged, with an entry of actor system.
  const c = await post(api, '/contacts', { firstName: 'Old' });
  assert.equal((await api.delete(`/contacts/${c.id}`)).status, 204);
  await sql`update contacts set deleted_at = ${new Date(Date.now() - 100 * 86_400_000).toISOString()} where id = ${c.id}`.execute(t.database.db);
  await retentionPass(t.database, { eventRetentionDays: 30, deliveryRetentionDays: 30, restoreWindowDays: 90 });
  const purged = (await audit(api, `&objectId=${c.id}`))[0];
  assert.equal(purged.action, 'contact.purged');
  assert.deepEqual(purged.actor, { type: 'system', id: null, name: null });
});

test('entries older than AUDIT_RETENTION_DAYS are deleted by the workers; younger ones stay', async () => {
  const { api, tenantId } = await tenant();
  const tag = await post(api, '/tags', { name: `kept ${++seq}` });
  const [newest, ...older] = await audit(api);
  assert.equal(newest.objectId, tag.id);
  await sql`update audit_log set occurred_at = ${new Date(Date.now() - 400 * 86_400_000).toISOString()} where tenant_id = ${tenantId} and id <> ${newest.id}`.execute(
    t.database.db,
  );
  const r = await retentionPass(t.database, { eventRetentionDays: 30, deliveryRetentionDays: 30, auditRetentionDays: 365 });
  assert.ok(r.audit >= older.length, JSON.stringify(r));
  assert.deepEqual(
    (await audit(api)).map((e) => e.id),
    [newest.id],
  );
});
