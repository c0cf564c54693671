// The deal state machine: spec 3.1 (every row), CONTRACT B.5 (every rule) and the deal events of B.9.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';

const t = await testApp();

interface EventRow {
  id: string;
  type: string;
  payload: { event: string; tenantId: string; timestamp: string; data: Record<string, any> };
}

async function events(tenantId: string): Promise<EventRow[]> {
  const rows = await t.database.db.selectFrom('events').select(['id', 'type', 'payload']).where('tenant_id', '=', tenantId).orderBy('created_at').execute();
  return rows.map((r) => ({ id: r.id, type: r.type, payload: JSON.parse(r.payload) }));
}

/**
 * Runs `fn` and returns the state events of spec 3.1 it recorded. C.4's `deal.updated`, which every
 * change raises beside them, is left out here: test/http/events-catalog.test.ts covers it.
 */
async function eventsOf(tenantId: string, fn: () => Promise<unknown>): Promise<EventRow[]> {
  const before = new Set((await events(tenantId)).map((e) => e.id));
  await fn();
  return (await events(tenantId)).filter((e) => !before.has(e.id) && e.type !== 'deal.updated');
}

const types = (evs: EventRow[]) => evs.map((e) => e.type).sort();

async function newDeal(api: Client, refs: Tenant['refs'], extra: Record<string, unknown> = {}) {
  const r = await api.post('/deals', { title: 'Deal', pipelineId: refs.sales, stageId: refs.lead, value: 100, ...extra });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

/** Asserts that a failing write answered `status`/`code` and changed nothing (record and events). */
async function rejected(ten: Tenant, id: string, body: Record<string, unknown>, status: number, code: string) {
  const before = (await ten.api.get(`/deals/${id}`)).body;
  let res: any;
  const evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${id}`, body);
  });
  assert.equal(res.status, status, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error, code);
  assert.deepEqual((await ten.api.get(`/deals/${id}`)).body, before, 'the deal is unchanged');
  assert.deepEqual(evs, [], 'no event recorded');
  return res;
}

const isoMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function open(ten: Tenant) {
  return newDeal(ten.api, ten.refs);
}
async function won(ten: Tenant) {
  const d = await newDeal(ten.api, ten.refs);
  return (await ten.api.patch(`/deals/${d.id}`, { isWon: true })).body;
}
async function lost(ten: Tenant) {
  const d = await newDeal(ten.api, ten.refs);
  return (await ten.api.patch(`/deals/${d.id}`, { isLost: true, lossReasonId: ten.refs.price, lossNotes: 'Too expensive' })).body;
}

// --- 3.1 row 1: open → PATCH stageId of the same pipeline → open, in the new stage ---------------

test('3.1 open + stageId of its pipeline → open in the new stage; deal.stage_changed with previousStageId', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  let res: any;
  const evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${d.id}`, { stageId: ten.refs.proposal });
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.stageId, ten.refs.proposal);
  assert.equal(res.body.pipelineId, ten.refs.sales);
  assert.equal(res.body.isWon, false);
  assert.equal(res.body.isLost, false);
  assert.equal(res.body.closedAt, null);
  assert.deepEqual(types(evs), ['deal.stage_changed']);
  assert.equal(evs[0].payload.data.previousStageId, ten.refs.lead);
  assert.deepEqual(evs[0].payload.data.deal, res.body, 'data.deal is the record as a single read returns it');
  assert.equal(evs[0].payload.event, 'deal.stage_changed');
  assert.equal(evs[0].payload.tenantId, ten.tenantId);

  // Same stage again: no move, no event.
  const again = await eventsOf(ten.tenantId, () => ten.api.patch(`/deals/${d.id}`, { stageId: ten.refs.proposal }));
  assert.deepEqual(again, []);
});

// --- 3.1 row 2: open → isWon (optionally closedAt) → won ----------------------------------------

