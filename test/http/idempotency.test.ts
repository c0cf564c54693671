// CONTRACT C.3: Idempotency-Key on every mutating POST, on the dialect of this pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createKey } from '../../src/admin/keys.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDatabase } from '../../src/db/index.js';
import { deleteExpiredIdempotencyKeys, lockId } from '../../src/plugins/idempotency.js';
import { client, DIALECT, newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';

const t = await testApp();
const db = t.database.db;
let seq = 0;
const uniq = (p: string) => `${p}-${process.pid}-${Date.now()}-${++seq}`;
const idem = (key: string) => ({ 'idempotency-key': key });

const storedRows = (tenantId: string, idemKey?: string) => {
  let q = db.selectFrom('idempotency_keys').selectAll().where('tenant_id', '=', tenantId);
  if (idemKey !== undefined) q = q.where('idem_key', '=', idemKey);
  return q.execute();
};
const eventsOfType = async (tenantId: string, type: string) =>
  await db.selectFrom('events').select(['id', 'payload']).where('tenant_id', '=', tenantId).where('type', '=', type).execute();
const contactsNamed = (tenantId: string, firstName: string) =>
  db.selectFrom('contacts').select('id').where('tenant_id', '=', tenantId).where('first_name', '=', firstName).execute();

async function activity(api: Client, refs: Record<string, string>): Promise<string> {
  const c = await api.post('/contacts', { firstName: uniq('Act') });
  assert.equal(c.status, 201, JSON.stringify(c.body));
  const r = await api.post('/activities', { type: 'task', title: uniq('Call'), contactIds: [c.body.id] });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  void refs;
  return r.body.id;
}

test('first call runs; a repeat replays status and body with Idempotent-Replayed and creates nothing', async () => {
  const { api, tenantId } = await newTenant(t);
  const key = uniq('k');
  const name = uniq('Ana');
  const first = await api.post('/contacts', { firstName: name, email: `${name}@x.test` }, idem(key));
  assert.equal(first.status, 201, JSON.stringify(first.body));
  assert.equal(first.headers['idempotent-replayed'], undefined);
  const again = await api.post('/contacts', { email: `${name}@x.test`, firstName: name }, idem(key)); // same body, keys reordered
  assert.equal(again.status, 201);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.match(String(again.headers['content-type']), /application\/json/);
  assert.equal(again.raw.body, first.raw.body);
  assert.equal((await contactsNamed(tenantId, name)).length, 1);
  const created = (await eventsOfType(tenantId, 'contact.created')).filter((e) => e.payload.includes(first.body.id));
  assert.equal(created.length, 1);
  assert.equal((await storedRows(tenantId, key)).length, 1);
  const list = await api.get(`/contacts?search=${encodeURIComponent(name)}`);
  assert.equal(list.body.pagination.total, 1);
});

test('same key with another body, path or method → 422 idempotency_key_reused; nothing runs', async () => {
  const { api, tenantId } = await newTenant(t);
  const key = uniq('k');
  const name = uniq('Bia');
  const first = await api.post('/contacts', { firstName: name }, idem(key));
  assert.equal(first.status, 201);
  const otherBody = await api.post('/contacts', { firstName: name + 'x' }, idem(key));
  assert.equal(otherBody.status, 422);
  assert.equal(otherBody.body.error, 'idempotency_key_reused');
  const otherPath = await api.post('/companies', { name }, idem(key));
  assert.equal(otherPath.status, 422);
  assert.equal(otherPath.body.error, 'idempotency_key_reused');
  const otherMethod = await api.patch(`/contacts/${first.body.id}`, { lastName: 'Changed' }, idem(key));
  assert.equal(otherMethod.status, 422);
  assert.equal(otherMethod.body.error, 'idempotency_key_reused');
  assert.equal((await api.get(`/contacts/${first.body.id}`)).body.lastName ?? null, null);
  assert.equal((await contactsNamed(tenantId, name + 'x')).length, 0);
  assert.equal((await api.get(`/companies?search=${encodeURIComponent(name)}`)).body.pagination.total, 0);
  // A PATCH with a fresh key simply runs (nothing is stored for it).
  const fresh = await api.patch(`/contacts/${first.body.id}`, { lastName: 'Fresh' }, idem(uniq('k')));
  assert.equal(fresh.status, 200);
});

test('an invalid Idempotency-Key is 400 validation_failed naming the header, and stores nothing', async () => {
  const { api, tenantId } = await newTenant(t);
  for (const bad of ['', 'x'.repeat(256), 'has space', 'tab\there', 'caf\u00e9']) {
    const r = await api.post('/contacts', { firstName: uniq('Bad') }, idem(bad));
    assert.equal(r.status, 400, `${JSON.stringify(bad)} → ${r.status}`);
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(r.body.details[0].field, 'Idempotency-Key');
  }
  const ok255 = await api.post('/contacts', { firstName: uniq('Ok') }, idem('~'.repeat(255)));
  assert.equal(ok255.status, 201);
  const visible = await api.post('/contacts', { firstName: uniq('Ok') }, idem('!"#$%&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~'));
  assert.equal(visible.status, 201);
  assert.equal((await storedRows(tenantId)).length, 2);
});

test('requests refused before they ran (401, 403, 400) store nothing: a corrected retry with the same key runs', async () => {
  const tenant = await newTenant(t);
  const { api, tenantId } = tenant;
  const key = uniq('k');
  const name = uniq('Cid');
  const noKey = await client(t.app, 'crm_live_' + 'x'.repeat(40)).post('/contacts', { firstName: name }, idem(key));
  assert.equal(noKey.status, 401);
  const ro = await tenant.as('ro').post('/contacts', { firstName: name }, idem(key));
  assert.equal(ro.status, 403);
  const shape = await api.post('/contacts', { firstName: 42 }, idem(key));
  assert.equal(shape.status, 400);
  const rule = await api.post('/contacts', { firstName: name, phone: 'not a phone' }, idem(key));
  assert.equal(rule.status, 400);
  assert.equal((await storedRows(tenantId, key)).length, 0);
  const ok = await api.post('/contacts', { firstName: name }, idem(key));
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  assert.equal(ok.headers['idempotent-replayed'], undefined);
  assert.equal((await contactsNamed(tenantId, name)).length, 1);
});

test('a business error of a request that ran (409, 404) is stored and replayed; it changed nothing', async () => {
  const { api, refs, tenantId } = await newTenant(t);
  const key = uniq('k');
  const title = uniq('Deal');
  const body = { title, pipelineId: refs.sales, stageId: refs.p_intro };
  const first = await api.post('/deals', body, idem(key));
  assert.equal(first.status, 409);
  assert.equal(first.body.error, 'stage_invalid');
  const again = await api.post('/deals', body, idem(key));
  assert.equal(again.status, 409);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.deepEqual(again.body, first.body);
  assert.equal((await api.get(`/deals?search=${encodeURIComponent(title)}`)).body.pagination.total, 0);

  // A failure part-way through a service (the list exists, one id does not) leaves nothing behind.
  const list = await api.post('/lists', { name: uniq('L'), objectType: 'contact', kind: 'static' });
  const c = await api.post('/contacts', { firstName: uniq('M') });
  const k2 = uniq('k');
  const missing = await api.post(`/lists/${list.body.id}/members`, { objectIds: [c.body.id, 'ctc_missing'] }, idem(k2));
  assert.equal(missing.status, 404);
  const replay = await api.post(`/lists/${list.body.id}/members`, { objectIds: [c.body.id, 'ctc_missing'] }, idem(k2));
  assert.equal(replay.status, 404);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal((await api.get(`/lists/${list.body.id}`)).body.memberCount, 0);
  assert.equal((await storedRows(tenantId, k2))[0].status_code, 404);
});

test('10 concurrent POSTs with one key: one record, one event; the others replay or get 409 with Retry-After: 1', async () => {
  const { api, tenantId } = await newTenant(t);
  const key = uniq('k');
  const name = uniq('Dora');
  const rs = await Promise.all(Array.from({ length: 10 }, () => api.post('/contacts', { firstName: name }, idem(key))));
  const statuses = rs.map((r) => r.status);
  const ran = rs.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
  assert.equal(ran.length, 1, JSON.stringify(statuses));
  for (const r of rs) {
    if (r.status === 201) assert.equal(r.body.id, ran[0].body.id);
    else {
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.equal(r.body.error, 'idempotency_key_in_use');
      assert.equal(r.headers['retry-after'], '1');
    }
  }
  assert.equal((await contactsNamed(tenantId, name)).length, 1);
  assert.equal((await eventsOfType(tenantId, 'contact.created')).filter((e) => e.payload.includes(ran[0].body.id)).length, 1);
  // Once the first has finished, a retry replays.
  const later = await api.post('/contacts', { firstName: name }, idem(key));
  assert.equal(later.status, 201);
  assert.equal(later.headers['idempotent-replayed'], 'true');
  assert.equal(later.body.id, ran[0].body.id);
});

test('two API keys, and two tenants, using the same idempotency key do not collide', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const key = uniq('shared');
  const name = uniq('Eva');
  const full = await a.api.post('/contacts', { firstName: name }, idem(key));
  const wo = await a.as('wo').post('/contacts', { firstName: name }, idem(key));
  const other = await b.api.post('/contacts', { firstName: name }, idem(key));
  for (const r of [full, wo, other]) {
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.headers['idempotent-replayed'], undefined);
  }
  assert.notEqual(full.body.id, wo.body.id);
  assert.equal((await contactsNamed(a.tenantId, name)).length, 2);
  assert.equal((await contactsNamed(b.tenantId, name)).length, 1);
  // Each still replays its own answer.
  assert.equal((await b.api.post('/contacts', { firstName: name }, idem(key))).body.id, other.body.id);
  assert.equal((await a.as('wo').post('/contacts', { firstName: name }, idem(key))).body.id, wo.body.id);
});

