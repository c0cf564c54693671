import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { getPipeline, getStage, findPipeline } from '../../src/modules/pipelines/pipelines.service.js';
import { contextFor, type Ctx } from '../../src/http/context.js';

const t = await testApp();

const ctxFor = (tenantId: string): Ctx => contextFor(t.database, t.config, tenantId, null);

test('pipelines: list returns every pipeline by displayOrder with its stages by displayOrder', async () => {
  const { api, refs } = await newTenant(t);
  const r = await api.get('/pipelines');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, [
    {
      id: refs.sales,
      name: 'Sales',
      isDefault: true,
      displayOrder: 0,
      stages: [
        { id: refs.lead, name: 'Lead', displayOrder: 0, probability: 10, isWonStage: false, isLostStage: false },
        { id: refs.proposal, name: 'Proposal', displayOrder: 1, probability: 60, isWonStage: false, isLostStage: false },
        { id: refs.won, name: 'Won', displayOrder: 2, probability: 100, isWonStage: true, isLostStage: false },
        { id: refs.lost, name: 'Lost', displayOrder: 3, probability: 0, isWonStage: false, isLostStage: true },
      ],
    },
    {
      id: refs.partners,
      name: 'Partners',
      isDefault: false,
      displayOrder: 1,
      stages: [
        { id: refs.p_intro, name: 'Intro', displayOrder: 0, probability: 20, isWonStage: false, isLostStage: false },
        { id: refs.p_signed, name: 'Signed', displayOrder: 1, probability: 100, isWonStage: true, isLostStage: false },
      ],
    },
  ]);
  const one = await api.get(`/pipelines/${refs.partners}`);
  assert.equal(one.status, 200);
  assert.deepEqual(one.body, r.body[1]);
});

test('pipelines: order follows displayOrder, not insertion or id; a pipeline without stages has []', async () => {
  const setup = STANDARD_SETUP();
  setup.pipelines = [
    {
      ref: 'z',
      name: 'Zeta',
      stages: [
        { ref: 'z2', name: 'B', probability: 12.5 },
        { ref: 'z1', name: 'A', probability: 50 },
      ],
    },
    { ref: 'a', name: 'Alpha', isDefault: true, stages: [{ ref: 'a1', name: 'First', probability: 5 }] },
    { ref: 'm', name: 'Mid', stages: [{ ref: 'm1', name: 'Only', probability: 0 }] },
  ];
  const ten = await newTenant(t, setup);
  const db = t.database.db;
  // Reorder in the database as the CRM UI would: display_order decides, not the creation order.
  await db.updateTable('pipelines').set({ display_order: 5 }).where('tenant_id', '=', ten.tenantId).where('id', '=', ten.refs.z).execute();
  await db.updateTable('stages').set({ display_order: 9 }).where('tenant_id', '=', ten.tenantId).where('id', '=', ten.refs.z2).execute();
  await db
    .insertInto('pipelines')
    .values({ tenant_id: ten.tenantId, id: 'pip_empty', name: 'Empty', is_default: 0, display_order: 3, created_at: new Date().toISOString() })
    .execute();
  const r = await ten.api.get('/pipelines');
  assert.deepEqual(
    r.body.map((p: any) => p.name),
    ['Alpha', 'Mid', 'Empty', 'Zeta'],
  );
  assert.equal(r.body[0].isDefault, true);
  assert.deepEqual(
    r.body[0].stages.map((s: any) => s.name),
    ['First'],
  );
  assert.deepEqual(r.body[2].stages, []);
  assert.deepEqual((await ten.api.get('/pipelines/pip_empty')).body.stages, []);
  assert.deepEqual(
    r.body[3].stages.map((s: any) => [s.name, s.probability]),
    [
      ['A', 50],
      ['B', 12.5],
    ],
  );
});

test("pipelines: unknown ids and other tenants' pipelines are 404", async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  for (const id of [b.refs.sales, 'pip_missing', a.refs.lead, '%00', 'x'.repeat(3000)]) {
    const r = await a.api.get(`/pipelines/${id}`);
    assert.equal(r.status, 404, id);
    assert.equal(r.body.error, 'not_found');
  }
  const mine = (await a.api.get('/pipelines')).body.map((p: any) => p.id);
  assert.deepEqual(mine, [a.refs.sales, a.refs.partners]);
  assert.ok(!mine.includes(b.refs.sales));
});

test('pipelines: scope pipelines:read', async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push({ ref: 'pr', name: 'Pipelines', user: 'ana', scopes: ['pipelines:read'] });
  const ten = await newTenant(t, setup);
  assert.equal((await ten.as('pr').get('/pipelines')).status, 200);
  assert.equal((await ten.as('pr').get(`/pipelines/${ten.refs.sales}`)).status, 200);
  for (const r of [await ten.as('ro').get('/pipelines'), await ten.as('ro').get(`/pipelines/${ten.refs.sales}`)]) {
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'insufficient_scope');
    assert.deepEqual(r.body.required, ['pipelines:read']);
  }
  // Read-only resource: no write routes.
  assert.equal((await ten.api.post('/pipelines', { name: 'X' })).status, 404);
  assert.equal((await ten.api.delete(`/pipelines/${ten.refs.sales}`)).status, 404);
});

test('pipelines: service helpers for deals (getStage, getPipeline, findPipeline)', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const ctx = ctxFor(a.tenantId);
  assert.deepEqual(await getStage(ctx, a.refs.won), { id: a.refs.won, pipelineId: a.refs.sales, isWonStage: true, isLostStage: false });
  assert.deepEqual(await getStage(ctx, a.refs.lost), { id: a.refs.lost, pipelineId: a.refs.sales, isWonStage: false, isLostStage: true });
  assert.deepEqual(await getStage(ctx, a.refs.p_intro), { id: a.refs.p_intro, pipelineId: a.refs.partners, isWonStage: false, isLostStage: false });
  assert.equal(await getStage(ctx, b.refs.won), undefined);
  assert.equal(await getStage(ctx, 'stg_missing'), undefined);
  assert.equal((await getPipeline(ctx, a.refs.sales)).stages.length, 4);
  await assert.rejects(getPipeline(ctx, b.refs.sales), { statusCode: 404, code: 'not_found' });
  assert.equal(await findPipeline(ctx, b.refs.sales), undefined);
});
