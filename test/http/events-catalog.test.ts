// CONTRACT C.4: every event type of the catalog is raised by the operations that cause it, in their
// transaction; `*.updated` carries `changes` and `previous`; a PATCH that changes nothing raises nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENT_TYPES } from '../../src/events/catalog.js';
import { newTenant, testApp } from '../helpers/app.js';

const t = await testApp();

interface Ev {
  id: string;
  type: string;
  data: Record<string, any>;
}

async function allEvents(tenantId: string): Promise<Ev[]> {
  const rows = await t.database.db.selectFrom('events').select(['id', 'type', 'payload']).where('tenant_id', '=', tenantId).execute();
  return rows.map((r) => ({ id: r.id, type: r.type, data: JSON.parse(r.payload).data }));
}

/** Runs `fn` and answers the events it recorded. */
async function during(tenantId: string, fn: () => Promise<unknown>): Promise<Ev[]> {
  const seen = new Set((await allEvents(tenantId)).map((e) => e.id));
  await fn();
  return (await allEvents(tenantId)).filter((e) => !seen.has(e.id));
}

const ok = async (p: Promise<{ status: number; body: any }>, status = 200) => {
  const r = await p;
  assert.equal(r.status, status, JSON.stringify(r.body));
  return r.body;
};

test('every event type of the catalog is raised by its operation (the raising operations of C.4)', async () => {
  const { api, tenantId, refs } = await newTenant(t);
  const raised = new Set<string>();
  const track = async (fn: () => Promise<unknown>) => {
    for (const e of await during(tenantId, fn)) raised.add(e.type);
  };
  let contactId = '';
  let companyId = '';
  let dealId = '';
  let activityId = '';
  let tagId = '';
  let listId = '';
  await track(async () => (tagId = (await ok(api.post('/tags', { name: 'VIP' }), 201)).id));
  await track(() => ok(api.patch(`/tags/${tagId}`, { color: '#00ff00' })));
  await track(async () => (companyId = (await ok(api.post('/companies', { name: 'Acme' }), 201)).id));
  await track(() => ok(api.patch(`/companies/${companyId}`, { industry: 'Retail' })));
  await track(async () => (contactId = (await ok(api.post('/contacts', { firstName: 'Ana', companyId, tags: [tagId] }), 201)).id));
  await track(() => ok(api.patch(`/contacts/${contactId}`, { lastName: 'Souza' })));
  await track(async () => (dealId = (await ok(api.post('/deals', { title: 'D', pipelineId: refs.sales, stageId: refs.lead, companyId }), 201)).id));
  await track(() => ok(api.patch(`/deals/${dealId}`, { title: 'D2' })));
  await track(() => ok(api.patch(`/deals/${dealId}`, { stageId: refs.proposal })));
  await track(() => ok(api.patch(`/deals/${dealId}`, { isWon: true })));
  const lost = (await ok(api.post('/deals', { title: 'L', pipelineId: refs.sales, stageId: refs.lead }), 201)).id;
  await track(() => ok(api.patch(`/deals/${lost}`, { isLost: true })));
  await track(async () => (activityId = (await ok(api.post('/activities', { type: 'task', title: 'Call', contactIds: [contactId] }), 201)).id));
  await track(() => ok(api.patch(`/activities/${activityId}`, { title: 'Call back' })));
  await track(async () => (listId = (await ok(api.post('/lists', { name: 'L', objectType: 'contact', kind: 'static' }), 201)).id));
  await track(() => ok(api.post(`/lists/${listId}/members`, { objectIds: [contactId] })));
  await track(() => ok(api.delete(`/lists/${listId}/members/${contactId}`), 204));
  const proposal = (await ok(api.post('/proposals', { subject: 'P', dealId: lost }), 201)).id;
  await track(() => ok(api.patch(`/proposals/${proposal}`, { status: 'sent' })));
  await track(() => ok(api.patch(`/proposals/${proposal}`, { status: 'declined' })));
  const p2 = (await ok(api.post('/proposals', { subject: 'P2' }), 201)).id;
  await ok(api.patch(`/proposals/${p2}`, { status: 'sent' }));
  await track(() => ok(api.patch(`/proposals/${p2}`, { status: 'accepted' })));
  const p3 = (await ok(api.post('/proposals', { subject: 'P3' }), 201)).id;
  await ok(api.patch(`/proposals/${p3}`, { status: 'sent' }));
  await track(() => ok(api.patch(`/proposals/${p3}`, { status: 'expired' })));
  const form = (await ok(api.get('/forms'))).find((f: any) => f.slug === 'contact-us');
  await track(() => t.app.inject({ method: 'POST', url: new URL(form.embedUrl).pathname, payload: { email: 'form@x.test', name: 'Form' } }));
  await track(() => ok(api.delete(`/activities/${activityId}`), 204));
  await track(() => ok(api.delete(`/deals/${dealId}`), 204));
  await track(() => ok(api.delete(`/tags/${tagId}`), 204));
  await track(() => ok(api.delete(`/companies/${companyId}`), 204));
  await track(() => ok(api.delete(`/contacts/${contactId}`), 204));
  // D.1: each restore raises its `<type>.restored`.
  await ok(api.delete(`/lists/${listId}`), 204);
  await ok(api.delete(`/proposals/${p3}`), 204);
  for (const path of [`contacts/${contactId}`, `companies/${companyId}`, `deals/${dealId}`, `lists/${listId}`, `proposals/${p3}`]) {
    await track(() => ok(api.post(`/${path}/restore`)));
  }
  // D.2: a merge raises contact.merged / company.merged.
  const [c1, c2] = [(await ok(api.post('/contacts', { firstName: 'M1' }), 201)).id, (await ok(api.post('/contacts', { firstName: 'M2' }), 201)).id];
  await track(() => ok(api.post('/contacts/merge', { primaryId: c1, mergedId: c2 })));
  const [o1, o2] = [(await ok(api.post('/companies', { name: 'O1' }), 201)).id, (await ok(api.post('/companies', { name: 'O2' }), 201)).id];
  await track(() => ok(api.post('/companies/merge', { primaryId: o1, mergedId: o2 })));
  // D.5: an erasure raises contact.erased.
  await track(() => ok(api.post(`/contacts/${contactId}/erase`), 204));
  const missing = EVENT_TYPES.map((e) => e.key).filter((k) => !raised.has(k) && k !== 'webhook.disabled');
  assert.deepEqual(missing, [], 'every catalog type but webhook.disabled (covered by the delivery tests) was raised');
});