test('every call counts against the rate limit, replays included', async () => {
  const tenant = await newTenant(t);
  const created = await createKey(db, { tenantId: tenant.tenantId, name: 'limited', scopes: ['contacts:write'], rateLimit: 3 });
  const api = client(t.app, created.key);
  const key = uniq('k');
  const body = { firstName: uniq('Fay') };
  const r1 = await api.post('/contacts', body, idem(key));
  const r2 = await api.post('/contacts', body, idem(key));
  const r3 = await api.post('/contacts', body, idem(key));
  assert.deepEqual([r1.status, r2.status, r3.status], [201, 201, 201]);
  assert.deepEqual(
    [r1, r2, r3].map((r) => r.headers['x-ratelimit-remaining']),
    ['2', '1', '0'],
  );
  const r4 = await api.post('/contacts', body, idem(key));
  assert.equal(r4.status, 429);
  assert.equal(r4.body.error, 'rate_limit_exceeded');
});

test('batch-like POSTs: list members and activity bulk endpoints replay without applying twice', async () => {
  const { api, refs, tenantId } = await newTenant(t);
  const list = await api.post('/lists', { name: uniq('L'), objectType: 'contact', kind: 'static' });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await api.post('/contacts', { firstName: uniq('Mem') })).body.id);
  const key = uniq('k');
  const add = await api.post(`/lists/${list.body.id}/members`, { objectIds: ids }, idem(key));
  assert.equal(add.status, 200, JSON.stringify(add.body));
  assert.deepEqual(add.body, { added: 3, memberCount: 3 });
  // Membership changes in between; the replay still answers what the first call answered.
  await api.delete(`/lists/${list.body.id}/members/${ids[0]}`);
  const replay = await api.post(`/lists/${list.body.id}/members`, { objectIds: ids }, idem(key));
  assert.equal(replay.status, 200);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.deepEqual(replay.body, { added: 3, memberCount: 3 });
  assert.equal((await api.get(`/lists/${list.body.id}`)).body.memberCount, 2);

  const acts = [await activity(api, refs), await activity(api, refs)];
  const k2 = uniq('k');
  const done = await api.post('/activities/bulk/complete', { ids: acts, completed: true }, idem(k2));
  assert.deepEqual(done.body, { updated: 2 });
  const completedAt = (await api.get(`/activities/${acts[0]}`)).body.completedAt;
  assert.ok(completedAt);
  await api.post('/activities/bulk/complete', { ids: acts, completed: false });
  const again = await api.post('/activities/bulk/complete', { ids: acts, completed: true }, idem(k2));
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.deepEqual(again.body, { updated: 2 });
  assert.equal((await api.get(`/activities/${acts[0]}`)).body.completed, false, 'the replay changed nothing');
  assert.equal((await storedRows(tenantId)).length, 2);
});