test('3.1 open + isWon → won; closedAt is now; deal.won', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  const t0 = new Date().toISOString();
  let res: any;
  const evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${d.id}`, { isWon: true });
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.isWon, true);
  assert.equal(res.body.isLost, false);
  assert.match(res.body.closedAt, isoMs);
  assert.ok(res.body.closedAt >= t0 && res.body.closedAt <= new Date().toISOString());
  assert.equal(res.body.stageId, ten.refs.lead, 'winning by flag does not move the stage');
  assert.deepEqual(types(evs), ['deal.won']);
  assert.deepEqual(evs[0].payload.data.deal, res.body);
});

test('3.1 open + isWon with closedAt → won at the given time (normalized to UTC ms)', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  const res = await ten.api.patch(`/deals/${d.id}`, { isWon: true, closedAt: '2026-10-01T09:30:00-03:00' });
  assert.equal(res.status, 200);
  assert.equal(res.body.closedAt, '2026-10-01T12:30:00.000Z');
  // A won deal's closedAt may be corrected.
  const fixed = await ten.api.patch(`/deals/${d.id}`, { closedAt: '2026-10-02T00:00:00Z' });
  assert.equal(fixed.body.closedAt, '2026-10-02T00:00:00.000Z');
  // Other edits keep it.
  const edited = await ten.api.patch(`/deals/${d.id}`, { title: 'Renamed', isWon: true });
  assert.equal(edited.body.closedAt, '2026-10-02T00:00:00.000Z');
});

// --- 3.1 row 3: open → isLost (+ lossReasonId, lossNotes) → lost ---------------------------------

test('3.1 open + isLost with lossReasonId and lossNotes → lost; closedAt now; deal.lost', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  const t0 = new Date().toISOString();
  let res: any;
  const evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${d.id}`, { isLost: true, lossReasonId: ten.refs.price, lossNotes: 'Went with a competitor' });
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.isLost, true);
  assert.equal(res.body.isWon, false);
  assert.equal(res.body.lossReasonId, ten.refs.price);
  assert.equal(res.body.lossNotes, 'Went with a competitor');
  assert.ok(res.body.closedAt >= t0);
  assert.deepEqual(types(evs), ['deal.lost']);
  assert.deepEqual(evs[0].payload.data.deal, res.body);
  // A lost deal's loss fields can be edited; it stays lost with the same closedAt.
  const edited = await ten.api.patch(`/deals/${d.id}`, { lossReasonId: ten.refs.timing, lossNotes: null });
  assert.equal(edited.body.lossReasonId, ten.refs.timing);
  assert.equal(edited.body.lossNotes, null);
  assert.equal(edited.body.closedAt, res.body.closedAt);
});

test('B.5 isLost without lossReasonId is allowed', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  const res = await ten.api.patch(`/deals/${d.id}`, { isLost: true });
  assert.equal(res.status, 200);
  assert.equal(res.body.isLost, true);
  assert.equal(res.body.lossReasonId, null);
  assert.match(res.body.closedAt, isoMs);
});

// --- 3.1 row 4: any → both flags true → 422, unchanged -------------------------------------------

test('3.1 any state + isWon and isLost both true → 422 business_rule_violation, nothing changes', async () => {
  const ten = await newTenant(t);
  for (const make of [open, won, lost]) {
    const d = await make(ten);
    await rejected(ten, d.id, { isWon: true, isLost: true }, 422, 'business_rule_violation');
  }
});

test('B.5 both flags true in the RESULTING state → 422: lost + isWon, won + isLost', async () => {
  const ten = await newTenant(t);
  const l = await lost(ten);
  await rejected(ten, l.id, { isWon: true }, 422, 'business_rule_violation');
  const w = await won(ten);
  await rejected(ten, w.id, { isLost: true, lossReasonId: ten.refs.price }, 422, 'business_rule_violation');
});

