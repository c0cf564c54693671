import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp, type Client } from '../helpers/app.js';
import { newId } from '../../src/util/ids.js';
import { nowIso } from '../../src/util/time.js';
import { withTx } from '../../src/db/index.js';
import { contextFor, type Ctx } from '../../src/http/context.js';
import * as contacts from '../../src/modules/contacts/contacts.service.js';

const t = await testApp();
const db = t.database.db;

/** A company row written directly (the contacts tests must not depend on the companies module). */
async function company(tenantId: string, fields: { domain?: string | null; deleted?: boolean } = {}): Promise<string> {
  const id = newId('com');
  const now = nowIso();
  await db
    .insertInto('companies')
    .values({
      tenant_id: tenantId,
      id,
      name: `Company ${id}`,
      cnpj: null,
      website: null,
      domain: fields.domain ?? null,
      phone: null,
      industry: null,
      owner_id: null,
      custom_properties: '{}',
      created_at: now,
      updated_at: now,
      deleted_at: fields.deleted ? now : null,
      search_text: '',
    })
    .execute();
  return id;
}

async function events(tenantId: string, type?: string): Promise<any[]> {
  let q = db.selectFrom('events').select(['type', 'payload', 'created_at']).where('tenant_id', '=', tenantId);
  if (type) q = q.where('type', '=', type);
  const rows = await q.orderBy('created_at').execute();
  return rows.map((r) => JSON.parse(r.payload));
}

const ctxFor = (tenantId: string, userId: string | null = null): Ctx => contextFor(t.database, t.config, tenantId, userId);