test('status-changing and secret-issuing POSTs: webhook rotate-secret replays the same secret', async () => {
  const { api } = await newTenant(t);
  const hook = await api.post('/webhooks', { name: 'h', url: 'https://example.test/h', events: ['contact.created'] }, idem(uniq('k')));
  assert.equal(hook.status, 201);
  const key = uniq('k');
  const r1 = await api.post(`/webhooks/${hook.body.id}/rotate-secret`, undefined, idem(key));
  assert.equal(r1.status, 200, JSON.stringify(r1.body));
  const r2 = await api.post(`/webhooks/${hook.body.id}/rotate-secret`, undefined, idem(key));
  assert.equal(r2.headers['idempotent-replayed'], 'true');
  assert.equal(r2.body.secret, r1.body.secret);
  const r3 = await api.post(`/webhooks/${hook.body.id}/rotate-secret`, undefined, idem(uniq('k')));
  assert.notEqual(r3.body.secret, r1.body.secret);
});

test('read-only POSTs (search) ignore the header and store nothing', async () => {
  const { api, tenantId } = await newTenant(t);
  const key = uniq('k');
  const r = await api.post('/contacts/search', { filters: { operator: 'AND', conditions: [] } }, idem(key));
  assert.ok(r.status === 200 || r.status === 400, String(r.status));
  assert.equal((await storedRows(tenantId)).length, 0);
});

