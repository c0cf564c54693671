// CONTRACT D.1 restore: POST /{contacts,companies,deals,proposals,lists}/:id/restore brings back a record deleted
// within RESTORE_WINDOW_DAYS (200, the record as GET answers it, updatedAt moved, a `<type>.restored` event), with its
// tags and static-list memberships; 409 not_deleted for a live record; 404 when missing, another tenant's or deleted
// longer ago than the window; a unique value a live record took meanwhile answers the create's duplicate error and
// restores nothing. The workers purge older deletions for good, with their tag links and memberships.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { newTenant, testApp, type Client } from '../helpers/app.js';
import { retentionPass } from '../../src/workers/retention.js';

const t = await testApp();
const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

let seq = 0;
async function post(api: Client, url: string, body: Record<string, unknown>): Promise<any> {
  const r = await api.post(url, body);
  assert.equal(r.status, 201, `${url} ${JSON.stringify(r.body)}`);
  return r.body;
}
const del = async (api: Client, url: string) => assert.equal((await api.delete(url)).status, 204, url);

async function eventsOf(api: Client, type: string): Promise<any[]> {
  const r = await api.get(`/events?limit=1000&types=${type}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data;
}

/** Moves a deletion back in time, as if it had happened `days` ago. */
async function deletedDaysAgo(table: string, id: string, days: number): Promise<void> {
  await sql`update ${sql.table(table)} set deleted_at = ${ago(days)} where id = ${id}`.execute(t.database.db);
}

test('a deleted contact comes back: 200 as GET answers it, updatedAt moved, its tags and list memberships, one contact.restored event', async () => {
  const { api } = await newTenant(t);
  const tag = await post(api, '/tags', { name: `vip ${++seq}` });
  const c = await post(api, '/contacts', { firstName: 'Ana', email: `ana${++seq}@x.test`, tags: [tag.id] });
  const list = await post(api, '/lists', { name: `L${++seq}`, objectType: 'contact', kind: 'static' });
  assert.equal((await api.post(`/lists/${list.id}/members`, { objectIds: [c.id] })).status, 200);
  await del(api, `/contacts/${c.id}`);
  assert.equal((await api.get(`/contacts/${c.id}`)).status, 404);
  assert.equal((await api.get(`/lists/${list.id}`)).body.memberCount, 0);
  const deletedAt = (await api.get(`/contacts?includeDeleted=true&pageSize=100`)).body.data.find((x: any) => x.id === c.id).updatedAt;

  const r = await api.post(`/contacts/${c.id}/restore`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const got = await api.get(`/contacts/${c.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(r.body, got.body);
  assert.equal('deletedAt' in r.body, false);
  assert.deepEqual(r.body.tags, [tag.id]);
  assert.ok(r.body.updatedAt > deletedAt, `${r.body.updatedAt} after ${deletedAt}`);
  assert.equal((await api.get(`/lists/${list.id}`)).body.memberCount, 1);
  assert.deepEqual(
    (await api.get(`/lists/${list.id}/members`)).body.data.map((m: any) => m.id),
    [c.id],
  );
  assert.equal((await api.get(`/contacts?pageSize=100`)).body.data.filter((x: any) => x.id === c.id).length, 1);
  const events = await eventsOf(api, 'contact.restored');
  assert.equal(events.length, 1);
  assert.deepEqual(events[0].data, { contact: r.body });
});

test('restore answers 409 not_deleted for a live record, 404 when missing, another tenant’s or deleted longer ago than the window', async () => {
  const ten = await newTenant(t);
  const other = await newTenant(t);
  const { api } = ten;
  const c = await post(api, '/contacts', { firstName: 'Bia' });
  const live = await api.post(`/contacts/${c.id}/restore`);
  assert.equal(live.status, 409);
  assert.equal(live.body.error, 'not_deleted');
  assert.equal((await api.post('/contacts/con_missing/restore')).status, 404);
  await del(api, `/contacts/${c.id}`);
  const theirs = await other.api.post(`/contacts/${c.id}/restore`);
  assert.equal(theirs.status, 404);
  assert.equal(theirs.body.error, 'not_found');
  assert.equal((await api.get(`/contacts/${c.id}`)).status, 404, 'the other tenant restored nothing');
  // RESTORE_WINDOW_DAYS is 90 by default: 89 days ago can be restored, 91 cannot.
  await deletedDaysAgo('contacts', c.id, 91);
  assert.equal((await api.post(`/contacts/${c.id}/restore`)).status, 404);
  await deletedDaysAgo('contacts', c.id, 89);
  assert.equal((await api.post(`/contacts/${c.id}/restore`)).status, 200);
  const twice = await api.post(`/contacts/${c.id}/restore`);
  assert.equal(twice.status, 409);
  assert.equal(twice.body.error, 'not_deleted');
  // The write scope is required.
  const ro = await ten.as('ro').post(`/contacts/${c.id}/restore`);
  assert.equal(ro.status, 403);
  assert.equal(ro.body.error, 'insufficient_scope');
});

test('an e-mail a live contact took meanwhile: 409 duplicate_email with existingContactId, nothing restored', async () => {
  const { api } = await newTenant(t);
  const email = `dup${++seq}@x.test`;
  const c = await post(api, '/contacts', { firstName: 'Old', email, phone: `+55 11 9${String(10_000_000 + ++seq)}` });
  await del(api, `/contacts/${c.id}`);
  const taker = await post(api, '/contacts', { firstName: 'New', email });
  const r = await api.post(`/contacts/${c.id}/restore`);
  assert.equal(r.status, 409, JSON.stringify(r.body));
  assert.equal(r.body.error, 'duplicate_email');
  assert.equal(r.body.existingContactId, taker.id);
  assert.equal((await api.get(`/contacts/${c.id}`)).status, 404);
  assert.deepEqual(await eventsOf(api, 'contact.restored'), []);
  // Once the address is free again, the restore goes through.
  await del(api, `/contacts/${taker.id}`);
  assert.equal((await api.post(`/contacts/${c.id}/restore`)).status, 200);
});

test('companies: a domain taken meanwhile is 409 duplicate_domain; restored, company.restored; a contact’s company deleted meanwhile stays cleared', async () => {
  const { api, refs } = await newTenant(t);
  const domain = `acme${++seq}.test`;
  const co = await post(api, '/companies', { name: 'Acme', domain });
  await del(api, `/companies/${co.id}`);
  const taker = await post(api, '/companies', { name: 'Acme 2', domain });
  const r = await api.post(`/companies/${co.id}/restore`);
  assert.equal(r.status, 409);
  assert.equal(r.body.error, 'duplicate_domain');
  assert.equal(r.body.existingCompanyId, taker.id);
  await del(api, `/companies/${taker.id}`);
  const ok = await api.post(`/companies/${co.id}/restore`);
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.deepEqual(ok.body, (await api.get(`/companies/${co.id}`)).body);
  assert.equal((await eventsOf(api, 'company.restored')).length, 1);

  // A contact deleted while its company was live; the company is deleted afterwards: restored, the contact's
  // companyId is cleared, as the company's deletion would have cleared it had the contact been live.
  const other = await post(api, '/companies', { name: `Gone ${++seq}` });
  const c = await post(api, '/contacts', { firstName: 'Caio', companyId: other.id });
  const d = await post(api, '/deals', { title: 'D', companyId: other.id, pipelineId: refs.sales, stageId: refs.lead });
  await del(api, `/contacts/${c.id}`);
  await del(api, `/deals/${d.id}`);
  await del(api, `/companies/${other.id}`);
  const back = await api.post(`/contacts/${c.id}/restore`);
  assert.equal(back.status, 200);
  assert.equal(back.body.companyId, null);
  const deal = await api.post(`/deals/${d.id}/restore`);
  assert.equal(deal.status, 200, JSON.stringify(deal.body));
  assert.equal(deal.body.companyId, null);
});

test('deals, proposals and lists come back too; a deal’s second proposal meanwhile is 400 duplicate_proposal_for_deal', async () => {
  const { api, refs } = await newTenant(t);
  const d = await post(api, '/deals', { title: `Deal ${++seq}`, pipelineId: refs.sales, stageId: refs.lead });
  await del(api, `/deals/${d.id}`);
  const deal = await api.post(`/deals/${d.id}/restore`);
  assert.equal(deal.status, 200, JSON.stringify(deal.body));
  assert.deepEqual(deal.body, (await api.get(`/deals/${d.id}`)).body);
  assert.equal((await eventsOf(api, 'deal.restored')).length, 1);

  const p = await post(api, '/proposals', { subject: 'First', dealId: d.id });
  await del(api, `/proposals/${p.id}`);
  const second = await post(api, '/proposals', { subject: 'Second', dealId: d.id });
  const dup = await api.post(`/proposals/${p.id}/restore`);
  assert.equal(dup.status, 400, JSON.stringify(dup.body));
  assert.equal(dup.body.error, 'duplicate_proposal_for_deal');
  assert.equal(dup.body.existingProposalId, second.id);
  await del(api, `/proposals/${second.id}`);
  const prop = await api.post(`/proposals/${p.id}/restore`);
  assert.equal(prop.status, 200, JSON.stringify(prop.body));
  assert.deepEqual(prop.body, (await api.get(`/proposals/${p.id}`)).body);
  assert.equal((await eventsOf(api, 'proposal.restored')).length, 1);

  const c = await post(api, '/contacts', { firstName: 'Member' });
  const list = await post(api, '/lists', { name: `L${++seq}`, objectType: 'contact', kind: 'static' });
  assert.equal((await api.post(`/lists/${list.id}/members`, { objectIds: [c.id] })).status, 200);
  await del(api, `/lists/${list.id}`);
  assert.equal((await api.get(`/lists/${list.id}`)).status, 404);
  const back = await api.post(`/lists/${list.id}/restore`);
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.deepEqual(back.body, (await api.get(`/lists/${list.id}`)).body);
  assert.equal(back.body.memberCount, 1);
  assert.equal((await eventsOf(api, 'list.restored')).length, 1);
});

test('the workers purge deletions older than the window for good, with their tag links and memberships; younger ones stay', async () => {
  const { api, tenantId } = await newTenant(t);
  const { db } = t.database;
  const tag = await post(api, '/tags', { name: `old ${++seq}` });
  const oldC = await post(api, '/contacts', { firstName: 'Old', tags: [tag.id] });
  const young = await post(api, '/contacts', { firstName: 'Young', tags: [tag.id] });
  const list = await post(api, '/lists', { name: `L${++seq}`, objectType: 'contact', kind: 'static' });
  assert.equal((await api.post(`/lists/${list.id}/members`, { objectIds: [oldC.id, young.id] })).status, 200);
  const oldList = await post(api, '/lists', { name: `Gone ${++seq}`, objectType: 'contact', kind: 'static' });
  assert.equal((await api.post(`/lists/${oldList.id}/members`, { objectIds: [young.id] })).status, 200);
  for (const [path, id] of [
    ['contacts', oldC.id],
    ['contacts', young.id],
    ['lists', oldList.id],
  ]) {
    await del(api, `/${path}/${id}`);
  }
  await deletedDaysAgo('contacts', oldC.id, 91);
  await deletedDaysAgo('lists', oldList.id, 91);
  await deletedDaysAgo('contacts', young.id, 89);
  const listed = async () => (await api.get('/contacts?includeDeleted=true&pageSize=100')).body.data.map((x: any) => x.id).sort();
  assert.deepEqual(await listed(), [oldC.id, young.id].sort());

  const r = await retentionPass(t.database, { eventRetentionDays: 30, deliveryRetentionDays: 30, restoreWindowDays: 90, batch: 1 });
  assert.ok(r.purged >= 2, JSON.stringify(r));
  assert.deepEqual(await listed(), [young.id]);
  const count = async (table: 'record_tags' | 'list_members', column: 'object_id' | 'list_id', id: string) =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((e) => e.fn.countAll<number>().as('n'))
          .where('tenant_id', '=', tenantId)
          .where(column, '=', id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  assert.equal(await count('record_tags', 'object_id', oldC.id), 0);
  assert.equal(await count('list_members', 'object_id', oldC.id), 0);
  assert.equal(await count('list_members', 'list_id', oldList.id), 0);
  assert.equal(await count('record_tags', 'object_id', young.id), 1, 'the younger deletion keeps its tags');
  assert.equal((await api.post(`/contacts/${oldC.id}/restore`)).status, 404);
  assert.equal((await api.post(`/lists/${oldList.id}/restore`)).status, 404);
  const back = await api.post(`/contacts/${young.id}/restore`);
  assert.equal(back.status, 200);
  assert.deepEqual(back.body.tags, [tag.id]);
  assert.equal((await api.get(`/lists/${list.id}`)).body.memberCount, 1);
});
