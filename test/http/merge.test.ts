// CONTRACT D.2 merge: POST /contacts/merge and /companies/merge fold `mergedId` into `primaryId` in one
// transaction: the primary keeps its values and takes the merged record's where its own are empty (unique ones
// move), tags are united, every reference is re-pointed (deals, activity links, proposals, submissions, companyId,
// static lists: a list holding both keeps one), the merged record is soft-deleted with mergedIntoId (404 with
// mergedIntoId, listed with includeDeleted, never restored), one *.merged event; duplicates forget the pair.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp, type Client } from '../helpers/app.js';

const t = await testApp();
let seq = 0;

async function post(api: Client, url: string, body: Record<string, unknown>): Promise<any> {
  const r = await api.post(url, body);
  assert.equal(r.status, 201, `${url} ${JSON.stringify(r.body)}`);
  return r.body;
}

test('contacts: values filled, unique values moved, tags united, every reference re-pointed, one contact.merged', async () => {
  const { api, refs } = await newTenant(t);
  const n = ++seq;
  const [vip, lead] = [await post(api, '/tags', { name: `vip ${n}` }), await post(api, '/tags', { name: `lead ${n}` })];
  const primary = await post(api, '/contacts', {
    firstName: 'Ana',
    email: `ana+crm.${n}@gmail.com`,
    tags: [vip.id],
    customProperties: { [refs.contact_text]: 'kept' },
  });
  const merged = await post(api, '/contacts', {
    firstName: 'A.',
    lastName: 'Souza',
    email: `a.na.${n}@gmail.com`,
    phone: `+5511976${String(100_000 + n).slice(-6)}`,
    tags: [lead.id, vip.id],
    customProperties: { [refs.contact_text]: 'lost', [refs.contact_number]: 42 },
  });
  const deal = await post(api, '/deals', { title: 'D', pipelineId: refs.sales, stageId: refs.lead, contactId: merged.id });
  const both = await post(api, '/activities', { type: 'call', title: 'Both', contactIds: [merged.id, primary.id] });
  const one = await post(api, '/activities', { type: 'call', title: 'One', contactIds: [merged.id] });
  const proposal = await post(api, '/proposals', { subject: 'P', contactId: merged.id });
  const holdsBoth = await post(api, '/lists', { name: `Both ${n}`, objectType: 'contact', kind: 'static' });
  const holdsMerged = await post(api, '/lists', { name: `Merged ${n}`, objectType: 'contact', kind: 'static' });
  assert.equal((await api.post(`/lists/${holdsBoth.id}/members`, { objectIds: [merged.id, primary.id] })).status, 200);
  assert.equal((await api.post(`/lists/${holdsMerged.id}/members`, { objectIds: [merged.id] })).status, 200);
  const form = (await api.get('/forms')).body.find((f: any) => f.slug === 'contact-us');
  const submitted = await t.app.inject({ method: 'POST', url: new URL(form.embedUrl).pathname, payload: { email: merged.email, name: 'A.', plan: 'ent' } });
  assert.equal(submitted.statusCode, 201, submitted.body);
  const submissionId = JSON.parse(submitted.body).submissionId;
  const before = (await api.get(`/contacts/${primary.id}`)).body;

  const r = await api.post('/contacts/merge', { primaryId: primary.id, mergedId: merged.id });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const after = (await api.get(`/contacts/${primary.id}`)).body;
  assert.deepEqual(r.body, after);
  assert.equal(after.firstName, 'Ana', 'the primary keeps its values');
  assert.equal(after.email, primary.email);
  assert.equal(after.lastName, 'Souza', 'and takes the merged one’s where its own are empty');
  assert.equal(after.phone, merged.phone, 'a unique value moves');
  assert.equal(after.customProperties[refs.contact_text], 'kept');
  assert.equal(after.customProperties[refs.contact_number], 42);
  assert.deepEqual([...after.tags].sort(), [lead.id, vip.id].sort());
  assert.ok(after.updatedAt > before.updatedAt);

  // The merged contact: 404 with mergedIntoId for GET, PATCH and DELETE; listed with includeDeleted; never restored.
  for (const res of [
    await api.get(`/contacts/${merged.id}`),
    await api.patch(`/contacts/${merged.id}`, { lastName: 'x' }),
    await api.delete(`/contacts/${merged.id}`),
  ]) {
    assert.equal(res.status, 404);
    assert.equal(res.body.error, 'not_found');
    assert.equal(res.body.mergedIntoId, primary.id);
  }
  const listed = (await api.get('/contacts?includeDeleted=true&pageSize=100')).body.data.find((x: any) => x.id === merged.id);
  assert.equal(listed.mergedIntoId, primary.id);
  assert.ok(listed.deletedAt);
  assert.equal(listed.phone, null, 'the merged contact no longer holds the moved phone');
  assert.equal((await api.post(`/contacts/${merged.id}/restore`)).status, 404);

  // Every reference points to the primary.
  assert.equal((await api.get(`/deals/${deal.id}`)).body.contactId, primary.id);
  assert.deepEqual((await api.get(`/activities/${both.id}`)).body.contactIds, [primary.id]);
  assert.deepEqual((await api.get(`/activities/${one.id}`)).body.contactIds, [primary.id]);
  assert.equal((await api.get(`/proposals/${proposal.id}`)).body.contactId, primary.id);
  assert.deepEqual(
    (await api.get(`/lists/${holdsBoth.id}/members`)).body.data.map((m: any) => m.id),
    [primary.id],
  );
  assert.deepEqual(
    (await api.get(`/lists/${holdsMerged.id}/members`)).body.data.map((m: any) => m.id),
    [primary.id],
  );
  const submission = (await api.get(`/forms/${refs.contact_us}/submissions`)).body.data.find((s: any) => s.id === submissionId);
  assert.equal(submission.contactId, primary.id);

  // One contact.merged event; the re-pointed records raise none, the merged contact no contact.deleted.
  const events = (await api.get('/events?limit=1000')).body.data;
  const last = events.slice(events.findIndex((e: any) => e.type === 'contact.merged'));
  assert.deepEqual(
    last.map((e: any) => e.type),
    ['contact.merged'],
  );
  const data = last[0].data;
  assert.deepEqual(data.contact, after);
  assert.equal(data.mergedId, merged.id);
  assert.equal(data.merged.lastName, 'Souza');
  assert.deepEqual([...data.changes].sort(), ['customProperties', 'lastName', 'phone', 'tags']);
  assert.equal(data.previous.lastName, null);
});