test('records past IDEMPOTENCY_TTL_HOURS are ignored, and the sweep deletes them in batches', async () => {
  const tenant: Tenant = await newTenant(t);
  const { api, tenantId } = tenant;
  const keys = [uniq('old'), uniq('old'), uniq('old'), uniq('new')];
  const names: string[] = [];
  for (const k of keys) {
    names.push(uniq('Gil'));
    assert.equal((await api.post('/contacts', { firstName: names.at(-1) }, idem(k))).status, 201);
  }
  const past = new Date(Date.now() - (t.config.idempotencyTtlHours + 1) * 3_600_000).toISOString();
  // Time passes for every answer stored up to keys[2], as it would. On SQLite that is everything before it
  // in insertion order (this file's own database), which the sweep walks oldest first (migration 010);
  // PostgreSQL's database is shared by the test files running at once, so there only this tenant's.
  if (DIALECT === 'sqlite') {
    await sql`update idempotency_keys set created_at = ${past}
      where rowid <= (select rowid from idempotency_keys where tenant_id = ${tenantId} and idem_key = ${keys[2]})`.execute(db);
  } else {
    await db.updateTable('idempotency_keys').set({ created_at: past }).where('tenant_id', '=', tenantId).where('idem_key', 'in', keys.slice(0, 3)).execute();
  }
  // Expired but not swept yet: the key runs again as new.
  const rerun = await api.post('/contacts', { firstName: names[0] }, idem(keys[0]));
  assert.equal(rerun.status, 201);
  assert.equal(rerun.headers['idempotent-replayed'], undefined);
  assert.equal((await contactsNamed(tenantId, names[0])).length, 2);

  const deleted = await deleteExpiredIdempotencyKeys(t.database, t.config.idempotencyTtlHours, Date.now(), 1);
  assert.ok(deleted >= 2, String(deleted));
  const left = (await storedRows(tenantId)).map((r) => r.idem_key).sort();
  assert.deepEqual(left, [keys[0], keys[3]].sort());
  const replay = await api.post('/contacts', { firstName: names[3] }, idem(keys[3]));
  assert.equal(replay.headers['idempotent-replayed'], 'true');
});