async function create(api: Client, body: Record<string, unknown>) {
  const r = await api.post('/contacts', body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

test('contacts: create returns the full record; single read equals it; defaults are null / [] / {}', async () => {
  const { api } = await newTenant(t);
  const c = await create(api, { firstName: 'Maria' });
  assert.match(c.id, /^con_/);
  assert.deepEqual(Object.keys(c).sort(), [
    'companyId',
    'createdAt',
    'customProperties',
    'email',
    'firstName',
    'id',
    'lastName',
    'ownerId',
    'phone',
    'score',
    'tags',
    'updatedAt',
  ]);
  assert.equal(c.lastName, null);
  assert.equal(c.email, null);
  assert.equal(c.phone, null);
  assert.equal(c.companyId, null);
  assert.equal(c.ownerId, null, 'no default owner: the spec gives a default only for activities and proposals');
  assert.equal(c.score, null);
  assert.deepEqual(c.tags, []);
  assert.deepEqual(c.customProperties, {});
  assert.match(c.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.equal(c.createdAt, c.updatedAt);
  const read = await api.get(`/contacts/${c.id}`);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body, c);
  const list = await api.get('/contacts');
  assert.deepEqual(list.body.data, [c]);
});

test('contacts: every field on create, normalized (e-mail trimmed and lower-cased, phone to E.164, names trimmed)', async () => {
  const { api, refs } = await newTenant(t);
  const tag1 = (await api.post('/tags', { name: 'VIP' })).body.id;
  const tag2 = (await api.post('/tags', { name: 'Lead' })).body.id;
  const companyId = await company((await db.selectFrom('users').select('tenant_id').where('id', '=', refs.ana).executeTakeFirstOrThrow()).tenant_id);
  const c = await create(api, {
    firstName: '  Maria ',
    lastName: ' Silva ',
    email: '  Maria.Silva@Example.COM ',
    phone: '(11) 98765-4321',
    companyId,
    ownerId: refs.ana,
    tags: [tag1, tag2, tag1],
    customProperties: {
      [refs.contact_email]: 'X@Y.COM',
      [refs.contact_phone]: '11 3333-4444',
      [refs.contact_datetime]: '2026-11-22T10:00:00-03:00',
      [refs.contact_number]: 7.5,
    },
    score: 42.5,
  });
  assert.equal(c.firstName, 'Maria');
  assert.equal(c.lastName, 'Silva');
  assert.equal(c.email, 'maria.silva@example.com');
  assert.equal(c.phone, '+5511987654321');
  assert.equal(c.companyId, companyId);
  assert.equal(c.ownerId, refs.ana);
  assert.deepEqual([...c.tags].sort(), [tag1, tag2].sort());
  assert.equal(c.score, 42.5);
  assert.deepEqual(c.customProperties, {
    [refs.contact_email]: 'x@y.com',
    [refs.contact_phone]: '+551133334444',
    [refs.contact_datetime]: '2026-11-22T13:00:00.000Z',
    [refs.contact_number]: 7.5,
  });
  assert.deepEqual((await api.get(`/contacts/${c.id}`)).body, c);
  // A phone given in E.164 with another country stays as is.
  const us = await create(api, { firstName: 'John', phone: '+1 415 555 2671' });
  assert.equal(us.phone, '+14155552671');
});

test('contacts: validation — 400 validation_failed naming the field, never coercion, never 5xx', async () => {
  const { api, refs } = await newTenant(t);
  const cases: [Record<string, unknown>, string][] = [
    [{}, 'firstName'],
    [{ firstName: '' }, 'firstName'],
    [{ firstName: '   ' }, 'firstName'],
    [{ firstName: 42 }, 'firstName'],
    [{ firstName: null }, 'firstName'],
    [{ firstName: 'A', score: '7' }, 'score'],
    [{ firstName: 'A', score: true }, 'score'],
    [{ firstName: 'A', email: 'not-an-email' }, 'email'],
    [{ firstName: 'A', email: 'a@b' }, 'email'],
    [{ firstName: 'A', email: 42 }, 'email'],
    [{ firstName: 'A', phone: '123' }, 'phone'],
    [{ firstName: 'A', phone: 'call me' }, 'phone'],
    [{ firstName: 'A', tags: 'tag_1' }, 'tags'],
    [{ firstName: 'A', tags: [1] }, 'tags[0]'],
    [{ firstName: 'A', customProperties: [] }, 'customProperties'],
    [{ firstName: 'A', customProperties: { nope: 1 } }, 'customProperties.nope'],
    [{ firstName: 'A', customProperties: { [refs.contact_number]: '7' } }, `customProperties.${refs.contact_number}`],
    [{ firstName: 'A', customProperties: { [refs.company_text]: 'x' } }, `customProperties.${refs.company_text}`],
    [{ firstName: 'A', extra: 1 }, 'extra'],
    [{ firstName: 'A', id: 'con_x' }, 'id'],
    [{ firstName: 'A', createdAt: '2026-01-01T00:00:00Z' }, 'createdAt'],
    [{ firstName: 'A', deletedAt: null }, 'deletedAt'],
    [{ firstName: 'x'.repeat(200_000) }, 'firstName'],
    [{ firstName: 'A', lastName: 'x'.repeat(200_000) }, 'lastName'],
    [{ firstName: 'A', email: 'a'.repeat(200_000) + '@x.com' }, 'email'],
    [{ firstName: 'A', phone: '9'.repeat(200_000) }, 'phone'],
  ];
  for (const [body, field] of cases) {
    const r = await api.post('/contacts', body);
    assert.equal(r.status, 400, JSON.stringify(body).slice(0, 100));
    assert.equal(r.body.error, 'validation_failed');
    assert.ok(
      r.body.details.some((d: any) => d.field === field),
      `${JSON.stringify(r.body.details)} should name ${field}`,
    );
  }
  assert.equal((await api.post('/contacts', '{"firstName": ')).body.error, 'invalid_json');
  assert.equal((await api.get('/contacts')).body.pagination.total, 0, 'nothing was written');
});

test('contacts: SQL-looking and odd strings are stored literally', async () => {
  const { api } = await newTenant(t);
  const evil = "Robert'); DROP TABLE contacts;--";
  const c = await create(api, { firstName: evil, lastName: '%_\\ "quoted" 🙂' });
  assert.equal(c.firstName, evil);
  assert.equal((await api.get(`/contacts/${c.id}`)).body.lastName, '%_\\ "quoted" 🙂');
  await create(api, { firstName: 'Plain' });
  const s = await api.get(`/contacts?search=${encodeURIComponent('%_')}`);
  assert.deepEqual(
    s.body.data.map((x: any) => x.id),
    [c.id],
    'LIKE wildcards in the search are literal',
  );
  const s2 = await api.get(`/contacts?search=${encodeURIComponent("'); DROP")}`);
  assert.deepEqual(
    s2.body.data.map((x: any) => x.id),
    [c.id],
  );
  assert.equal((await api.get(`/contacts/${encodeURIComponent("x' OR '1'='1")}`)).status, 404);
});

test('contacts: e-mail and phone are unique per tenant (409 duplicate_email with existingContactId, duplicate_phone)', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const first = await create(a.api, { firstName: 'A', email: 'dup@example.com', phone: '+55 11 98765-4321' });
  const dupEmail = await a.api.post('/contacts', { firstName: 'B', email: '  DUP@Example.com' });
  assert.equal(dupEmail.status, 409);
  assert.equal(dupEmail.body.error, 'duplicate_email');
  assert.equal(dupEmail.body.existingContactId, first.id);
  const dupPhone = await a.api.post('/contacts', { firstName: 'B', phone: '11987654321' });
  assert.equal(dupPhone.status, 409);
  assert.equal(dupPhone.body.error, 'duplicate_phone');

  // PATCH into a duplicate.
  const other = await create(a.api, { firstName: 'C' });
  const p1 = await a.api.patch(`/contacts/${other.id}`, { email: 'Dup@example.com' });
  assert.equal(p1.status, 409);
  assert.equal(p1.body.error, 'duplicate_email');
  assert.equal(p1.body.existingContactId, first.id);
  const p2 = await a.api.patch(`/contacts/${other.id}`, { phone: '(11) 98765-4321' });
  assert.equal(p2.status, 409);
  assert.equal(p2.body.error, 'duplicate_phone');
  assert.equal((await a.api.get(`/contacts/${other.id}`)).body.email, null, 'a failed PATCH changes nothing');
  // Re-saving the contact's own values is no conflict.
  assert.equal((await a.api.patch(`/contacts/${first.id}`, { email: 'dup@example.com', phone: '+5511987654321' })).status, 200);

  // Another tenant never conflicts.
  assert.equal((await b.api.post('/contacts', { firstName: 'X', email: 'dup@example.com', phone: '+5511987654321' })).status, 201);

  // Soft-deleted contacts free their e-mail and phone.
  assert.equal((await a.api.delete(`/contacts/${first.id}`)).status, 204);
  const again = await a.api.post('/contacts', { firstName: 'D', email: 'dup@example.com', phone: '11987654321' });
  assert.equal(again.status, 201);
});

test('contacts: 20 concurrent creates with the same e-mail → exactly one 201, nineteen 409', async () => {
  const { api, tenantId } = await newTenant(t);
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api.post('/contacts', { firstName: `Racer ${i}`, email: 'race@example.com' })));
  const created = results.filter((r) => r.status === 201);
  const conflicts = results.filter((r) => r.status === 409);
  assert.equal(created.length, 1, JSON.stringify(results.map((r) => r.status)));
  assert.equal(conflicts.length, 19);
  for (const c of conflicts) {
    assert.equal(c.body.error, 'duplicate_email');
    assert.equal(c.body.existingContactId, created[0].body.id);
  }
  assert.equal((await api.get('/contacts')).body.pagination.total, 1);
  assert.equal((await events(tenantId, 'contact.created')).length, 1, 'a refused create records no event');
});