test('merge refuses the same id (400), a missing, deleted or other tenant’s record (404 naming the field), a merged one (404)', async () => {
  const ten = await newTenant(t);
  const other = await newTenant(t);
  const { api } = ten;
  const a = await post(api, '/contacts', { firstName: 'A' });
  const b = await post(api, '/contacts', { firstName: 'B' });
  const c = await post(api, '/contacts', { firstName: 'C' });
  const theirs = await post(other.api, '/contacts', { firstName: 'Theirs' });
  const same = await api.post('/contacts/merge', { primaryId: a.id, mergedId: a.id });
  assert.equal(same.status, 400);
  assert.equal(same.body.error, 'validation_failed');
  for (const [body, field] of [
    [{ primaryId: 'con_missing', mergedId: a.id }, 'primaryId'],
    [{ primaryId: a.id, mergedId: theirs.id }, 'mergedId'],
  ] as const) {
    const res = await api.post('/contacts/merge', body);
    assert.equal(res.status, 404, JSON.stringify(res.body));
    assert.equal(res.body.field, field);
  }
  assert.equal((await api.delete(`/contacts/${c.id}`)).status, 204);
  assert.equal((await api.post('/contacts/merge', { primaryId: a.id, mergedId: c.id })).status, 404);
  assert.equal((await api.post('/contacts/merge', { primaryId: a.id, mergedId: b.id })).status, 200);
  const into = await api.post('/contacts/merge', { primaryId: b.id, mergedId: a.id });
  assert.equal(into.status, 404, 'a merge into a record that was itself merged');
  assert.equal((await ten.as('ro').post('/contacts/merge', { primaryId: a.id, mergedId: b.id })).status, 403);
  assert.equal((await other.api.get(`/contacts/${theirs.id}`)).status, 200, 'the other tenant’s contact is untouched');
});