test('*.updated carries changes and previous; a PATCH that changes nothing raises no event', async () => {
  const { api, tenantId, refs } = await newTenant(t);
  const contact = await ok(api.post('/contacts', { firstName: 'Ana', email: 'ana@x.test', score: 1, customProperties: { [refs.contact_text]: 'a' } }), 201);
  const evs = await during(tenantId, () =>
    ok(api.patch(`/contacts/${contact.id}`, { score: 5, email: 'ANA2@x.test', customProperties: { [refs.contact_text]: 'b' } })),
  );
  assert.deepEqual(
    evs.map((e) => e.type),
    ['contact.updated'],
  );
  const data = evs[0].data;
  assert.deepEqual([...data.changes].sort(), ['customProperties', 'email', 'score']);
  assert.deepEqual(data.previous, { score: 1, email: 'ana@x.test', customProperties: { [refs.contact_text]: 'a' } });
  assert.equal(data.contact.score, 5);
  assert.deepEqual(data.contact, (await api.get(`/contacts/${contact.id}`)).body);

  for (const [path, body] of [
    [`/contacts/${contact.id}`, { score: 5, email: 'ana2@x.test' }],
    [`/contacts/${contact.id}`, {}],
  ] as const) {
    assert.deepEqual(await during(tenantId, () => ok(api.patch(path, body))), [], `no event for ${JSON.stringify(body)}`);
  }
  const company = await ok(api.post('/companies', { name: 'Acme', industry: 'Retail' }), 201);
  assert.deepEqual(await during(tenantId, () => ok(api.patch(`/companies/${company.id}`, { industry: 'Retail' }))), []);
  const renamed = await during(tenantId, () => ok(api.patch(`/companies/${company.id}`, { name: 'Acme SA' })));
  assert.deepEqual(
    renamed.map((e) => [e.type, e.data.changes, e.data.previous]),
    [['company.updated', ['name'], { name: 'Acme' }]],
  );

  const deal = await ok(api.post('/deals', { title: 'D', pipelineId: refs.sales, stageId: refs.lead, value: 10 }), 201);
  assert.deepEqual(await during(tenantId, () => ok(api.patch(`/deals/${deal.id}`, { title: 'D', value: 10 }))).then((e) => e.map((x) => x.type)), []);
  const moved = await during(tenantId, () => ok(api.patch(`/deals/${deal.id}`, { stageId: refs.proposal, companyId: company.id })));
  const upd = moved.find((e) => e.type === 'deal.updated')!;
  assert.deepEqual([...upd.data.changes].sort(), ['companyId', 'stageId']);
  assert.deepEqual(upd.data.previous, { stageId: refs.lead, companyId: null });
  assert.deepEqual(moved.map((e) => e.type).sort(), ['deal.stage_changed', 'deal.updated']);

  const tag = await ok(api.post('/tags', { name: 'T' }), 201);
  assert.deepEqual(await during(tenantId, () => ok(api.patch(`/tags/${tag.id}`, { name: 'T' }))).then((e) => e.map((x) => x.data.changes)), []);
  const act = await ok(api.post('/activities', { type: 'task', title: 'A', contactIds: [contact.id] }), 201);
  const done = await during(tenantId, () => ok(api.post('/activities/bulk/complete', { ids: [act.id, 'act_nope'], completed: true })));
  assert.deepEqual(
    done.map((e) => [e.type, [...e.data.changes].sort()]),
    [['activity.updated', ['completed', 'completedAt']]],
  );
  assert.equal(done[0].data.previous.completed, false);
  assert.deepEqual(
    await during(tenantId, () => ok(api.post('/activities/bulk/complete', { ids: [act.id], completed: true }))),
    [],
    'already completed: nothing changed',
  );
});