test('contacts: 20 concurrent creates with the same phone (different spellings) → exactly one 201, nineteen 409', async () => {
  const { api } = await newTenant(t);
  const spellings = ['+5511912345678', '(11) 91234-5678', '11 912345678', '+55 11 91234 5678'];
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => api.post('/contacts', { firstName: `Racer ${i}`, phone: spellings[i % spellings.length] })),
  );
  assert.equal(results.filter((r) => r.status === 201).length, 1, JSON.stringify(results.map((r) => r.status)));
  const conflicts = results.filter((r) => r.status === 409);
  assert.equal(conflicts.length, 19);
  assert.ok(conflicts.every((r) => r.body.error === 'duplicate_phone'));
});

test("contacts: references in bodies — 404 not_found naming the field, also for another tenant's ids", async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const tagA = (await a.api.post('/tags', { name: 'Mine' })).body.id;
  const tagB = (await b.api.post('/tags', { name: 'Theirs' })).body.id;
  const companyB = await company(b.tenantId);
  const deletedCompany = await company(a.tenantId, { deleted: true });
  const cases: [Record<string, unknown>, string][] = [
    [{ companyId: 'com_missing' }, 'companyId'],
    [{ companyId: companyB }, 'companyId'],
    [{ companyId: deletedCompany }, 'companyId'],
    [{ ownerId: 'usr_missing' }, 'ownerId'],
    [{ ownerId: b.refs.ana }, 'ownerId'],
    [{ tags: [tagA, tagA, 'tag_missing'] }, 'tags[2]'],
    [{ tags: [tagB] }, 'tags[0]'],
    [{ companyId: 'odd id with spaces / and ? marks'.repeat(50) }, 'companyId'],
  ];
  const existing = await create(a.api, { firstName: 'Existing' });
  for (const [extra, field] of cases) {
    const r = await a.api.post('/contacts', { firstName: 'X', ...extra });
    assert.equal(r.status, 404, JSON.stringify(extra));
    assert.equal(r.body.error, 'not_found');
    assert.equal(r.body.field, field);
    assert.match(r.body.message, new RegExp(field.replace(/[[\]]/g, '\\$&')));
    const p = await a.api.patch(`/contacts/${existing.id}`, extra);
    assert.equal(p.status, 404, JSON.stringify(extra));
    assert.equal(p.body.field, field);
  }
  assert.equal((await a.api.get('/contacts')).body.pagination.total, 1);
});