test('OpenAPI: Idempotency-Key on mutating POSTs only, with the 409/422 answers described', async () => {
  const { api } = await newTenant(t);
  const doc = (await api.get('/openapi.json')).body;
  const params = (op: any) => (op.parameters ?? []).filter((p: any) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
  for (const [path, op] of [
    ['/api/v1/contacts', 'post'],
    ['/api/v1/lists/{id}/members', 'post'],
    ['/api/v1/activities/bulk/complete', 'post'],
    ['/api/v1/webhooks/{id}/test', 'post'],
  ]) {
    const o = doc.paths[path][op];
    assert.equal(params(o).length, 1, path);
    assert.match(params(o)[0].description, /idempotency_key_reused/);
    assert.ok(o.responses['409'] && o.responses['422'], path);
  }
  assert.equal(params(doc.paths['/api/v1/contacts/search'].post).length, 0);
  assert.equal(params(doc.paths['/api/v1/contacts'].get).length, 0);
});

test('the answer is stored in the transaction of the change: when storing fails, the change is gone too', async () => {
  const { api, tenantId } = await newTenant(t);
  const postgres = t.database.dialect.name === 'postgres';
  // A trigger makes the insert of this one stored answer fail, after the contact was written.
  if (postgres) {
    await sql`create or replace function idem_test_boom() returns trigger language plpgsql as $$
      begin if new.idem_key like 'boom-%' then raise exception 'boom'; end if; return new; end $$`.execute(db);
    await sql`drop trigger if exists idem_test_boom on idempotency_keys`.execute(db);
    await sql`create trigger idem_test_boom before insert on idempotency_keys for each row execute function idem_test_boom()`.execute(db);
  } else {
    await sql`create trigger idem_test_boom before insert on idempotency_keys when new.idem_key like 'boom-%'
      begin select raise(abort, 'boom'); end`.execute(db);
  }
  try {
    const name = uniq('Hal');
    const key = uniq('boom');
    const r = await api.post('/contacts', { firstName: name }, idem(key));
    assert.equal(r.status, 500);
    assert.equal(r.body.error, 'internal_error');
    assert.equal((await contactsNamed(tenantId, name)).length, 0, 'no change without its stored answer');
    assert.equal((await storedRows(tenantId, key)).length, 0);
  } finally {
    await sql`drop trigger if exists idem_test_boom ${postgres ? sql`on idempotency_keys` : sql``}`.execute(db);
    if (postgres) await sql`drop function if exists idem_test_boom()`.execute(db);
  }
  // The key was released: a retry runs (and nothing else was left holding the connection).
  const name = uniq('Hal');
  const ok = await api.post('/contacts', { firstName: name }, idem(uniq('boom-not')));
  assert.equal(ok.status, 201);
});

test('PostgreSQL: two server processes sharing one database never run the same key twice', { skip: DIALECT !== 'postgres' }, async () => {
  // A second app with its own pool and its own in-process map is, for the database, another process.
  const database2 = createDatabase(t.config, { poolSize: 5 });
  const app2 = await buildApp({ config: t.config, database: database2 });
  await app2.ready();
  try {
    const tenant = await newTenant(t);
    const api2 = client(app2, tenant.apiKeys.full);
    for (let round = 0; round < 3; round++) {
      const key = uniq('k');
      const name = uniq('Ivo');
      const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? api2 : tenant.api).post('/contacts', { firstName: name }, idem(key))));
      const ran = rs.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
      assert.equal(ran.length, 1, JSON.stringify(rs.map((r) => r.status)));
      for (const r of rs) {
        if (r.status !== 201) {
          assert.equal(r.status, 409);
          assert.equal(r.body.error, 'idempotency_key_in_use');
          assert.equal(r.headers['retry-after'], '1');
        } else assert.equal(r.body.id, ran[0].body.id);
      }
      assert.equal((await contactsNamed(tenant.tenantId, name)).length, 1);
    }
    // A transaction holding the key in another session makes the repeat answer at once, not wait.
    const key = uniq('k');
    const held = await database2.db.startTransaction().execute();
    try {
      await sql`select pg_advisory_xact_lock(${lockId(tenant.refs.full, key)}::bigint)`.execute(held);
      const started = Date.now();
      const r = await tenant.api.post('/contacts', { firstName: uniq('Jo') }, idem(key));
      assert.equal(r.status, 409);
      assert.equal(r.body.error, 'idempotency_key_in_use');
      assert.ok(Date.now() - started < 2_000);
    } finally {
      await held.rollback().execute();
    }
  } finally {
    await app2.close();
    await database2.close();
  }
});