test('deleting a company or a tag raises the updates of the records it touched; deletes carry the last read', async () => {
  const { api, tenantId, refs } = await newTenant(t);
  const company = await ok(api.post('/companies', { name: 'Gone' }), 201);
  const tag = await ok(api.post('/tags', { name: 'Old' }), 201);
  const keep = await ok(api.post('/tags', { name: 'Keep' }), 201);
  const contact = await ok(api.post('/contacts', { firstName: 'C', companyId: company.id, tags: [tag.id, keep.id] }), 201);
  const deal = await ok(api.post('/deals', { title: 'D', pipelineId: refs.sales, stageId: refs.lead, companyId: company.id, tags: [tag.id] }), 201);
  const tagged = await ok(api.patch(`/companies/${company.id}`, { tags: [tag.id] }));

  const byTag = await during(tenantId, () => ok(api.delete(`/tags/${tag.id}`), 204));
  const kinds = byTag.map((e) => e.type).sort();
  assert.deepEqual(kinds, ['company.updated', 'contact.updated', 'deal.updated', 'tag.deleted']);
  assert.deepEqual(byTag.find((e) => e.type === 'tag.deleted')!.data.tag, tag);
  const contactUpd = byTag.find((e) => e.type === 'contact.updated')!.data;
  assert.deepEqual(contactUpd.changes, ['tags']);
  assert.deepEqual(contactUpd.previous.tags, [tag.id, keep.id].sort());
  assert.deepEqual(contactUpd.contact.tags, [keep.id]);
  void tagged;

  const lastRead = (await api.get(`/companies/${company.id}`)).body;
  const byCompany = await during(tenantId, () => ok(api.delete(`/companies/${company.id}`), 204));
  assert.deepEqual(byCompany.map((e) => e.type).sort(), ['company.deleted', 'contact.updated', 'deal.updated']);
  assert.deepEqual(byCompany.find((e) => e.type === 'company.deleted')!.data.company, lastRead);
  for (const e of byCompany.filter((x) => x.type.endsWith('.updated'))) {
    assert.deepEqual(e.data.changes, ['companyId']);
    assert.deepEqual(e.data.previous, { companyId: company.id });
  }
  assert.equal(byCompany.find((e) => e.type === 'deal.updated')!.data.deal.id, deal.id);
  const lastContact = (await api.get(`/contacts/${contact.id}`)).body;
  const gone = await during(tenantId, () => ok(api.delete(`/contacts/${contact.id}`), 204));
  assert.deepEqual(
    gone.map((e) => [e.type, e.data.contact]),
    [['contact.deleted', lastContact]],
  );
});

test('list membership and form intake events carry list + objectId and the submission', async () => {
  const { api, tenantId } = await newTenant(t);
  const a = await ok(api.post('/contacts', { firstName: 'A' }), 201);
  const b = await ok(api.post('/contacts', { firstName: 'B' }), 201);
  const list = await ok(api.post('/lists', { name: 'S', objectType: 'contact', kind: 'static' }), 201);
  await ok(api.post(`/lists/${list.id}/members`, { objectIds: [a.id] }));
  const added = await during(tenantId, () => ok(api.post(`/lists/${list.id}/members`, { objectIds: [b.id, a.id] })));
  assert.deepEqual(
    added.map((e) => [e.type, e.data.objectId, e.data.list.id, e.data.list.memberCount]),
    [['list.member_added', b.id, list.id, 2]],
  );
  const removed = await during(tenantId, () => ok(api.delete(`/lists/${list.id}/members/${a.id}`), 204));
  assert.deepEqual(
    removed.map((e) => [e.type, e.data.objectId, e.data.list.memberCount]),
    [['list.member_removed', a.id, 1]],
  );

  const form = (await ok(api.get('/forms'))).find((f: any) => f.slug === 'contact-us');
  const submitted = await during(tenantId, () =>
    t.app.inject({ method: 'POST', url: new URL(form.embedUrl).pathname, payload: { email: 'sub@x.test', name: 'Sub' } }),
  );
  const ev = submitted.find((e) => e.type === 'form.submitted')!;
  const listed = (await ok(api.get(`/forms/${form.id}/submissions`))).data[0];
  assert.deepEqual(ev.data.submission, listed);
});