test('contacts: tenant isolation of paths and lists', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const c = await create(a.api, { firstName: 'Secret', email: 'secret@a.com' });
  assert.equal((await b.api.get(`/contacts/${c.id}`)).status, 404);
  assert.equal((await b.api.patch(`/contacts/${c.id}`, { firstName: 'Mine' })).status, 404);
  assert.equal((await b.api.delete(`/contacts/${c.id}`)).status, 404);
  assert.equal((await b.api.get('/contacts')).body.pagination.total, 0);
  assert.equal((await b.api.get('/contacts?search=secret')).body.pagination.total, 0);
  assert.equal((await b.api.post('/contacts/search', {})).body.pagination.total, 0);
  assert.equal((await b.api.get(`/contacts?ownerId=${a.refs.ana}`)).body.pagination.total, 0);
  assert.equal((await a.api.get(`/contacts/${c.id}`)).body.firstName, 'Secret');
  // Query-string filters with another tenant's id match nothing (200, empty).
  await a.api.patch(`/contacts/${c.id}`, { ownerId: a.refs.ana });
  assert.equal((await b.api.get(`/contacts?ownerId=${a.refs.ana}`)).status, 200);
  assert.equal((await b.api.get(`/contacts?ownerId=${a.refs.ana}`)).body.data.length, 0);
});

test('contacts: scopes — read does not allow writes; write does not imply read', async () => {
  const { api, as } = await newTenant(t);
  const c = await create(api, { firstName: 'Scoped' });
  const ro = as('ro');
  assert.equal((await ro.get('/contacts')).status, 200);
  assert.equal((await ro.get(`/contacts/${c.id}`)).status, 200);
  assert.equal((await ro.post('/contacts/search', {})).status, 200);
  for (const r of [
    await ro.post('/contacts', { firstName: 'X' }),
    await ro.patch(`/contacts/${c.id}`, { firstName: 'X' }),
    await ro.delete(`/contacts/${c.id}`),
  ]) {
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'insufficient_scope');
    assert.deepEqual(r.body.required, ['contacts:write']);
    assert.deepEqual(r.body.have, ['contacts:read']);
  }
  const wo = as('wo');
  for (const r of [await wo.get('/contacts'), await wo.get(`/contacts/${c.id}`), await wo.post('/contacts/search', {})]) {
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'insufficient_scope');
    assert.deepEqual(r.body.required, ['contacts:read']);
    assert.deepEqual(r.body.have, ['contacts:write']);
  }
  assert.equal((await wo.post('/contacts', { firstName: 'Written' })).status, 201);
  assert.equal((await wo.patch(`/contacts/${c.id}`, { lastName: 'W' })).status, 200);
  assert.equal((await wo.delete(`/contacts/${c.id}`)).status, 204);
  assert.equal((await api.get('/contacts')).body.pagination.total, 1);
});

test('contacts: B.3 company matching by e-mail domain', async () => {
  const { api, tenantId } = await newTenant(t);
  const acme = await company(tenantId, { domain: 'acme.com.br' });
  await company(tenantId, { domain: 'gone.com', deleted: true });
  const explicit = await company(tenantId);

  assert.equal((await create(api, { firstName: 'A', email: 'a@ACME.com.br' })).companyId, acme, 'matched on create');
  assert.equal((await create(api, { firstName: 'B', email: 'b@other.com' })).companyId, null, 'no company with that domain');
  assert.equal((await create(api, { firstName: 'C', email: 'c@gone.com' })).companyId, null, 'deleted companies never match');
  assert.equal((await create(api, { firstName: 'D', email: 'd@sub.acme.com.br' })).companyId, null, 'the domain must be equal');
  assert.equal((await create(api, { firstName: 'E', email: 'e@acme.com.br', companyId: explicit })).companyId, explicit, 'an explicit companyId wins');
  assert.equal((await create(api, { firstName: 'F', email: 'f@acme.com.br', companyId: null })).companyId, null, 'an explicit null is "given"');

  // Update: an e-mail given without companyId, on a contact without company.
  const g = await create(api, { firstName: 'G' });
  const patched = await api.patch(`/contacts/${g.id}`, { email: 'g@acme.com.br' });
  assert.equal(patched.body.companyId, acme);
  // A contact that already has a company keeps it.
  const h = await create(api, { firstName: 'H', companyId: explicit });
  assert.equal((await api.patch(`/contacts/${h.id}`, { email: 'h@acme.com.br' })).body.companyId, explicit);
  // companyId given in the same PATCH wins (also null).
  const i = await create(api, { firstName: 'I' });
  assert.equal((await api.patch(`/contacts/${i.id}`, { email: 'i@acme.com.br', companyId: null })).body.companyId, null);
});

