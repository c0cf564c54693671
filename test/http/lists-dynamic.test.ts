import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant as makeTenant, testApp, type Client } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { recalculateDirtyLists } from '../../src/workers/dynamic-lists.js';

const t = await testApp();
const db = t.database.db;

const members = async (api: Client, listId: string) => (await api.get(`/lists/${listId}/members?pageSize=100`)).body.data.map((x: any) => x.id).sort();
const count = async (api: Client, listId: string) => (await api.get(`/lists/${listId}`)).body.memberCount;
// Passes cover this file's tenants only: on PostgreSQL the test files share one database, and a pass over
// every tenant would take (and recalculate) other files' markers while their tests wait for them.
const tenants: string[] = [];
const newTenant: typeof makeTenant = async (...args) => {
  const tenant = await makeTenant(...args);
  tenants.push(tenant.tenantId);
  return tenant;
};
const recalc = () => recalculateDirtyLists(t.database, undefined, undefined, { tenantIds: tenants });

test('dynamic lists: a contact with score 90 joins "hot", leaves when the score drops to 10, and when deleted', async () => {
  const { api, refs } = await newTenant(t);
  const c = (await api.post('/contacts', { firstName: 'Hot', score: 90 })).body;
  const cold = (await api.post('/contacts', { firstName: 'Cold', score: 79 })).body;
  const edge = (await api.post('/contacts', { firstName: 'Edge', score: 80 })).body;

  await recalc();
  assert.deepEqual(await members(api, refs.hot), [c.id, edge.id].sort());
  assert.equal(await count(api, refs.hot), 2);
  const page = (await api.get(`/lists/${refs.hot}/members`)).body;
  assert.deepEqual(
    page.data.find((x: any) => x.id === c.id),
    (await api.get(`/contacts/${c.id}`)).body,
  );
  assert.ok(!(await members(api, refs.hot)).includes(cold.id));

  assert.equal((await api.patch(`/contacts/${c.id}`, { score: 10 })).status, 200);
  await recalc();
  assert.deepEqual(await members(api, refs.hot), [edge.id]);
  assert.equal(await count(api, refs.hot), 1);

  await api.patch(`/contacts/${cold.id}`, { score: 100 });
  await recalc();
  assert.deepEqual(await members(api, refs.hot), [cold.id, edge.id].sort());

  // A soft-deleted record leaves at once (reads exclude it), and its row goes at the next pass.
  assert.equal((await api.delete(`/contacts/${edge.id}`)).status, 204);
  assert.deepEqual(await members(api, refs.hot), [cold.id]);
  assert.equal(await count(api, refs.hot), 1);
  await recalc();
  const rows = await db
    .selectFrom('list_members')
    .select('object_id')
    .where('tenant_id', '=', await tenantOf(refs.hot))
    .where('list_id', '=', refs.hot)
    .execute();
  assert.deepEqual(
    rows.map((r) => r.object_id),
    [cold.id],
  );
  const list = await db.selectFrom('lists').select('recalculated_at').where('id', '=', refs.hot).executeTakeFirstOrThrow();
  assert.ok(list.recalculated_at);
});

async function tenantOf(listId: string): Promise<string> {
  return (await db.selectFrom('lists').select('tenant_id').where('id', '=', listId).executeTakeFirstOrThrow()).tenant_id;
}

test('dynamic lists: only object types changed since the last pass are recalculated', async () => {
  const { api, refs } = await newTenant(t);
  const tenantId = await tenantOf(refs.hot);
  const c = (await api.post('/contacts', { firstName: 'Hot', score: 90 })).body;
  await recalc();
  assert.deepEqual(await members(api, refs.hot), [c.id]);
  assert.equal(
    (await db.selectFrom('list_dirty').select('object_type').where('tenant_id', '=', tenantId).execute()).length,
    0,
    'the pass clears the markers it handled',
  );

  // Take the member out behind the engine's back: with nothing changed, a pass leaves the list alone…
  await db.deleteFrom('list_members').where('tenant_id', '=', tenantId).where('list_id', '=', refs.hot).execute();
  await recalc();
  assert.deepEqual(await members(api, refs.hot), []);
  // …a change of another object type (a company) does not touch contact lists…
  await api.post('/companies', { name: 'Acme' });
  await recalc();
  assert.deepEqual(await members(api, refs.hot), []);
  // …and any contact change recalculates them.
  await api.post('/contacts', { firstName: 'Lukewarm', score: 1 });
  await recalc();
  assert.deepEqual(await members(api, refs.hot), [c.id]);
});

