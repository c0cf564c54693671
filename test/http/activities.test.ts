// Activities: spec 2.4, 3.3, 4.2 and CONTRACT B.6.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isoMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function make(api: Client, path: string, body: Record<string, unknown>) {
  const r = await api.post(path, body);
  assert.equal(r.status, 201, `${path} ${JSON.stringify(r.body)}`);
  return r.body;
}
const contact = (api: Client, firstName = 'Ana') => make(api, '/contacts', { firstName });
const company = (api: Client, name = 'Acme') => make(api, '/companies', { name });
const deal = (ten: Tenant, title = 'Deal') => make(ten.api, '/deals', { title, pipelineId: ten.refs.sales, stageId: ten.refs.lead });
const activity = (api: Client, body: Record<string, unknown> = {}) => make(api, '/activities', { type: 'task', title: 'Do it', ...body });

async function linked(ten: Tenant) {
  return { c: await contact(ten.api), co: await company(ten.api), d: await deal(ten) };
}

test('activities: create with every field, read, update, hard delete', async () => {
  const ten = await newTenant(t);
  const { c, co, d } = await linked(ten);
  const c2 = await contact(ten.api, 'Bia');
  const created = await ten.api.post('/activities', {
    type: 'meeting',
    title: '  Kick-off  ',
    description: 'Agenda: **scope** & dates',
    dueDate: '2026-11-25T15:00:00-03:00',
    priority: 'high',
    assignedToId: ten.refs.bruno,
    contactIds: [c2.id, c.id],
    companyIds: [co.id],
    dealIds: [d.id],
  });
  assert.equal(created.status, 201);
  const a = created.body;
  assert.match(a.id, /^act_/);
  assert.deepEqual(
    Object.keys(a).sort(),
    [
      'id',
      'type',
      'title',
      'description',
      'dueDate',
      'completed',
      'completedAt',
      'priority',
      'assignedToId',
      'ownerId',
      'contactIds',
      'companyIds',
      'dealIds',
      'createdAt',
      'updatedAt',
    ].sort(),
  );
  assert.equal(a.type, 'meeting');
  assert.equal(a.title, 'Kick-off');
  assert.equal(a.description, 'Agenda: **scope** & dates', 'text without markup is kept as given');
  assert.equal(a.dueDate, '2026-11-25T18:00:00.000Z');
  assert.equal(a.completed, false);
  assert.equal(a.completedAt, null);
  assert.equal(a.priority, 'high');
  assert.equal(a.assignedToId, ten.refs.bruno);
  assert.equal(a.ownerId, ten.refs.ana, 'ownerId defaults to the user of the key');
  assert.deepEqual(a.contactIds, [c2.id, c.id], 'order given is kept');
  assert.deepEqual(a.companyIds, [co.id]);
  assert.deepEqual(a.dealIds, [d.id]);
  assert.match(a.createdAt, isoMs);
  assert.equal(a.createdAt, a.updatedAt);
  assert.deepEqual((await ten.api.get(`/activities/${a.id}`)).body, a);

  await sleep(2);
  const p = await ten.api.patch(`/activities/${a.id}`, { title: 'Renamed', priority: null, dueDate: null, description: null, contactIds: [c.id] });
  assert.equal(p.status, 200);
  assert.equal(p.body.title, 'Renamed');
  assert.deepEqual([p.body.priority, p.body.dueDate, p.body.description], [null, null, null]);
  assert.deepEqual(p.body.contactIds, [c.id], 'an id array given replaces that array');
  assert.deepEqual(p.body.companyIds, [co.id], 'the other arrays are unchanged');
  assert.deepEqual(p.body.dealIds, [d.id]);
  assert.equal(p.body.type, 'meeting');
  assert.ok(p.body.updatedAt > a.updatedAt);
  assert.deepEqual((await ten.api.patch(`/activities/${a.id}`, {})).body, p.body);
  const cleared = await ten.api.patch(`/activities/${a.id}`, { contactIds: [], dealIds: [] });
  assert.deepEqual([cleared.body.contactIds, cleared.body.dealIds, cleared.body.companyIds], [[], [], [co.id]]);

  const del = await ten.api.delete(`/activities/${a.id}`);
  assert.equal(del.status, 204);
  assert.equal(del.body, '');
  assert.equal((await ten.api.get(`/activities/${a.id}`)).status, 404);
  assert.equal((await ten.api.delete(`/activities/${a.id}`)).status, 404);
  assert.equal((await ten.api.patch(`/activities/${a.id}`, { title: 'x' })).status, 404);
  assert.deepEqual((await ten.api.get(`/activities?relatedType=company&relatedId=${co.id}`)).body, []);
  const rows = await t.database.db.selectFrom('activity_links').selectAll().where('tenant_id', '=', ten.tenantId).where('activity_id', '=', a.id).execute();
  assert.deepEqual(rows, [], 'hard delete removes the links too');
});

