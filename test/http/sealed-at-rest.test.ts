// Issue 47 (3): stored idempotent answers are sealed at rest, and list cursors are opaque, on the dialect of this pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Config } from '../../src/config.js';
import { decodeCursor, encodeCursor } from '../../src/listing/cursor.js';
import { testApp, newTenant } from '../helpers/app.js';

const t = await testApp();
const db = t.database.db;
let seq = 0;
const uniq = (p: string) => `${p}-${process.pid}-${Date.now()}-${++seq}`;
const idem = (key: string) => ({ 'idempotency-key': key });

const storedBody = async (tenantId: string, idemKey: string) =>
  (
    await db
      .selectFrom('idempotency_keys')
      .select(['body', 'status_code'])
      .where('tenant_id', '=', tenantId)
      .where('idem_key', '=', idemKey)
      .executeTakeFirstOrThrow()
  ).body;

test('POST /webhooks and rotate-secret with an Idempotency-Key: the stored answer holds no secret; replays are byte-identical', async () => {
  const { api, tenantId } = await newTenant(t);
  const hookBody = { name: 'h', url: 'https://example.test/h', events: ['contact.created'] };
  const create = (key: string) => api.post('/webhooks', hookBody, idem(key));
  const createKey = uniq('create');
  const created = await create(createKey);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.match(created.body.secret, /^whsec_/);
  const rotate = (key: string) => api.post(`/webhooks/${created.body.id}/rotate-secret`, undefined, idem(key));
  const rotateKey = uniq('rotate');
  const rotated = await rotate(rotateKey);
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
  assert.match(rotated.body.secret, /^whsec_/);

  for (const [key, first, call] of [
    [createKey, created, create],
    [rotateKey, rotated, rotate],
  ] as const) {
    const secret: string = first.body.secret;
    const stored = (await storedBody(tenantId, key))!;
    assert.ok(!stored.includes(secret), 'the secret is not stored in clear');
    assert.ok(!stored.includes(secret.slice('whsec_'.length)), 'nor its base64 part');
    assert.ok(!stored.includes(created.body.id), 'no part of the answer is readable');
    assert.match(stored, /^v1\./);
    const again = await call(key);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.status, first.status);
    assert.equal(again.raw.body, first.raw.body, 'byte-identical replay, secret included');
  }
});

test('a row stored before sealing (plain JSON) still replays as it was', async () => {
  const { api, tenantId } = await newTenant(t);
  const key = uniq('legacy');
  const body = { firstName: uniq('Leg'), email: `${uniq('leg')}@x.test` };
  const first = await api.post('/contacts', body, idem(key));
  assert.equal(first.status, 201);
  // What the earlier version stored: the answer's text itself.
  await db.updateTable('idempotency_keys').set({ body: first.raw.body }).where('tenant_id', '=', tenantId).where('idem_key', '=', key).execute();
  const again = await api.post('/contacts', body, idem(key));
  assert.equal(again.status, 201);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.raw.body, first.raw.body);
});

test('a sealed answer moved to another row, or a row whose status was edited, does not open: 500, and the request does not run again', async () => {
  const { api, tenantId } = await newTenant(t);
  const name = uniq('Mov');
  const body = { firstName: name };
  const [k1, k2] = [uniq('a'), uniq('b')];
  assert.equal((await api.post('/contacts', body, idem(k1))).status, 201);
  assert.equal((await api.post('/contacts', body, idem(k2))).status, 201);
  const contacts = async () => (await db.selectFrom('contacts').select('id').where('tenant_id', '=', tenantId).where('first_name', '=', name).execute()).length;
  assert.equal(await contacts(), 2);
  // k2's row gets k1's sealed answer: same request (fingerprint), same status, another idempotency key.
  await db
    .updateTable('idempotency_keys')
    .set({ body: await storedBody(tenantId, k1) })
    .where('tenant_id', '=', tenantId)
    .where('idem_key', '=', k2)
    .execute();
  const moved = await api.post('/contacts', body, idem(k2));
  assert.equal(moved.status, 500, JSON.stringify(moved.body));
  assert.equal(moved.body.error, 'internal_error');
  // k1's row with another status.
  await db.updateTable('idempotency_keys').set({ status_code: 200 }).where('tenant_id', '=', tenantId).where('idem_key', '=', k1).execute();
  assert.equal((await api.post('/contacts', body, idem(k1))).status, 500);
  assert.equal(await contacts(), 2, 'nothing ran again');
});