test('B.5 a lost deal is won with { isLost: false, isWon: true }: loss fields cleared, closedAt set, deal.won', async () => {
  const ten = await newTenant(t);
  const l = await lost(ten);
  let res: any;
  const evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${l.id}`, { isLost: false, isWon: true, closedAt: '2026-11-01T10:00:00.000Z' });
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.isWon, true);
  assert.equal(res.body.isLost, false);
  assert.equal(res.body.closedAt, '2026-11-01T10:00:00.000Z');
  assert.equal(res.body.lossReasonId, null);
  assert.equal(res.body.lossNotes, null);
  assert.deepEqual(types(evs), ['deal.won']);

  // And back: won → lost with { isWon: false, isLost: true }.
  const t0 = new Date().toISOString();
  const back = await ten.api.patch(`/deals/${l.id}`, { isWon: false, isLost: true, lossNotes: 'Cancelled' });
  assert.equal(back.status, 200);
  assert.equal(back.body.isLost, true);
  assert.equal(back.body.isWon, false);
  assert.equal(back.body.lossNotes, 'Cancelled');
  assert.ok(back.body.closedAt >= t0, 'losing sets closedAt to now');
});

// --- 3.1 row 5: any → stageId of another pipeline → 422, unchanged -------------------------------

test('3.1 any state + stageId of another pipeline → 422 business_rule_violation, nothing changes', async () => {
  const ten = await newTenant(t);
  for (const make of [open, won, lost]) {
    const d = await make(ten);
    const r = await rejected(ten, d.id, { stageId: ten.refs.p_intro }, 422, 'business_rule_violation');
    assert.match(r.body.message, /pipeline/);
  }
  // Mixed with other fields: nothing at all is applied.
  const d = await open(ten);
  await rejected(ten, d.id, { title: 'New title', value: 5, stageId: ten.refs.p_intro }, 422, 'business_rule_violation');
});

// --- 3.1 row 6: any → DELETE → soft-deleted; linked activities remain ----------------------------

test('3.1 any state + DELETE → soft-deleted; linked activities remain', async () => {
  const ten = await newTenant(t);
  const contact = (await ten.api.post('/contacts', { firstName: 'Ana' })).body;
  for (const make of [open, won, lost]) {
    const d = await make(ten);
    const act = await ten.api.post('/activities', { type: 'call', title: 'Call', dealIds: [d.id], contactIds: [contact.id] });
    assert.equal(act.status, 201);
    const del = await ten.api.delete(`/deals/${d.id}`);
    assert.equal(del.status, 204);
    assert.equal(del.body, '');
    assert.equal((await ten.api.get(`/deals/${d.id}`)).status, 404);
    assert.equal((await ten.api.patch(`/deals/${d.id}`, { title: 'x' })).status, 404);
    assert.equal((await ten.api.delete(`/deals/${d.id}`)).status, 404);
    assert.ok(!(await ten.api.get('/deals')).body.data.some((x: any) => x.id === d.id));
    // The activity is still there, reachable through its other links.
    const still = await ten.api.get(`/activities/${act.body.id}`);
    assert.equal(still.status, 200);
    assert.deepEqual(still.body.dealIds, [], 'a deleted deal is invisible, also inside links');
    assert.ok((await ten.api.get(`/activities?relatedType=contact&relatedId=${contact.id}`)).body.some((a: any) => a.id === act.body.id));
    // The row is kept (soft delete).
    const row = await t.database.db.selectFrom('deals').select('deleted_at').where('tenant_id', '=', ten.tenantId).where('id', '=', d.id).executeTakeFirst();
    assert.ok(row?.deleted_at);
  }
});

// --- B.5: reopening ------------------------------------------------------------------------------

test('B.5 a flag set back to false reopens: closedAt, lossReasonId, lossNotes cleared; no event', async () => {
  const ten = await newTenant(t);
  const w = await won(ten);
  let res: any;
  let evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${w.id}`, { isWon: false });
  });
  assert.equal(res.status, 200);
  assert.deepEqual([res.body.isWon, res.body.isLost, res.body.closedAt], [false, false, null]);
  assert.deepEqual(evs, []);

  const l = await lost(ten);
  evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${l.id}`, { isLost: false });
  });
  assert.deepEqual([res.body.isWon, res.body.isLost, res.body.closedAt, res.body.lossReasonId, res.body.lossNotes], [false, false, null, null, null]);
  assert.deepEqual(evs, []);
  // A reopened deal can be won again (a new deal.won).
  evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${l.id}`, { isWon: true });
  });
  assert.deepEqual(types(evs), ['deal.won']);
});