test('contacts: PATCH — partial, null clears optional fields, tags replace, customProperties merge', async () => {
  const { api, refs, tenantId } = await newTenant(t);
  const tag1 = (await api.post('/tags', { name: 'One' })).body.id;
  const tag2 = (await api.post('/tags', { name: 'Two' })).body.id;
  const companyId = await company(tenantId);
  const c = await create(api, {
    firstName: 'Ana',
    lastName: 'Lima',
    email: 'ana@x.com',
    phone: '11987654321',
    companyId,
    ownerId: refs.ana,
    score: 3,
    tags: [tag1],
    customProperties: { [refs.contact_text]: 'hello', [refs.contact_number]: 1, [refs.contact_multi_select]: ['smb'] },
  });

  const p1 = await api.patch(`/contacts/${c.id}`, { lastName: 'Souza' });
  assert.equal(p1.status, 200);
  assert.equal(p1.body.lastName, 'Souza');
  assert.equal(p1.body.email, 'ana@x.com', 'omitted fields stay');
  assert.deepEqual(p1.body.tags, [tag1]);
  assert.ok(p1.body.updatedAt >= c.updatedAt);
  assert.equal(p1.body.createdAt, c.createdAt);

  const p2 = await api.patch(`/contacts/${c.id}`, {
    tags: [tag2],
    customProperties: { [refs.contact_text]: null, [refs.contact_number]: 2, [refs.contact_boolean]: false },
  });
  assert.deepEqual(p2.body.tags, [tag2], 'tags replace the whole set');
  assert.deepEqual(p2.body.customProperties, { [refs.contact_number]: 2, [refs.contact_multi_select]: ['smb'], [refs.contact_boolean]: false });

  const cleared = await api.patch(`/contacts/${c.id}`, { lastName: null, email: null, phone: null, companyId: null, ownerId: null, score: null, tags: [] });
  assert.equal(cleared.status, 200);
  for (const k of ['lastName', 'email', 'phone', 'companyId', 'ownerId', 'score']) assert.equal(cleared.body[k], null, k);
  assert.deepEqual(cleared.body.tags, []);
  assert.deepEqual((await api.get(`/contacts/${c.id}`)).body, cleared.body);

  for (const body of [
    { firstName: null },
    { firstName: '' },
    { firstName: '  ' },
    { firstName: 1 },
    { score: '1' },
    { id: 'x' },
    { updatedAt: nowIso() },
    { nope: 1 },
    { email: 'bad' },
    { phone: '12' },
  ]) {
    const r = await api.patch(`/contacts/${c.id}`, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed');
  }
  assert.equal((await api.patch('/contacts/con_missing', { firstName: 'X' })).status, 404);
  // An empty PATCH changes nothing.
  const same = await api.patch(`/contacts/${c.id}`, {});
  assert.equal(same.status, 200);
  assert.deepEqual(same.body, cleared.body);
});

test('contacts: events and change marks — contact.created / contact.updated carry the single read, in the same transaction', async () => {
  const { api, tenantId } = await newTenant(t);
  const tag = (await api.post('/tags', { name: 'T' })).body.id;
  const c = await create(api, { firstName: 'Evented', email: 'e@x.com' });
  let created = await events(tenantId, 'contact.created');
  assert.equal(created.length, 1);
  assert.equal(created[0].event, 'contact.created');
  assert.equal(created[0].tenantId, tenantId);
  assert.deepEqual(created[0].data, { contact: c });
  const dirty = await db.selectFrom('list_dirty').selectAll().where('tenant_id', '=', tenantId).where('object_type', '=', 'contact').execute();
  assert.equal(dirty.length, 1);

  const p = (await api.patch(`/contacts/${c.id}`, { lastName: 'Changed' })).body;
  let updated = await events(tenantId, 'contact.updated');
  assert.equal(updated.length, 1);
  assert.deepEqual(updated[0].data.contact, p);

  // A tags-only change is an update; a no-op PATCH is not.
  const p2 = (await api.patch(`/contacts/${c.id}`, { tags: [tag] })).body;
  updated = await events(tenantId, 'contact.updated');
  assert.equal(updated.length, 2);
  assert.deepEqual(updated[1].data.contact.tags, [tag]);
  assert.deepEqual(updated[1].data.contact, p2);
  await api.patch(`/contacts/${c.id}`, { lastName: 'Changed', tags: [tag], email: 'E@X.com' });
  await api.patch(`/contacts/${c.id}`, {});
  assert.equal((await events(tenantId, 'contact.updated')).length, 2, 'no event when nothing changed');
  assert.equal((await api.get(`/contacts/${c.id}`)).body.updatedAt, p2.updatedAt, 'updatedAt moves only on a change');

  // Failed writes leave neither change nor event.
  await api.post('/contacts', { firstName: 'Dup', email: 'e@x.com' });
  created = await events(tenantId, 'contact.created');
  assert.equal(created.length, 1);

  // Deleting marks the change for dynamic lists.
  await db.deleteFrom('list_dirty').where('tenant_id', '=', tenantId).execute();
  await api.delete(`/contacts/${c.id}`);
  assert.equal((await db.selectFrom('list_dirty').selectAll().where('tenant_id', '=', tenantId).execute()).length, 1);
});

test('contacts: soft delete — 204, then invisible everywhere; a second delete is 404', async () => {
  const { api, tenantId } = await newTenant(t);
  const c = await create(api, { firstName: 'Gone', email: 'gone@x.com' });
  const keep = await create(api, { firstName: 'Kept' });
  const del = await api.delete(`/contacts/${c.id}`);
  assert.equal(del.status, 204);
  assert.equal(del.body, '');
  assert.equal((await api.get(`/contacts/${c.id}`)).status, 404);
  assert.equal((await api.patch(`/contacts/${c.id}`, { firstName: 'Back' })).status, 404);
  assert.equal((await api.delete(`/contacts/${c.id}`)).status, 404);
  assert.deepEqual(
    (await api.get('/contacts')).body.data.map((x: any) => x.id),
    [keep.id],
  );
  assert.equal((await api.get('/contacts?search=gone')).body.pagination.total, 0);
  const s = await api.post('/contacts/search', { filters: { operator: 'AND', conditions: [{ field: 'id', operator: 'eq', value: c.id }] } });
  assert.equal(s.body.pagination.total, 0);
  const row = await db.selectFrom('contacts').select('deleted_at').where('tenant_id', '=', tenantId).where('id', '=', c.id).executeTakeFirstOrThrow();
  assert.ok(row.deleted_at, 'the row is kept (soft delete)');
  const ctx = ctxFor(tenantId);
  assert.equal((await contacts.contactsByIds(ctx, [c.id, keep.id])).size, 1);
  assert.equal(await contacts.findContactIdByEmailOrPhone(ctx, { email: 'gone@x.com' }), undefined);
});

test('contacts: list — envelope, defaults, page-size limits, unknown sort key, updatedAfter', async () => {
  const { api } = await newTenant(t);
  const made = [];
  for (let i = 0; i < 7; i++) made.push(await create(api, { firstName: `P${i}` }));
  const r = await api.get('/contacts?pageSize=3&page=2');
  assert.equal(r.status, 200);
  // C.1 adds nextCursor to the envelope: a string while a next page exists, null on the last page.
  assert.equal(typeof r.body.pagination.nextCursor, 'string');
  assert.deepEqual(r.body.pagination, {
    page: 2,
    pageSize: 3,
    total: 7,
    totalPages: 3,
    hasNext: true,
    hasPrev: true,
    nextCursor: r.body.pagination.nextCursor,
  });
  const last = await api.get('/contacts?pageSize=3&page=3');
  assert.deepEqual(last.body.pagination, { page: 3, pageSize: 3, total: 7, totalPages: 3, hasNext: false, hasPrev: true, nextCursor: null });
  assert.equal(last.body.data.length, 1);
  const beyond = await api.get('/contacts?pageSize=3&page=9');
  assert.deepEqual(beyond.body.data, []);
  assert.equal(beyond.body.pagination.total, 7);
  const huge = await api.get('/contacts?page=1000000000000000');
  assert.equal(huge.status, 200);
  assert.deepEqual(huge.body.data, []);
  const def = await api.get('/contacts');
  assert.equal(def.body.pagination.pageSize, 50);
  assert.equal(def.body.pagination.page, 1);
  assert.equal(def.body.pagination.hasPrev, false);
  // Default sort: createdAt descending.
  assert.deepEqual(
    def.body.data.map((x: any) => x.id),
    [...made].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((x) => x.id),
  );

  for (const q of [
    'pageSize=101',
    'pageSize=0',
    'page=0',
    'page=-1',
    'page=abc',
    'sortKey=password',
    'sortKey=deletedAt',
    'sortOrder=up',
    'updatedAfter=yesterday',
    'updatedAfter=2026-13-01T00:00:00Z',
    'unknown=1',
  ]) {
    const bad = await api.get(`/contacts?${q}`);
    assert.equal(bad.status, 400, q);
    assert.equal(bad.body.error, 'validation_failed');
  }
  assert.equal((await api.get('/contacts?updatedAfter=nope')).body.details[0].field, 'updatedAfter');

  // updatedAfter is strict.
  const pivot = made[3];
  await new Promise((r) => setTimeout(r, 5));
  const touched = (await api.patch(`/contacts/${made[0].id}`, { lastName: 'Touched' })).body;
  const after = await api.get(`/contacts?updatedAfter=${encodeURIComponent(pivot.updatedAt)}&sortKey=updatedAt&sortOrder=asc&pageSize=100`);
  const expected = [
    ...made
      .slice(4)
      .map((m) => (m.updatedAt > pivot.updatedAt ? m.id : null))
      .filter(Boolean),
    touched.id,
  ];
  assert.ok(!after.body.data.some((x: any) => x.id === pivot.id), 'strictly after');
  for (const id of expected) assert.ok(after.body.data.some((x: any) => x.id === id));
  assert.ok(after.body.data.every((x: any) => x.updatedAt > pivot.updatedAt));
  const later = await api.get(`/contacts?updatedAfter=${encodeURIComponent(touched.updatedAt)}`);
  assert.equal(later.body.pagination.total, 0);
  // Other offsets are understood and normalized to UTC.
  const withOffset = new Date(Date.parse(touched.updatedAt) - 1).toISOString().replace('Z', '+00:00');
  assert.deepEqual(
    (await api.get(`/contacts?updatedAfter=${encodeURIComponent(withOffset)}`)).body.data.map((x: any) => x.id),
    [touched.id],
  );
});

test('contacts: pagination walk — every id exactly once in each sort key and direction', async () => {
  const { api, refs } = await newTenant(t);
  const ids = new Set<string>();
  for (let i = 0; i < 23; i++) {
    const c = await create(api, {
      firstName: ['Ana', 'bruno', 'Carla', 'ana'][i % 4],
      ...(i % 3 ? { lastName: `L${i % 5}` } : {}),
      ...(i % 4 ? { email: `p${i}@x.com` } : {}),
      ...(i % 2 ? { score: i % 6 } : {}),
      ownerId: i % 2 ? refs.ana : refs.bruno,
    });
    ids.add(c.id);
  }
  // Some share updatedAt-independent values; move a few updatedAt values.
  for (const id of [...ids].slice(0, 5)) await api.patch(`/contacts/${id}`, { score: 99 });
  for (const sortKey of ['createdAt', 'updatedAt', 'firstName', 'lastName', 'email', 'score']) {
    for (const sortOrder of ['asc', 'desc']) {
      const seen: any[] = [];
      for (let page = 1; ; page++) {
        const r = await api.get(`/contacts?pageSize=5&page=${page}&sortKey=${sortKey}&sortOrder=${sortOrder}`);
        assert.equal(r.status, 200);
        assert.equal(r.body.pagination.total, 23);
        assert.equal(r.body.pagination.totalPages, 5);
        seen.push(...r.body.data);
        if (!r.body.pagination.hasNext) break;
      }
      assert.equal(seen.length, 23, `${sortKey} ${sortOrder}`);
      assert.deepEqual(new Set(seen.map((x) => x.id)), ids, `${sortKey} ${sortOrder}: every id exactly once`);
      // Sorted by the key (empty values last), ties by id in the same direction.
      const val = (x: any) => (typeof x[sortKey] === 'string' ? x[sortKey].toLowerCase() : x[sortKey]);
      const cmp = (a: any, b: any) => {
        const va = val(a);
        const vb = val(b);
        if (va === null && vb === null) return 0;
        if (va === null) return 1;
        if (vb === null) return -1;
        if (va !== vb) return (va < vb ? -1 : 1) * (sortOrder === 'asc' ? 1 : -1);
        return 0;
      };
      for (let i = 1; i < seen.length; i++) {
        const c = cmp(seen[i - 1], seen[i]);
        assert.ok(c <= 0, `${sortKey} ${sortOrder} order at ${i}`);
        if (c === 0) {
          assert.ok(sortOrder === 'asc' ? seen[i - 1].id < seen[i].id : seen[i - 1].id > seen[i].id, `${sortKey} ${sortOrder} tie by id`);
        }
      }
    }
  }
  // ownerId filter.
  const mine = await api.get(`/contacts?ownerId=${refs.ana}&pageSize=100`);
  assert.equal(mine.body.pagination.total, 11);
  assert.ok(mine.body.data.every((x: any) => x.ownerId === refs.ana));
});

test('contacts: search — first, last and full name, e-mail, phone digits (≥ 3 digits)', async () => {
  const { api } = await newTenant(t);
  const maria = await create(api, { firstName: 'Maria', lastName: 'Oliveira Santos', email: 'm.santos@empresa.com.br', phone: '+5511987654321' });
  const joao = await create(api, { firstName: 'João', lastName: 'Pereira', email: 'joao@outra.com', phone: '+5521912345678' });
  const solo = await create(api, { firstName: 'Solo' });
  const found = async (q: string) => (await api.get(`/contacts?search=${encodeURIComponent(q)}`)).body.data.map((x: any) => x.id).sort();
  assert.deepEqual(await found('maria'), [maria.id]);
  assert.deepEqual(await found('OLIVEIRA'), [maria.id]);
  assert.deepEqual(await found('maria oliveira'), [maria.id], 'full name');
  assert.deepEqual(await found('  maria oliveira s  '), [maria.id], 'trimmed');
  assert.deepEqual(await found('empresa.com'), [maria.id]);
  assert.deepEqual(await found('@outra'), [joao.id]);
  assert.deepEqual(await found('98765'), [maria.id], 'phone digits');
  assert.deepEqual(await found('(11) 98765-4321'), [maria.id], 'punctuation in the needle is ignored for phones');
  assert.deepEqual(await found('912-345'), [joao.id]);
  assert.deepEqual(await found('55'), [], 'fewer than 3 digits never match phones');
  assert.deepEqual(await found('solo'), [solo.id]);
  assert.deepEqual(await found('nobody'), []);
  assert.equal((await api.get('/contacts?search=')).body.pagination.total, 3, 'an empty search is no filter');
  assert.equal((await api.get(`/contacts?search=${'x'.repeat(201)}`)).status, 400);
});

test('contacts: search matches phones only for phone-like terms (C.5): `sort1a2b3` does not match a phone with 123', async () => {
  const { api } = await newTenant(t);
  const a = await create(api, { firstName: 'Alice', phone: '+5511912345678' });
  const b = await create(api, { firstName: 'Sort1a2b3 Ltda' });
  const found = async (q: string) => (await api.get(`/contacts?search=${encodeURIComponent(q)}`)).body.data.map((x: any) => x.id).sort();
  assert.deepEqual(await found('sort1a2b3'), [b.id], 'the name matches; the phone holding 123 does not');
  assert.deepEqual(await found('x123'), [], 'letters with digits are not a phone');
  assert.deepEqual(await found('123'), [a.id]);
  assert.deepEqual(await found('(11) 9'), [a.id], 'punctuation and spaces are a phone');
  assert.deepEqual(await found('+55 11 91234-5678'), [a.id]);
  assert.deepEqual(await found('912.345'), [a.id]);
  assert.deepEqual(await found('(1)'), [], 'fewer than 3 digits');
  // POST /contacts/search has no `search` term; its filters name the phone field explicitly.
  const s = await api.post('/contacts/search', { filters: { operator: 'AND', conditions: [{ field: 'phone', operator: 'contains', value: '1234' }] } });
  assert.deepEqual(
    s.body.data.map((x: any) => x.id),
    [a.id],
  );
});

test('contacts: service API for other modules (nested transactions, lookups)', async () => {
  const { tenantId, refs } = await newTenant(t);
  const ctx = ctxFor(tenantId, refs.ana);
  const a = await contacts.createContact(ctx, { firstName: 'Svc', email: 'svc@x.com' });
  const b = await contacts.createContact(ctx, { firstName: 'Svc2', phone: '11 98888-7777' });
  assert.deepEqual(await contacts.getContact(ctx, a.id), a);
  await assert.rejects(contacts.getContact(ctx, 'con_nope'), (e: any) => e.statusCode === 404);
  const map = await contacts.contactsByIds(ctx, [a.id, b.id, 'con_nope']);
  assert.deepEqual([...map.keys()].sort(), [a.id, b.id].sort());
  assert.equal(await contacts.findContactIdByEmailOrPhone(ctx, { email: ' SVC@x.com ' }), a.id);
  assert.equal(await contacts.findContactIdByEmailOrPhone(ctx, { phone: '+55 (11) 98888-7777' }), b.id);
  assert.equal(await contacts.findContactIdByEmailOrPhone(ctx, { email: 'svc@x.com', phone: '11988887777' }), a.id, 'e-mail first');
  assert.equal(await contacts.findContactIdByEmailOrPhone(ctx, { email: 'nobody@x.com', phone: '11988887777' }), b.id);
  assert.equal(await contacts.findContactIdByEmailOrPhone(ctx, { email: 'not an email', phone: 'nope' }), undefined);

  // Inside a caller's transaction: a duplicate leaves the transaction usable, and everything commits together.
  const out = await withTx(db, async (tx) => {
    const tctx = { ...ctx, db: tx };
    const c = await contacts.createContact(tctx, { firstName: 'InTx', email: 'intx@x.com' });
    await assert.rejects(
      contacts.createContact(tctx, { firstName: 'Dup', email: 'svc@x.com' }),
      (e: any) => e.code === 'duplicate_email' && e.extra.existingContactId === a.id,
    );
    const u = await contacts.updateContact(tctx, c.id, { lastName: 'Updated' });
    return u;
  });
  assert.equal((await contacts.getContact(ctx, out.id)).lastName, 'Updated');
  assert.equal((await events(tenantId, 'contact.updated')).length, 1);

  // A failing caller transaction rolls the contact and its event back.
  await assert.rejects(
    withTx(db, async (tx) => {
      await contacts.createContact({ ...ctx, db: tx }, { firstName: 'Rolled back', email: 'rb@x.com' });
      throw new Error('caller failed');
    }),
  );
  assert.equal(await contacts.findContactIdByEmailOrPhone(ctx, { email: 'rb@x.com' }), undefined);
  assert.equal((await events(tenantId, 'contact.created')).length, 3);
});

test('contacts: OpenAPI documents the contact routes with the Contact schema', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  for (const p of ['/api/v1/contacts', '/api/v1/contacts/{id}', '/api/v1/contacts/search']) assert.ok(doc.paths[p], p);
  assert.ok(doc.paths['/api/v1/contacts'].post.requestBody);
  assert.deepEqual(doc.paths['/api/v1/contacts'].get['x-scopes'], ['contacts:read']);
});