test('a cursor of a list sorted by e-mail carries no readable value; it still pages, and is bound to its list', async () => {
  const { api } = await newTenant(t);
  const emails = Array.from({ length: 3 }, (_, i) => `sealed.person${i}.${uniq('m')}@example.test`.toLowerCase());
  for (const email of emails) assert.equal((await api.post('/contacts', { firstName: 'S', email }, idem(uniq('c')))).status, 201);
  const url = `/contacts?sortKey=email&sortOrder=asc&pageSize=1&search=${encodeURIComponent('sealed.person')}`;
  const first = await api.get(url);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.data[0].email, emails[0]);
  const cursor: string = first.body.pagination.nextCursor;
  for (const part of [cursor, ...cursor.split('.')]) {
    const text = Buffer.from(part, 'base64url').toString('latin1');
    assert.ok(!text.includes(emails[0]) && !text.includes('@example.test') && !text.includes('sealed'), 'no e-mail in the cursor');
    assert.ok(!text.includes(first.body.data[0].id), 'nor the id');
  }
  assert.ok(!cursor.includes(emails[0]));
  const second = await api.get(`${url}&cursor=${encodeURIComponent(cursor)}`);
  assert.equal(second.status, 200);
  assert.equal(second.body.data[0].email, emails[1]);
  const other = await api.get(`/contacts?sortKey=email&sortOrder=desc&pageSize=1&cursor=${encodeURIComponent(cursor)}`);
  assert.equal(other.status, 400);
  assert.equal(other.body.error, 'invalid_cursor');
});

test('cursor codec: round trip, binding, edits, another key; compact and fast', () => {
  const config = t.config;
  const binding = JSON.stringify(['v1', 'ten_1', 'key_1', '/contacts', 'email', 'asc', 'f']);
  const pos: [string, string] = ['someone.long.name@example-company.test', 'con_0190f3b27c1e7a2b8c3d1234567890ab'];
  const cursor = encodeCursor(config, binding, pos);
  assert.deepEqual(decodeCursor(config, binding, cursor), pos);
  assert.deepEqual(decodeCursor(config, binding, encodeCursor(config, binding, [null, 'x'])), [null, 'x']);
  assert.deepEqual(decodeCursor(config, binding, encodeCursor(config, binding, [12.5, 'x'])), [12.5, 'x']);
  // The nonce is synthetic: the same page gives the same cursor (answers keep their bytes), anything else another nonce.
  assert.equal(encodeCursor(config, binding, pos), cursor, 'the same position and binding: the same cursor');
  const nonceOf = (c: string) => Buffer.from(c.split('.')[0], 'base64url').subarray(0, 12).toString('hex');
  assert.notEqual(nonceOf(encodeCursor(config, binding, [pos[0], pos[1] + 'x'])), nonceOf(cursor), 'another position: another nonce');
  assert.notEqual(nonceOf(encodeCursor(config, binding.replace('key_1', 'key_2'), pos)), nonceOf(cursor), 'another binding: another nonce');
  // No longer than the signed base64 JSON it replaces (payload, dot, 43-character HMAC).
  const signedLength = Buffer.from(JSON.stringify(pos)).toString('base64url').length + 44;
  assert.ok(cursor.length <= signedLength, `compact: ${cursor.length} characters (signed JSON: ${signedLength})`);
  const invalid = (f: () => unknown) => assert.throws(f, (e: any) => e.statusCode === 400 && e.code === 'invalid_cursor');
  invalid(() => decodeCursor(config, binding.replace('key_1', 'key_2'), cursor));
  for (let i = 0; i < cursor.length; i++) {
    if (cursor[i] === '.') continue;
    const edited = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
    invalid(() => decodeCursor(config, binding, edited));
  }
  invalid(() => decodeCursor(config, binding, cursor + 'A'));
  const otherKey = { ...config, secretKey: () => Buffer.alloc(32, 7) } as Config;
  invalid(() => decodeCursor(otherKey, binding, cursor));
  // Made for every page, read for every page after the first: a few µs each.
  const N = 20_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) decodeCursor(config, binding, encodeCursor(config, binding, pos));
  const us = Number(process.hrtime.bigint() - start) / N / 1000;
  console.log(`cursor encode+decode: ${us.toFixed(2)} µs`);
  // Loose: a loaded CI machine is slow, but a key derived per call or a slow path would show here.
  assert.ok(us < 1000, `${us} µs`);
});