test('dynamic lists: company and deal lists, custom properties and tags, several lists per type', async () => {
  const setup = STANDARD_SETUP();
  setup.lists.push(
    {
      ref: 'tech',
      name: 'Tech companies',
      objectType: 'company',
      kind: 'dynamic',
      filters: { operator: 'AND', conditions: [{ field: 'industry', operator: 'eq', value: 'Tech' }] },
    },
    {
      ref: 'big',
      name: 'Big deals',
      objectType: 'deal',
      kind: 'dynamic',
      filters: {
        operator: 'AND',
        conditions: [
          { field: 'value', operator: 'gte', value: 1000 },
          { field: 'isLost', operator: 'eq', value: false },
        ],
      },
    },
    {
      ref: 'ent',
      name: 'Enterprise or VIP',
      objectType: 'contact',
      kind: 'dynamic',
      filters: {
        operator: 'OR',
        conditions: [
          { field: 'customProperties.contact_select', operator: 'eq', value: 'ent' },
          { field: 'tags', operator: 'exists' },
        ],
      },
    },
    { ref: 'plain', name: 'Plain', objectType: 'contact', kind: 'static' },
  );
  const { api, refs } = await newTenant(t, setup);
  const tech = (await api.post('/companies', { name: 'T', industry: 'Tech' })).body;
  await api.post('/companies', { name: 'R', industry: 'Retail' });
  const big = (await api.post('/deals', { title: 'Big', pipelineId: refs.sales, stageId: refs.lead, value: 1000 })).body;
  await api.post('/deals', { title: 'Small', pipelineId: refs.sales, stageId: refs.lead, value: 999.99 });
  const ent = (await api.post('/contacts', { firstName: 'E', customProperties: { [refs.contact_select]: 'ent' } })).body;
  const tag = (await api.post('/tags', { name: 'VIP' })).body;
  const vip = (await api.post('/contacts', { firstName: 'V', tags: [tag.id] })).body;
  await api.post('/contacts', { firstName: 'S', customProperties: { [refs.contact_select]: 'smb' } });
  const staticMember = (await api.post('/contacts', { firstName: 'Static' })).body;
  await api.post(`/lists/${refs.plain}/members`, { objectIds: [staticMember.id] });

  const r = await recalc();
  assert.ok(r.lists >= 4);
  assert.deepEqual(await members(api, refs.tech), [tech.id]);
  assert.deepEqual(await members(api, refs.big), [big.id]);
  assert.deepEqual(await members(api, refs.ent), [ent.id, vip.id].sort());
  assert.deepEqual(await members(api, refs.hot), []);
  assert.deepEqual(await members(api, refs.plain), [staticMember.id], 'static lists are never recalculated');

  await api.patch(`/deals/${big.id}`, { isLost: true });
  await api.patch(`/companies/${tech.id}`, { industry: 'Retail' });
  await api.patch(`/contacts/${vip.id}`, { tags: [] });
  await recalc();
  assert.deepEqual(await members(api, refs.big), []);
  assert.deepEqual(await members(api, refs.tech), []);
  assert.deepEqual(await members(api, refs.ent), [ent.id]);
  assert.deepEqual(await members(api, refs.plain), [staticMember.id]);
});

test('dynamic lists: never-calculated lists are computed without a marker; a broken filter skips only its list', async () => {
  const setup = STANDARD_SETUP();
  setup.lists.push({
    ref: 'hot2',
    name: 'Also hot',
    objectType: 'contact',
    kind: 'dynamic',
    filters: { operator: 'AND', conditions: [{ field: 'score', operator: 'gt', value: 50 }] },
  });
  const { api, refs } = await newTenant(t, setup);
  const tenantId = await tenantOf(refs.hot);
  const c = (await api.post('/contacts', { firstName: 'Hot', score: 90 })).body;
  await db.deleteFrom('list_dirty').where('tenant_id', '=', tenantId).execute();
  await recalc();
  assert.deepEqual(await members(api, refs.hot), [c.id]);
  assert.deepEqual(await members(api, refs.hot2), [c.id]);

  // A stored filter that no longer compiles (its property is gone) leaves that list as it was.
  await db
    .updateTable('lists')
    .set({ filters: JSON.stringify({ operator: 'AND', conditions: [{ field: 'customProperties.prop_gone', operator: 'eq', value: 1 }] }) })
    .where('id', '=', refs.hot2)
    .execute();
  await api.patch(`/contacts/${c.id}`, { score: 10 });
  const r = await recalc();
  assert.ok(r.failed >= 1);
  assert.deepEqual(await members(api, refs.hot), []);
  assert.deepEqual(await members(api, refs.hot2), [c.id]);
});

test('dynamic lists: a change made while a pass runs is never lost', async () => {
  const { api, refs } = await newTenant(t);
  const c = (await api.post('/contacts', { firstName: 'Flip', score: 90 })).body;
  let score = 90;
  for (let i = 0; i < 8; i++) {
    score = score >= 80 ? 10 : 90;
    // The write and the pass race; whichever wins, the marker survives for the next pass.
    await Promise.all([recalc(), api.patch(`/contacts/${c.id}`, { score })]);
  }
  await recalc();
  assert.deepEqual(await members(api, refs.hot), score >= 80 ? [c.id] : []);
});

test('dynamic lists: tenants are recalculated independently', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const ca = (await a.api.post('/contacts', { firstName: 'A', score: 99 })).body;
  const cb = (await b.api.post('/contacts', { firstName: 'B', score: 99 })).body;
  await recalc();
  assert.deepEqual(await members(a.api, a.refs.hot), [ca.id]);
  assert.deepEqual(await members(b.api, b.refs.hot), [cb.id]);
  assert.equal((await b.api.get(`/lists/${a.refs.hot}/members`)).status, 404);
});