test('webhook test (outbound): runs outside the transaction, replays its result, and a claim in flight is 409 until its lease ends', async () => {
  const { api, tenantId } = await newTenant(t);
  const hook = await api.post('/webhooks', { name: 'h', url: 'https://127.0.0.1:9/hook', events: ['contact.created'] });
  assert.equal(hook.status, 201);
  const key = uniq('k');
  const r1 = await api.post(`/webhooks/${hook.body.id}/test`, undefined, idem(key));
  assert.equal(r1.status, 200, JSON.stringify(r1.body));
  const r2 = await api.post(`/webhooks/${hook.body.id}/test`, undefined, idem(key));
  assert.equal(r2.status, 200);
  assert.equal(r2.headers['idempotent-replayed'], 'true');
  assert.equal(r2.body.deliveryId, r1.body.deliveryId);
  const deliveries = await api.get(`/webhooks/${hook.body.id}/deliveries`);
  assert.equal(deliveries.body.length, 1);
  assert.equal((await storedRows(tenantId, key))[0].status_code, 200);

  // A claim of another process still running: 409 at once; once its lease is over (a crash), the key runs.
  const k2 = uniq('k');
  const r3 = await api.post(`/webhooks/${hook.body.id}/test`, undefined, idem(k2));
  await db.updateTable('idempotency_keys').set({ status_code: 0, body: null }).where('tenant_id', '=', tenantId).where('idem_key', '=', k2).execute();
  const busy = await api.post(`/webhooks/${hook.body.id}/test`, undefined, idem(k2));
  assert.equal(busy.status, 409);
  assert.equal(busy.body.error, 'idempotency_key_in_use');
  assert.equal(busy.headers['retry-after'], '1');
  const stale = new Date(Date.now() - t.config.webhookTimeoutMs - 11_000).toISOString();
  await db.updateTable('idempotency_keys').set({ created_at: stale }).where('tenant_id', '=', tenantId).where('idem_key', '=', k2).execute();
  const rerun = await api.post(`/webhooks/${hook.body.id}/test`, undefined, idem(k2));
  assert.equal(rerun.status, 200);
  assert.equal(rerun.headers['idempotent-replayed'], undefined);
  assert.notEqual(rerun.body.deliveryId, r3.body.deliveryId);
});