test('activities: every type; type/title required; enums checked', async () => {
  const ten = await newTenant(t);
  for (const type of ['task', 'call', 'email', 'meeting', 'note', 'whatsapp', 'linkedin', 'custom']) {
    assert.equal((await activity(ten.api, { type })).type, type);
  }
  const cases: [Record<string, unknown>, string][] = [
    [{ title: 'x' }, 'type'],
    [{ type: 'task' }, 'title'],
    [{ type: 'sms', title: 'x' }, 'type'],
    [{ type: 'task', title: '' }, 'title'],
    [{ type: 'task', title: '   ' }, 'title'],
    [{ type: 'task', title: 'x', priority: 'urgent' }, 'priority'],
    [{ type: 'task', title: 'x', completed: 'yes' }, 'completed'],
    [{ type: 'task', title: 'x', contactIds: 'con_1' }, 'contactIds'],
    [{ type: 'task', title: 'x', extra: 1 }, 'extra'],
    [{ type: 'task', title: 'x', id: 'act_1' }, 'id'],
    [{ type: 'task', title: 'x', createdAt: '2026-01-01T00:00:00.000Z' }, 'createdAt'],
  ];
  for (const [body, field] of cases) {
    const r = await ten.api.post('/activities', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed');
    assert.ok(
      r.body.details.some((d: any) => d.field === field),
      JSON.stringify(r.body.details),
    );
  }
  const a = await activity(ten.api);
  for (const [body] of cases.slice(2)) {
    const { type, title, ...rest } = body as any;
    const patch = { ...(type !== 'task' && type !== undefined && { type }), ...(title !== 'x' && title !== undefined && { title }), ...rest };
    const r = await ten.api.patch(`/activities/${a.id}`, patch);
    assert.equal(r.status, 400, JSON.stringify(patch));
  }
  assert.deepEqual((await ten.api.get(`/activities/${a.id}`)).body, a);
});

test('activities: dueDate/completedAt not ISO 8601 → 400 invalid_format naming the field', async () => {
  const ten = await newTenant(t);
  const a = await activity(ten.api);
  for (const field of ['dueDate', 'completedAt']) {
    for (const value of ['tomorrow', '2026-13-01T00:00:00Z', '2026-11-25T15:00:00', '25/11/2026', '2026-02-30', '']) {
      const body: Record<string, unknown> = { [field]: value };
      if (field === 'completedAt') body.completed = true;
      const r = await ten.api.post('/activities', { type: 'task', title: 'x', ...body });
      assert.equal(r.status, 400, `${field}=${value}`);
      assert.equal(r.body.error, 'invalid_format', `${field}=${value}`);
      assert.deepEqual(
        r.body.details.map((d: any) => d.field),
        [field],
      );
      assert.match(r.body.message, new RegExp(field));
      const p = await ten.api.patch(`/activities/${a.id}`, body);
      assert.equal(p.status, 400);
      assert.equal(p.body.error, 'invalid_format');
    }
  }
  assert.deepEqual((await ten.api.get(`/activities/${a.id}`)).body, a);
  // Accepted forms: any zone (normalized to UTC ms) and a bare date (midnight UTC).
  assert.equal((await activity(ten.api, { dueDate: '2026-11-25' })).dueDate, '2026-11-25T00:00:00.000Z');
  assert.equal((await activity(ten.api, { dueDate: '2026-11-25T10:00Z' })).dueDate, '2026-11-25T10:00:00.000Z');
  assert.equal((await activity(ten.api, { dueDate: '2026-11-25T10:00:00.123456+01:00' })).dueDate, '2026-11-25T09:00:00.123Z');
});

test('activities 3.3: completed true sets completedAt (given, else now); false clears it', async () => {
  const ten = await newTenant(t);
  const t0 = new Date().toISOString();
  const a = await activity(ten.api);
  const done = await ten.api.patch(`/activities/${a.id}`, { completed: true });
  assert.equal(done.body.completed, true);
  assert.ok(done.body.completedAt >= t0 && done.body.completedAt <= new Date().toISOString());
  await sleep(3);
  const again = await ten.api.patch(`/activities/${a.id}`, { completed: true });
  assert.equal(again.body.completedAt, done.body.completedAt, 'completing a completed activity keeps its time');
  const pending = await ten.api.patch(`/activities/${a.id}`, { completed: false });
  assert.deepEqual([pending.body.completed, pending.body.completedAt], [false, null]);
  const given = await ten.api.patch(`/activities/${a.id}`, { completed: true, completedAt: '2026-11-20T08:00:00-03:00' });
  assert.deepEqual([given.body.completed, given.body.completedAt], [true, '2026-11-20T11:00:00.000Z']);
  const corrected = await ten.api.patch(`/activities/${a.id}`, { completedAt: '2026-11-21T00:00:00Z' });
  assert.equal(corrected.body.completedAt, '2026-11-21T00:00:00.000Z', 'a completed activity may correct its completedAt');
  const other = await ten.api.patch(`/activities/${a.id}`, { title: 'x' });
  assert.equal(other.body.completedAt, '2026-11-21T00:00:00.000Z');

  // On create.
  const c1 = await activity(ten.api, { completed: true });
  assert.match(c1.completedAt, isoMs);
  const c2 = await activity(ten.api, { completed: true, completedAt: '2026-01-01T00:00:00Z' });
  assert.equal(c2.completedAt, '2026-01-01T00:00:00.000Z');
  const c3 = await activity(ten.api, { completed: false });
  assert.deepEqual([c3.completed, c3.completedAt], [false, null]);

  // completedAt on an activity that ends up pending is refused, and changes nothing.
  const before = (await ten.api.get(`/activities/${c3.id}`)).body;
  for (const body of [{ completedAt: '2026-01-01T00:00:00Z' }, { completed: false, completedAt: '2026-01-01T00:00:00Z' }]) {
    const r = await ten.api.patch(`/activities/${c3.id}`, body);
    assert.equal(r.status, 400);
    assert.equal(r.body.details[0].field, 'completedAt');
    assert.equal((await ten.api.post('/activities', { type: 'task', title: 'x', ...body })).status, 400);
  }
  assert.deepEqual((await ten.api.get(`/activities/${c3.id}`)).body, before);
});

test('activities: owner and assignee are users of the tenant; null unassigns', async () => {
  const ten = await newTenant(t);
  const a = await activity(ten.api, { ownerId: ten.refs.bruno, assignedToId: ten.refs.ana });
  assert.equal(a.ownerId, ten.refs.bruno);
  assert.equal(a.assignedToId, ten.refs.ana);
  const un = await ten.api.patch(`/activities/${a.id}`, { assignedToId: null });
  assert.equal(un.body.assignedToId, null);
  for (const field of ['ownerId', 'assignedToId']) {
    const r = await ten.api.post('/activities', { type: 'task', title: 'x', [field]: 'usr_nope' });
    assert.equal(r.status, 404);
    assert.equal(r.body.error, 'not_found');
    assert.match(r.body.message, new RegExp(field));
    assert.equal((await ten.api.patch(`/activities/${a.id}`, { [field]: 'usr_nope' })).status, 404);
  }
  // A key without a user creates activities without an owner.
  const setup = STANDARD_SETUP();
  setup.apiKeys.push({ ref: 'nouser', name: 'No user', scopes: ['activities:write', 'activities:read'], rateLimit: 1000 });
  const ten2 = await newTenant(t, setup);
  const r = await ten2.as('nouser').post('/activities', { type: 'note', title: 'n' });
  assert.equal(r.status, 201);
  assert.equal(r.body.ownerId, null);
});

test('activities: linked ids must exist and not be deleted (404 naming e.g. dealIds[1]); duplicates collapse', async () => {
  const ten = await newTenant(t);
  const { c, co, d } = await linked(ten);
  const d2 = await deal(ten, 'Second');
  for (const [field, good] of [
    ['contactIds', c.id],
    ['companyIds', co.id],
    ['dealIds', d.id],
  ] as const) {
    const r = await ten.api.post('/activities', { type: 'task', title: 'x', [field]: [good, 'x_nope'] });
    assert.equal(r.status, 404, field);
    assert.equal(r.body.error, 'not_found');
    assert.match(r.body.message, new RegExp(`${field}\\[1\\]`));
  }
  // The wrong kind of id is missing too.
  const wrong = await ten.api.post('/activities', { type: 'task', title: 'x', dealIds: [c.id] });
  assert.equal(wrong.status, 404);
  assert.match(wrong.body.message, /dealIds\[0\]/);
  await ten.api.delete(`/deals/${d2.id}`);
  const deleted = await ten.api.post('/activities', { type: 'task', title: 'x', dealIds: [d.id, d2.id] });
  assert.equal(deleted.status, 404);
  assert.match(deleted.body.message, /dealIds\[1\]/);
  const a = await activity(ten.api, { dealIds: [d.id, d.id], contactIds: [c.id] });
  assert.deepEqual(a.dealIds, [d.id]);
  const bad = await ten.api.patch(`/activities/${a.id}`, { contactIds: ['con_nope'] });
  assert.equal(bad.status, 404);
  assert.deepEqual((await ten.api.get(`/activities/${a.id}`)).body, a, 'a failed PATCH changes nothing');
  assert.equal((await ten.api.post('/activities', { type: 'task', title: 'x', contactIds: Array.from({ length: 101 }, () => c.id) })).status, 400);
});

test('activities: HTML description is sanitized (scripts, handlers, javascript: URLs)', async () => {
  const ten = await newTenant(t);
  const a = await activity(ten.api, {
    type: 'note',
    description:
      '<p onclick="steal()">Hello <b>world</b><script>alert(1)</script></p><a href="javascript:alert(1)">x</a><img src=x onerror="alert(1)"><a href="https://ok.test" target="_blank">ok</a>',
  });
  assert.doesNotMatch(a.description, /script|onclick|onerror|javascript:/i);
  assert.match(a.description, /<p>Hello <b>world<\/b><\/p>/);
  assert.match(a.description, /href="https:\/\/ok.test"/);
  const p = await ten.api.patch(`/activities/${a.id}`, { description: '<div><iframe src="https://evil.test"></iframe>safe</div>' });
  assert.equal(p.body.description, '<div>safe</div>');
  const stored = await t.database.db
    .selectFrom('activities')
    .select('description')
    .where('tenant_id', '=', ten.tenantId)
    .where('id', '=', a.id)
    .executeTakeFirst();
  assert.equal(stored?.description, '<div>safe</div>', 'sanitized on write');
});

test('GET /activities: relatedType and relatedId required; related record must exist; newest first with all links', async () => {
  const ten = await newTenant(t);
  const { c, co, d } = await linked(ten);
  for (const q of ['', `relatedType=contact`, `relatedId=${c.id}`, `relatedType=list&relatedId=${c.id}`, `relatedType=contact&relatedId=${c.id}&x=1`]) {
    const r = await ten.api.get(`/activities?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed');
  }
  for (const type of ['contact', 'company', 'deal']) {
    const r = await ten.api.get(`/activities?relatedType=${type}&relatedId=x_nope`);
    assert.equal(r.status, 404);
    assert.equal(r.body.error, 'not_found');
  }
  // The id of a deal named as a contact is missing too.
  assert.equal((await ten.api.get(`/activities?relatedType=contact&relatedId=${d.id}`)).status, 404);
  assert.deepEqual((await ten.api.get(`/activities?relatedType=contact&relatedId=${c.id}`)).body, []);

  const a1 = await activity(ten.api, { title: 'first', contactIds: [c.id], dealIds: [d.id] });
  await sleep(3);
  const a2 = await activity(ten.api, { title: 'second', contactIds: [c.id], companyIds: [co.id] });
  await sleep(3);
  const a3 = await activity(ten.api, { title: 'third', dealIds: [d.id] });
  await activity(ten.api, { title: 'unlinked' });
  const forContact = (await ten.api.get(`/activities?relatedType=contact&relatedId=${c.id}`)).body;
  assert.deepEqual(
    forContact.map((a: any) => a.title),
    ['second', 'first'],
  );
  assert.deepEqual(forContact[0], a2, 'each item has the single-read shape with all its links');
  assert.deepEqual(forContact[1], a1);
  assert.deepEqual(
    (await ten.api.get(`/activities?relatedType=deal&relatedId=${d.id}`)).body.map((a: any) => a.id),
    [a3.id, a1.id],
  );
  assert.deepEqual(
    (await ten.api.get(`/activities?relatedType=company&relatedId=${co.id}`)).body.map((a: any) => a.id),
    [a2.id],
  );

  // A soft-deleted related record is 404; its activities remain through their other links.
  await ten.api.delete(`/deals/${d.id}`);
  assert.equal((await ten.api.get(`/activities?relatedType=deal&relatedId=${d.id}`)).status, 404);
  const after = (await ten.api.get(`/activities?relatedType=contact&relatedId=${c.id}`)).body;
  assert.deepEqual(
    after.map((a: any) => a.title),
    ['second', 'first'],
  );
  assert.deepEqual(after[1].dealIds, []);
  await ten.api.delete(`/contacts/${c.id}`);
  assert.equal((await ten.api.get(`/activities?relatedType=contact&relatedId=${c.id}`)).status, 404);
  const single = await ten.api.get(`/activities/${a1.id}`);
  assert.equal(single.status, 200);
  assert.deepEqual([single.body.contactIds, single.body.dealIds], [[], []], 'a single read hides links to deleted records too');
  assert.deepEqual((await ten.api.get(`/activities/${a2.id}`)).body.companyIds, [co.id], 'and keeps the live ones');
});

test('GET /activities: ties on createdAt break by id; many activities in one answer', async () => {
  const ten = await newTenant(t);
  const c = await contact(ten.api);
  const created: string[] = [];
  for (let i = 0; i < 30; i++) created.push((await activity(ten.api, { title: `a${i}`, contactIds: [c.id] })).id);
  const list = (await ten.api.get(`/activities?relatedType=contact&relatedId=${c.id}`)).body;
  assert.equal(list.length, 30);
  for (let i = 1; i < list.length; i++) {
    const [p, q] = [list[i - 1], list[i]];
    assert.ok(p.createdAt > q.createdAt || (p.createdAt === q.createdAt && p.id > q.id), 'createdAt desc, then id desc');
  }
});

test('bulk complete: one call, ids not in the tenant skipped, completedAt rule, { updated }', async () => {
  const ten = await newTenant(t);
  const other = await newTenant(t);
  const a = await activity(ten.api);
  const b = await activity(ten.api);
  const already = await activity(ten.api, { completed: true, completedAt: '2026-01-01T00:00:00Z' });
  const foreign = await activity(other.api);
  const t0 = new Date().toISOString();
  const r = await ten.api.post('/activities/bulk/complete', { ids: [a.id, b.id, already.id, a.id, foreign.id, 'act_nope'], completed: true });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { updated: 3 });
  const ra = (await ten.api.get(`/activities/${a.id}`)).body;
  assert.equal(ra.completed, true);
  assert.ok(ra.completedAt >= t0);
  assert.ok(ra.updatedAt >= t0);
  assert.equal((await ten.api.get(`/activities/${already.id}`)).body.completedAt, '2026-01-01T00:00:00.000Z', 'an already completed activity keeps its time');
  assert.deepEqual((await other.api.get(`/activities/${foreign.id}`)).body, foreign, "another tenant's activity is untouched");

  const back = await ten.api.post('/activities/bulk/complete', { ids: [a.id, already.id], completed: false });
  assert.deepEqual(back.body, { updated: 2 });
  for (const id of [a.id, already.id]) {
    const x = (await ten.api.get(`/activities/${id}`)).body;
    assert.deepEqual([x.completed, x.completedAt], [false, null]);
  }
  assert.deepEqual((await ten.api.post('/activities/bulk/complete', { ids: [foreign.id], completed: true })).body, { updated: 0 });
});

test('bulk assign: user of the tenant or null; ids not in the tenant skipped', async () => {
  const ten = await newTenant(t);
  const other = await newTenant(t);
  const a = await activity(ten.api);
  const b = await activity(ten.api, { assignedToId: ten.refs.ana });
  const foreign = await activity(other.api);
  const r = await ten.api.post('/activities/bulk/assign', { ids: [a.id, b.id, foreign.id], assignedToId: ten.refs.bruno });
  assert.deepEqual([r.status, r.body], [200, { updated: 2 }]);
  assert.equal((await ten.api.get(`/activities/${a.id}`)).body.assignedToId, ten.refs.bruno);
  assert.equal((await ten.api.get(`/activities/${b.id}`)).body.assignedToId, ten.refs.bruno);
  assert.equal((await other.api.get(`/activities/${foreign.id}`)).body.assignedToId, null);
  const un = await ten.api.post('/activities/bulk/assign', { ids: [a.id], assignedToId: null });
  assert.deepEqual(un.body, { updated: 1 });
  assert.equal((await ten.api.get(`/activities/${a.id}`)).body.assignedToId, null);
  for (const assignedToId of ['usr_nope', other.refs.ana]) {
    const bad = await ten.api.post('/activities/bulk/assign', { ids: [a.id, b.id], assignedToId });
    assert.equal(bad.status, 404);
    assert.match(bad.body.message, /assignedToId/);
  }
  assert.equal((await ten.api.get(`/activities/${b.id}`)).body.assignedToId, ten.refs.bruno, 'nothing changed');
});

test('bulk: 1..500 ids; bodies are validated', async () => {
  const ten = await newTenant(t);
  const a = await activity(ten.api);
  const many = (n: number) => [a.id, ...Array.from({ length: n - 1 }, (_, i) => `act_missing${i}`)];
  assert.deepEqual((await ten.api.post('/activities/bulk/complete', { ids: many(500), completed: true })).body, { updated: 1 });
  assert.deepEqual((await ten.api.post('/activities/bulk/assign', { ids: many(500), assignedToId: null })).body, { updated: 1 });
  const bodies: [string, unknown][] = [
    ['complete', { ids: many(501), completed: true }],
    ['complete', { ids: [], completed: true }],
    ['complete', { ids: [a.id] }],
    ['complete', { completed: true }],
    ['complete', { ids: [a.id], completed: 'true' }],
    ['complete', { ids: a.id, completed: true }],
    ['complete', { ids: [1], completed: true }],
    ['complete', { ids: [a.id], completed: true, extra: 1 }],
    ['assign', { ids: many(501), assignedToId: null }],
    ['assign', { ids: [a.id] }],
    ['assign', { ids: [], assignedToId: null }],
    ['assign', { ids: [a.id], assignedToId: 5 }],
  ];
  for (const [op, body] of bodies) {
    const r = await ten.api.post(`/activities/bulk/${op}`, body as any);
    assert.equal(r.status, 400, `${op} ${JSON.stringify(body).slice(0, 80)}`);
    assert.equal(r.body.error, 'validation_failed');
  }
  assert.equal((await ten.api.get(`/activities/${a.id}`)).body.completed, true);
});

test('activities: tenant isolation — paths, every id in bodies, bulk ids, relatedId', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const la = await linked(a);
  const actA = await activity(a.api, { contactIds: [la.c.id] });
  assert.equal((await b.api.get(`/activities/${actA.id}`)).status, 404);
  assert.equal((await b.api.patch(`/activities/${actA.id}`, { title: 'Mine' })).status, 404);
  assert.equal((await b.api.delete(`/activities/${actA.id}`)).status, 404);
  assert.deepEqual((await a.api.get(`/activities/${actA.id}`)).body, actA);
  for (const [type, id] of [
    ['contact', la.c.id],
    ['company', la.co.id],
    ['deal', la.d.id],
  ]) {
    assert.equal((await b.api.get(`/activities?relatedType=${type}&relatedId=${id}`)).status, 404, type);
  }
  const actB = await activity(b.api);
  const bodies: [Record<string, unknown>, string][] = [
    [{ contactIds: [la.c.id] }, 'contactIds[0]'],
    [{ companyIds: [la.co.id] }, 'companyIds[0]'],
    [{ dealIds: [la.d.id] }, 'dealIds[0]'],
    [{ assignedToId: a.refs.ana }, 'assignedToId'],
    [{ ownerId: a.refs.ana }, 'ownerId'],
  ];
  for (const [body, field] of bodies) {
    const r = await b.api.post('/activities', { type: 'task', title: 'x', ...body });
    assert.equal(r.status, 404, field);
    assert.ok(r.body.message.includes(field), r.body.message);
    assert.equal((await b.api.patch(`/activities/${actB.id}`, body)).status, 404, field);
  }
  assert.deepEqual((await b.api.get(`/activities/${actB.id}`)).body, actB);
  assert.deepEqual((await b.api.post('/activities/bulk/complete', { ids: [actA.id], completed: true })).body, { updated: 0 });
  assert.deepEqual((await b.api.post('/activities/bulk/assign', { ids: [actA.id], assignedToId: null })).body, { updated: 0 });
  assert.deepEqual((await a.api.get(`/activities/${actA.id}`)).body, actA);
});

test('activities: scopes are literal', async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push(
    { ref: 'ar', name: 'r', user: 'ana', scopes: ['activities:read'], rateLimit: 1000 },
    { ref: 'aw', name: 'w', user: 'ana', scopes: ['activities:write'], rateLimit: 1000 },
  );
  const ten = await newTenant(t, setup);
  const c = await contact(ten.api);
  const act = await activity(ten.api, { contactIds: [c.id] });
  const r = ten.as('ar');
  const w = ten.as('aw');
  assert.equal((await r.get(`/activities?relatedType=contact&relatedId=${c.id}`)).status, 200);
  assert.equal((await r.get(`/activities/${act.id}`)).status, 200);
  for (const res of [
    await r.post('/activities', { type: 'task', title: 'x' }),
    await r.patch(`/activities/${act.id}`, { title: 'x' }),
    await r.delete(`/activities/${act.id}`),
    await r.post('/activities/bulk/complete', { ids: [act.id], completed: true }),
    await r.post('/activities/bulk/assign', { ids: [act.id], assignedToId: null }),
    await w.get(`/activities?relatedType=contact&relatedId=${c.id}`),
    await w.get(`/activities/${act.id}`),
    await ten.as('ro').get(`/activities?relatedType=contact&relatedId=${c.id}`),
  ]) {
    assert.equal(res.status, 403);
    assert.equal(res.body.error, 'insufficient_scope');
  }
  assert.equal((await w.post('/activities', { type: 'task', title: 'x' })).status, 201);
  assert.deepEqual((await w.post('/activities/bulk/complete', { ids: [act.id], completed: true })).body, { updated: 1 });
});

test('activities: odd ids and hostile input answer 4xx, never 5xx', async () => {
  const ten = await newTenant(t);
  const a = await activity(ten.api);
  for (const id of ['%00', 'a%00b', 'x'.repeat(2000), '%F0%9F%92%A9', "1' or '1'='1", 'bulk']) {
    for (const r of [
      await ten.api.get(`/activities/${id}`),
      await ten.api.patch(`/activities/${id}`, { title: 'x' }),
      await ten.api.delete(`/activities/${id}`),
    ]) {
      assert.equal(r.status, 404, `${id} → ${r.status}`);
    }
  }
  const nul = '\u0000';
  const bodies: Record<string, unknown>[] = [
    { title: `a${nul}` },
    { description: nul },
    { dueDate: nul },
    { completed: true, completedAt: nul },
    { ownerId: nul },
    { assignedToId: nul },
    { contactIds: [nul] },
    { companyIds: ['ok', nul] },
    { dealIds: [nul] },
    { title: 'x'.repeat(501) },
    { description: '<'.repeat(50000) },
  ];
  for (const body of bodies) {
    const c = await ten.api.post('/activities', { type: 'task', title: 't', ...body });
    assert.ok(c.status >= 200 && c.status < 500, `POST ${JSON.stringify(body).slice(0, 60)} → ${c.status} ${JSON.stringify(c.body)}`);
    const p = await ten.api.patch(`/activities/${a.id}`, body);
    assert.ok(p.status >= 200 && p.status < 500, `PATCH ${JSON.stringify(body).slice(0, 60)} → ${p.status} ${JSON.stringify(p.body)}`);
  }
  for (const q of ['relatedType=contact&relatedId=%00', 'relatedType=%00&relatedId=x']) {
    const r = await ten.api.get(`/activities?${q}`);
    assert.ok(r.status === 404 || r.status === 400, q);
  }
  for (const [op, body] of [
    ['complete', { ids: [nul, a.id], completed: true }],
    ['assign', { ids: [a.id], assignedToId: nul }],
  ] as const) {
    const r = await ten.api.post(`/activities/bulk/${op}`, body);
    assert.ok(r.status === 400 || r.status === 404, `${op} → ${r.status}`);
  }
  assert.equal((await ten.api.post('/activities', '{"type":')).status, 400);
});