test('duplicates find ana+crm@gmail.com ~ a.na@gmail.com and Acme Ltda ~ ACME S.A., and forget the pair once merged', async () => {
  const { api } = await newTenant(t);
  const n = ++seq;
  const a = await post(api, '/contacts', { firstName: 'Ana', email: `ana${n}+crm@gmail.com` });
  const b = await post(api, '/contacts', { firstName: 'Anna', email: `a.na${n}@gmail.com` });
  const pairs = (await api.get('/contacts/duplicates')).body.data;
  assert.deepEqual(
    pairs.map((p: any) => [p.ids, p.reasons]),
    [[[a.id, b.id].sort(), ['email']]],
  );
  const x = await post(api, '/companies', { name: `Acme ${n} Ltda` });
  const y = await post(api, '/companies', { name: `ACME ${n} S.A.` });
  assert.deepEqual(
    (await api.get('/companies/duplicates')).body.data.map((p: any) => p.ids),
    [[x.id, y.id].sort()],
  );
  assert.equal((await api.post('/contacts/merge', { primaryId: a.id, mergedId: b.id })).status, 200);
  assert.deepEqual((await api.get('/contacts/duplicates')).body.data, []);
  assert.equal((await api.post('/companies/merge', { primaryId: x.id, mergedId: y.id })).status, 200);
  assert.deepEqual((await api.get('/companies/duplicates')).body.data, []);
});

test('companies: contacts, deals, activities, proposals and lists follow the primary; CNPJ moves; company.merged', async () => {
  const { api, refs } = await newTenant(t);
  const n = ++seq;
  const primary = await post(api, '/companies', { name: `Acme ${n}` });
  const merged = await post(api, '/companies', { name: `Acme Brasil ${n}`, domain: `acme${n}.com.br`, industry: 'Retail' });
  const contact = await post(api, '/contacts', { firstName: 'Worker', companyId: merged.id });
  const deal = await post(api, '/deals', { title: 'D', pipelineId: refs.sales, stageId: refs.lead, companyId: merged.id });
  const activity = await post(api, '/activities', { type: 'meeting', title: 'M', companyIds: [merged.id] });
  const proposal = await post(api, '/proposals', { subject: 'P', clientId: merged.id });
  const r = await api.post('/companies/merge', { primaryId: primary.id, mergedId: merged.id });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.domain, `acme${n}.com.br`);
  assert.equal(r.body.industry, 'Retail');
  assert.equal(r.body.name, `Acme ${n}`);
  assert.equal((await api.get(`/contacts/${contact.id}`)).body.companyId, primary.id);
  assert.equal((await api.get(`/deals/${deal.id}`)).body.companyId, primary.id);
  assert.deepEqual((await api.get(`/activities/${activity.id}`)).body.companyIds, [primary.id]);
  assert.equal((await api.get(`/proposals/${proposal.id}`)).body.clientId, primary.id);
  const gone = await api.get(`/companies/${merged.id}`);
  assert.equal(gone.status, 404);
  assert.equal(gone.body.mergedIntoId, primary.id);
  // The domain moved: a new company cannot take it, the primary holds it.
  const dup = await api.post('/companies', { name: 'Copy', domain: `acme${n}.com.br` });
  assert.equal(dup.status, 409);
  assert.equal(dup.body.existingCompanyId, primary.id);
  const events = (await api.get('/events?limit=1000&types=company.merged')).body.data;
  assert.equal(events.length, 1);
  assert.equal(events[0].data.mergedId, merged.id);
});