test('B.5 closedAt only on a won deal and loss fields only on a lost one (400, nothing changes)', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  await rejected(ten, d.id, { closedAt: '2026-11-01T10:00:00Z' }, 400, 'validation_failed');
  await rejected(ten, d.id, { lossNotes: 'x' }, 400, 'validation_failed');
  await rejected(ten, d.id, { lossReasonId: ten.refs.price }, 400, 'validation_failed');
  await rejected(ten, d.id, { isLost: true, closedAt: '2026-11-01T10:00:00Z' }, 400, 'validation_failed');
  const w = await won(ten);
  await rejected(ten, w.id, { isWon: true, lossNotes: 'x' }, 400, 'validation_failed');
  const l = await lost(ten);
  await rejected(ten, l.id, { isLost: false, lossNotes: 'x' }, 400, 'validation_failed');
  // null is harmless on an open deal.
  assert.equal((await ten.api.patch(`/deals/${d.id}`, { closedAt: null, lossReasonId: null, lossNotes: null })).status, 200);
});

test('B.5 closedAt must be an ISO 8601 date-time (400 validation_failed naming closedAt)', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  for (const closedAt of ['yesterday', '2026-13-01T00:00:00Z', '2026-11-01T10:00:00', '01/11/2026', '']) {
    const r = await rejected(ten, d.id, { isWon: true, closedAt }, 400, 'validation_failed');
    assert.equal(r.body.details[0].field, 'closedAt');
  }
  await rejected(ten, d.id, { isWon: true, closedAt: 12345 }, 400, 'validation_failed');
});

// --- B.5: stage moves that close --------------------------------------------------------------

test('B.5 moving to an isWonStage stage wins the deal; to an isLostStage stage loses it', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  let res: any;
  let evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${d.id}`, { stageId: ten.refs.won });
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.isWon, true);
  assert.match(res.body.closedAt, isoMs);
  assert.deepEqual(types(evs), ['deal.stage_changed', 'deal.won']);
  assert.equal(evs.find((e) => e.type === 'deal.stage_changed')!.payload.data.previousStageId, ten.refs.lead);

  const d2 = await open(ten);
  evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${d2.id}`, { stageId: ten.refs.lost, lossReasonId: ten.refs.timing });
  });
  assert.equal(res.body.isLost, true);
  assert.equal(res.body.lossReasonId, ten.refs.timing);
  assert.deepEqual(types(evs), ['deal.lost', 'deal.stage_changed']);

  // A closing given with the move is honoured.
  const d3 = await open(ten);
  res = await ten.api.patch(`/deals/${d3.id}`, { stageId: ten.refs.won, closedAt: '2026-09-09T09:09:09.999Z' });
  assert.equal(res.body.closedAt, '2026-09-09T09:09:09.999Z');
});

test('B.5 a stage move contradicting its flag, or a lost deal moved to the won stage, is 422', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  await rejected(ten, d.id, { stageId: ten.refs.won, isWon: false }, 422, 'business_rule_violation');
  await rejected(ten, d.id, { stageId: ten.refs.lost, isLost: false }, 422, 'business_rule_violation');
  await rejected(ten, d.id, { stageId: ten.refs.won, isLost: true }, 422, 'business_rule_violation');
  const l = await lost(ten);
  await rejected(ten, l.id, { stageId: ten.refs.won }, 422, 'business_rule_violation');
  const ok = await ten.api.patch(`/deals/${l.id}`, { stageId: ten.refs.won, isLost: false });
  assert.equal(ok.status, 200);
  assert.deepEqual([ok.body.isWon, ok.body.isLost, ok.body.lossReasonId], [true, false, null]);
});