test('IDEMPOTENCY_TTL_HOURS: default 24, fractions allowed, nonsense refused at start', () => {
  assert.equal(loadConfig({}).idempotencyTtlHours, 24);
  assert.equal(loadConfig({ IDEMPOTENCY_TTL_HOURS: '0.5' }).idempotencyTtlHours, 0.5);
  assert.equal(loadConfig({ IDEMPOTENCY_TTL_HOURS: '48' }).idempotencyTtlHours, 48);
  for (const bad of ['abc', '0', '-1', '1e3', '99999']) assert.throws(() => loadConfig({ IDEMPOTENCY_TTL_HOURS: bad }), /IDEMPOTENCY_TTL_HOURS/);
});

test("a business error after writes (an atomic batch whose second input collides) is stored; the first input's writes are gone", async () => {
  const { api, tenantId } = await newTenant(t);
  const holder = await api.post('/contacts', { firstName: 'Holder', email: `${uniq('h')}@x.test` });
  const fresh = `${uniq('fresh')}@x.test`;
  const body = {
    atomic: true,
    inputs: [
      { firstName: 'Fresh', email: fresh },
      { firstName: 'Dup', email: holder.body.email },
    ],
  };
  const key = uniq('k');
  const first = await api.post('/contacts/batch/create', body, idem(key));
  assert.equal(first.status, 409, JSON.stringify(first.body));
  assert.equal(first.body.existingContactId, holder.body.id);
  const again = await api.post('/contacts/batch/create', body, idem(key));
  assert.equal(again.status, 409);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.raw.body, first.raw.body);
  const rows = await db.selectFrom('contacts').select('id').where('tenant_id', '=', tenantId).where('email', '=', fresh).execute();
  assert.equal(rows.length, 0, 'the first input of the failed batch left nothing');
  assert.equal((await eventsOfType(tenantId, 'contact.created')).length, 1, "only the holder's event");
  assert.equal((await storedRows(tenantId, key))[0].status_code, 409);
});

test('a 400 of a request that ran (duplicate_proposal_for_deal) is stored and replayed; the 400s of a request refused as sent are not', async () => {
  const { api, refs, tenantId } = await newTenant(t);
  const d = await api.post('/deals', { title: uniq('D'), pipelineId: refs.sales, stageId: refs.lead });
  const first = await api.post('/proposals', { subject: 'first', dealId: d.body.id });
  assert.equal(first.status, 201, JSON.stringify(first.body));
  const key = uniq('k');
  const body = { subject: 'second', dealId: d.body.id };
  const dup = await api.post('/proposals', body, idem(key));
  assert.equal(dup.status, 400);
  assert.equal(dup.body.error, 'duplicate_proposal_for_deal');
  assert.equal((await storedRows(tenantId, key))[0]?.status_code, 400);
  // The deal is free again, yet the retry with the same key answers what the first attempt got (CONTRACT C.3).
  assert.equal((await api.delete(`/proposals/${first.body.id}`)).status, 204);
  const again = await api.post('/proposals', body, idem(key));
  assert.equal(again.status, 400);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.raw.body, dup.raw.body);
  assert.equal((await api.get('/proposals?search=second')).body.pagination.total, 0, 'no second proposal');

  // Refused as sent: a webhook's URL or its event key.
  const k2 = uniq('k');
  const refusals = [
    await api.post('/webhooks', { name: 'w', url: 'http://plain.example/h', events: ['contact.created'] }, idem(k2)),
    await api.post('/webhooks', { name: 'w', url: 'https://example.com/h', events: ['no.such'] }, idem(k2)),
  ];
  assert.deepEqual(
    refusals.map((r) => [r.status, r.body.error]),
    [
      [400, 'invalid_url'],
      [400, 'invalid_event'],
    ],
  );
  assert.equal((await storedRows(tenantId, k2)).length, 0);
  const fixed = await api.post('/webhooks', { name: 'w', url: 'https://example.com/h', events: ['contact.created'] }, idem(k2));
  assert.equal(fixed.status, 201, JSON.stringify(fixed.body));
});