test('B.5 a won deal moved to a normal stage stays won', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  const w = (await ten.api.patch(`/deals/${d.id}`, { stageId: ten.refs.won })).body;
  assert.ok(w.isWon);
  // Re-sending the current stage is not a move.
  const same = await ten.api.patch(`/deals/${d.id}`, { stageId: ten.refs.won, title: 'x' });
  assert.equal(same.status, 200);
  assert.deepEqual([same.body.isWon, same.body.closedAt], [true, w.closedAt]);
  const moved = await ten.api.patch(`/deals/${d.id}`, { stageId: ten.refs.proposal });
  assert.equal(moved.body.isWon, true);
  assert.equal(moved.body.closedAt, w.closedAt);
});

// --- C.5: flags and stage never disagree --------------------------------------------------------

test('C.5 reopening a deal that sits in a won or lost stage needs a stageId of a stage that is neither (422 otherwise)', async () => {
  const ten = await newTenant(t);
  const inWon = (await ten.api.patch(`/deals/${(await open(ten)).id}`, { stageId: ten.refs.won })).body;
  const inLost = (await ten.api.patch(`/deals/${(await open(ten)).id}`, { stageId: ten.refs.lost, lossReasonId: ten.refs.price })).body;
  assert.deepEqual([inWon.isWon, inLost.isLost], [true, true]);

  for (const [deal, body] of [
    [inWon, { isWon: false }],
    [inWon, { isWon: false, stageId: ten.refs.won }],
    [inWon, { isWon: false, title: 'Reopen' }],
    [inLost, { isLost: false }],
    [inLost, { isLost: false, stageId: ten.refs.lost }],
  ] as const) {
    const r = await rejected(ten, deal.id, body, 422, 'business_rule_violation');
    assert.match(r.body.message, /to reopen it, also give a stageId of a stage that is neither won nor lost/);
  }
  // With a stage that is neither, the deal reopens there (and its closing fields are cleared).
  let res: any;
  const evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${inWon.id}`, { isWon: false, stageId: ten.refs.proposal });
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual([res.body.isWon, res.body.isLost, res.body.closedAt, res.body.stageId], [false, false, null, ten.refs.proposal]);
  assert.deepEqual(types(evs), ['deal.stage_changed']);
  const l = await ten.api.patch(`/deals/${inLost.id}`, { isLost: false, stageId: ten.refs.lead });
  assert.equal(l.status, 200);
  assert.deepEqual([l.body.isLost, l.body.lossReasonId, l.body.stageId], [false, null, ten.refs.lead]);
});

test('C.5 switching won ↔ lost in a won or lost stage must move to a stage that fits; flags alone elsewhere still work', async () => {
  const ten = await newTenant(t);
  const inWon = (await ten.api.patch(`/deals/${(await open(ten)).id}`, { stageId: ten.refs.won })).body;
  const r = await rejected(ten, inWon.id, { isWon: false, isLost: true }, 422, 'business_rule_violation');
  assert.match(r.body.message, /to mark it lost, also give a stageId of a lost stage or of one that is neither/);
  const moved = await ten.api.patch(`/deals/${inWon.id}`, { isWon: false, stageId: ten.refs.lost });
  assert.equal(moved.status, 200, JSON.stringify(moved.body));
  assert.deepEqual([moved.body.isWon, moved.body.isLost, moved.body.stageId], [false, true, ten.refs.lost], 'the lost stage loses it');
  const back = await ten.api.patch(`/deals/${inWon.id}`, { isLost: false, isWon: true, stageId: ten.refs.proposal });
  assert.deepEqual([back.status, back.body.isWon, back.body.stageId], [200, true, ten.refs.proposal]);

  // A deal closed by flags in a normal stage reopens without a stageId, as before.
  const w = await won(ten);
  const reopened = await ten.api.patch(`/deals/${w.id}`, { isWon: false });
  assert.deepEqual([reopened.status, reopened.body.isWon, reopened.body.stageId], [200, false, ten.refs.lead]);
});

// --- B.5: pipelines ------------------------------------------------------------------------------

test('B.5 PATCH pipelineId + stageId of that pipeline moves the deal to the other pipeline', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  let res: any;
  const evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.patch(`/deals/${d.id}`, { pipelineId: ten.refs.partners, stageId: ten.refs.p_intro });
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.pipelineId, ten.refs.partners);
  assert.equal(res.body.stageId, ten.refs.p_intro);
  assert.deepEqual(types(evs), ['deal.stage_changed']);
  assert.equal(evs[0].payload.data.previousStageId, ten.refs.lead);
  // Now stage moves are checked against the new pipeline.
  await rejected(ten, d.id, { stageId: ten.refs.proposal }, 422, 'business_rule_violation');
  const signed = await ten.api.patch(`/deals/${d.id}`, { stageId: ten.refs.p_signed });
  assert.equal(signed.body.isWon, true, 'p_signed is a won stage');
  // Same pipeline named explicitly works too.
  const back = await ten.api.patch(`/deals/${d.id}`, { pipelineId: ten.refs.sales, stageId: ten.refs.proposal });
  assert.equal(back.status, 200);
  assert.equal(back.body.pipelineId, ten.refs.sales);
});

test('B.5 PATCH pipelineId without stageId → 400 validation_failed; with a stageId outside it → 409 stage_invalid', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  const r = await rejected(ten, d.id, { pipelineId: ten.refs.partners }, 400, 'validation_failed');
  assert.equal(r.body.details[0].field, 'stageId');
  await rejected(ten, d.id, { pipelineId: ten.refs.partners, stageId: ten.refs.proposal }, 409, 'stage_invalid');
  await rejected(ten, d.id, { pipelineId: ten.refs.sales, stageId: ten.refs.p_intro }, 409, 'stage_invalid');
  const p = await rejected(ten, d.id, { pipelineId: 'pip_nope', stageId: ten.refs.lead }, 404, 'not_found');
  assert.match(p.body.message, /pipelineId/);
  const s = await rejected(ten, d.id, { pipelineId: ten.refs.partners, stageId: 'stg_nope' }, 404, 'not_found');
  assert.match(s.body.message, /stageId/);
  const s2 = await rejected(ten, d.id, { stageId: 'stg_nope' }, 404, 'not_found');
  assert.match(s2.body.message, /stageId/);
});

// --- Create ----------------------------------------------------------------------------------------

test('POST: stageId outside pipelineId → 409 stage_invalid; unknown pipeline/stage → 404 naming the field; nothing created', async () => {
  const ten = await newTenant(t);
  const base = { title: 'D' };
  const r = await ten.api.post('/deals', { ...base, pipelineId: ten.refs.sales, stageId: ten.refs.p_intro });
  assert.equal(r.status, 409);
  assert.equal(r.body.error, 'stage_invalid');
  const p = await ten.api.post('/deals', { ...base, pipelineId: 'pip_nope', stageId: ten.refs.lead });
  assert.equal(p.status, 404);
  assert.match(p.body.message, /pipelineId/);
  const s = await ten.api.post('/deals', { ...base, pipelineId: ten.refs.sales, stageId: 'stg_nope' });
  assert.equal(s.status, 404);
  assert.match(s.body.message, /stageId/);
  for (const missing of ['title', 'pipelineId', 'stageId']) {
    const body: Record<string, unknown> = { title: 'D', pipelineId: ten.refs.sales, stageId: ten.refs.lead };
    delete body[missing];
    const m = await ten.api.post('/deals', body);
    assert.equal(m.status, 400);
    assert.equal(m.body.details[0].field, missing);
  }
  assert.equal((await ten.api.get('/deals')).body.pagination.total, 0);
  assert.deepEqual(await events(ten.tenantId), []);
});

test('POST emits deal.created with data.deal = the created deal; in a won stage also deal.won', async () => {
  const ten = await newTenant(t);
  let res: any;
  let evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.post('/deals', { title: 'Plain', pipelineId: ten.refs.sales, stageId: ten.refs.lead });
  });
  assert.deepEqual(types(evs), ['deal.created']);
  assert.deepEqual(evs[0].payload.data.deal, res.body);
  assert.equal(evs[0].payload.data.deal.title, 'Plain');

  evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.post('/deals', { title: 'Signed', pipelineId: ten.refs.partners, stageId: ten.refs.p_signed });
  });
  assert.equal(res.status, 201);
  assert.equal(res.body.isWon, true);
  assert.match(res.body.closedAt, isoMs);
  assert.deepEqual(types(evs), ['deal.created', 'deal.won']);

  evs = await eventsOf(ten.tenantId, async () => {
    res = await ten.api.post('/deals', { title: 'Gone', pipelineId: ten.refs.sales, stageId: ten.refs.lost, lossReasonId: ten.refs.price });
  });
  assert.equal(res.body.isLost, true);
  assert.equal(res.body.lossReasonId, ten.refs.price);
  assert.deepEqual(types(evs), ['deal.created', 'deal.lost']);
});

test('POST accepts the closing fields with the PATCH rules', async () => {
  const ten = await newTenant(t);
  const w = await ten.api.post('/deals', { title: 'W', pipelineId: ten.refs.sales, stageId: ten.refs.proposal, isWon: true, closedAt: '2026-01-02T03:04:05Z' });
  assert.equal(w.status, 201);
  assert.deepEqual([w.body.isWon, w.body.closedAt], [true, '2026-01-02T03:04:05.000Z']);
  const l = await ten.api.post('/deals', {
    title: 'L',
    pipelineId: ten.refs.sales,
    stageId: ten.refs.proposal,
    isLost: true,
    lossReasonId: ten.refs.timing,
    lossNotes: 'n',
  });
  assert.equal(l.status, 201);
  assert.deepEqual([l.body.isLost, l.body.lossReasonId, l.body.lossNotes], [true, ten.refs.timing, 'n']);
  assert.match(l.body.closedAt, isoMs);
  const o = await ten.api.post('/deals', { title: 'O', pipelineId: ten.refs.sales, stageId: ten.refs.proposal, isWon: false, isLost: false });
  assert.deepEqual([o.body.isWon, o.body.isLost, o.body.closedAt], [false, false, null]);

  const before = (await ten.api.get('/deals')).body.pagination.total;
  for (const bad of [
    { isWon: true, isLost: true },
    { stageId: ten.refs.won, isLost: true },
    { stageId: ten.refs.won, isWon: false },
  ]) {
    const r = await ten.api.post('/deals', { title: 'B', pipelineId: ten.refs.sales, stageId: ten.refs.proposal, ...bad });
    assert.equal(r.status, 422, JSON.stringify(bad));
    assert.equal(r.body.error, 'business_rule_violation');
  }
  for (const bad of [{ closedAt: '2026-01-02T03:04:05Z' }, { lossNotes: 'n' }, { isWon: true, closedAt: 'soon' }, { isLost: true, lossReasonId: 'lr_nope' }]) {
    const r = await ten.api.post('/deals', { title: 'B', pipelineId: ten.refs.sales, stageId: ten.refs.proposal, ...bad });
    assert.ok(r.status === 400 || r.status === 404, JSON.stringify(bad));
  }
  assert.equal((await ten.api.get('/deals')).body.pagination.total, before, 'no failed create left a deal');
});

test('deal writes mark the deal type changed for dynamic lists', async () => {
  const ten = await newTenant(t);
  const d = await open(ten);
  const mark = () =>
    t.database.db.selectFrom('list_dirty').select('changed_at').where('tenant_id', '=', ten.tenantId).where('object_type', '=', 'deal').executeTakeFirst();
  const m1 = await mark();
  assert.ok(m1);
  await new Promise((r) => setTimeout(r, 5));
  await ten.api.patch(`/deals/${d.id}`, { title: 'x' });
  const m2 = await mark();
  assert.ok(m2!.changed_at > m1!.changed_at);
  await new Promise((r) => setTimeout(r, 5));
  await ten.api.delete(`/deals/${d.id}`);
  assert.ok((await mark())!.changed_at > m2!.changed_at);
});
