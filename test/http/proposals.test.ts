import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp, type Client } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();
const db = t.database.db;
const YEAR = new Date().getUTCFullYear();

let seq = 0;
async function post(api: Client, url: string, body: Record<string, unknown>): Promise<any> {
  const r = await api.post(url, body);
  assert.equal(r.status, 201, `${url} ${JSON.stringify(r.body)}`);
  return r.body;
}
const contact = (api: Client, body: Record<string, unknown> = {}) => post(api, '/contacts', { firstName: `P${++seq}`, ...body });
const company = (api: Client) => post(api, '/companies', { name: `C${++seq}` });
const deal = (api: Client, refs: Record<string, string>, body: Record<string, unknown> = {}) =>
  post(api, '/deals', { title: `D${++seq}`, pipelineId: refs.sales, stageId: refs.lead, ...body });
const proposal = (api: Client, body: Record<string, unknown> = {}) => post(api, '/proposals', { subject: `Proposal ${++seq}`, ...body });

async function tenantIdOf(api: Client): Promise<string> {
  const p = await proposal(api);
  const row = await db.selectFrom('proposals').select('tenant_id').where('id', '=', p.id).executeTakeFirstOrThrow();
  await api.delete(`/proposals/${p.id}`);
  return row.tenant_id;
}
async function events(tenantId: string): Promise<{ type: string; payload: any }[]> {
  const rows = await db
    .selectFrom('events')
    .select(['type', 'payload', 'created_at', 'id'])
    .where('tenant_id', '=', tenantId)
    .where('type', 'like', 'proposal.%')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ type: r.type, payload: JSON.parse(r.payload) }));
}

test('proposals: create with defaults, read, number format, owner defaults to the key user', async () => {
  const { api, refs } = await newTenant(t);
  const r = await api.post('/proposals', { subject: '  Licenses  ' });
  assert.equal(r.status, 201);
  const p = r.body;
  assert.match(p.id, /^prp_/);
  assert.equal(p.number, `PR-${YEAR}-0001`);
  assert.deepEqual(
    { ...p, id: 0, createdAt: 0, updatedAt: 0 },
    {
      id: 0,
      number: `PR-${YEAR}-0001`,
      subject: 'Licenses',
      status: 'draft',
      sentAt: null,
      dealId: null,
      deal: null,
      contactId: null,
      contact: null,
      clientId: null,
      company: null,
      recipientName: null,
      recipientEmail: null,
      items: [],
      discount: 0,
      adjustment: 0,
      subtotal: 0,
      total: 0,
      notes: null,
      ownerId: refs.ana,
      createdAt: 0,
      updatedAt: 0,
    },
  );
  assert.deepEqual((await api.get(`/proposals/${p.id}`)).body, p);
  assert.equal((await proposal(api)).number, `PR-${YEAR}-0002`);
  const explicitOwner = await proposal(api, { ownerId: refs.bruno, status: 'draft' });
  assert.equal(explicitOwner.ownerId, refs.bruno);
  assert.equal(explicitOwner.status, 'draft');
  assert.equal(explicitOwner.number, `PR-${YEAR}-0003`);
  assert.equal((await proposal(api, { ownerId: null })).ownerId, null);
  assert.equal((await api.get('/proposals/prp_missing')).status, 404);
  assert.equal((await api.get('/proposals/%00')).status, 404);
});

test('proposals: deal, contact and client company are expanded as their single reads return them', async () => {
  const { api, refs } = await newTenant(t);
  const c = await contact(api, { email: 'buyer@acme.test' });
  const co = await company(api);
  const d = await deal(api, refs, { contactId: c.id, companyId: co.id, value: 100 });
  const p = await proposal(api, {
    dealId: d.id,
    contactId: c.id,
    clientId: co.id,
    recipientName: 'Dona Buyer',
    recipientEmail: '  Buyer@ACME.test ',
    notes: 'n',
  });
  assert.deepEqual(p.deal, (await api.get(`/deals/${d.id}`)).body);
  assert.deepEqual(p.contact, (await api.get(`/contacts/${c.id}`)).body);
  assert.deepEqual(p.company, (await api.get(`/companies/${co.id}`)).body);
  assert.equal(p.recipientEmail, 'buyer@acme.test');
  assert.equal(p.recipientName, 'Dona Buyer');
  assert.deepEqual((await api.get(`/proposals/${p.id}`)).body, p);
  const listed = (await api.get('/proposals')).body.data[0];
  assert.deepEqual(listed, p);

  // A soft-deleted reference reads as null.
  await api.delete(`/contacts/${c.id}`);
  const after = (await api.get(`/proposals/${p.id}`)).body;
  assert.equal(after.contact, null);
  assert.equal(after.deal.contact, null);
});

test('proposals: items and totals are computed exactly', async () => {
  const { api } = await newTenant(t);
  const p = await proposal(api, { items: [{ name: 'License', qty: 3, rate: 19.99, discountPct: 10, taxPct: 5 }] });
  assert.equal(p.items[0].total, 56.67);
  assert.equal(p.subtotal, 56.67);
  assert.equal(p.total, 56.67);

  const cents = await proposal(api, {
    items: [
      { name: 'a', rate: 0.1 },
      { name: 'b', rate: 0.2 },
    ],
  });
  assert.equal(cents.subtotal, 0.3);
  assert.equal(cents.total, 0.3);

  const full = await proposal(api, {
    items: [{ name: 'Setup', description: 'One-off', rate: 1000 }, { name: 'Hours', qty: 2.5, unit: 'hora', rate: 150, discountPct: 20 }, { name: 'Free' }],
    discount: 100.5,
    adjustment: -0.25,
  });
  assert.deepEqual(
    full.items.map((i: any) => ({ ...i, id: undefined })),
    [
      { id: undefined, order: 0, name: 'Setup', description: 'One-off', qty: 1, unit: 'Unidade', rate: 1000, discountPct: 0, taxPct: 0, total: 1000 },
      { id: undefined, order: 1, name: 'Hours', description: null, qty: 2.5, unit: 'hora', rate: 150, discountPct: 20, taxPct: 0, total: 300 },
      { id: undefined, order: 2, name: 'Free', description: null, qty: 1, unit: 'Unidade', rate: 0, discountPct: 0, taxPct: 0, total: 0 },
    ],
  );
  assert.ok(full.items.every((i: any) => /^pit_/.test(i.id)));
  assert.equal(full.subtotal, 1300);
  assert.equal(full.discount, 100.5);
  assert.equal(full.adjustment, -0.25);
  assert.equal(full.total, 1199.25);

  // Half-up rounding of the item total: 1 × 0.05 − 50 % = 0.025 → 0.03.
  assert.equal((await proposal(api, { items: [{ name: 'x', rate: 0.05, discountPct: 50 }] })).items[0].total, 0.03);

  // PATCH discount or adjustment recomputes the total from the stored items.
  const d = await api.patch(`/proposals/${full.id}`, { discount: 0 });
  assert.equal(d.body.total, 1299.75);
  assert.deepEqual(d.body.items, full.items);
  // PATCH items replaces the whole list, with new ids.
  const replaced = await api.patch(`/proposals/${full.id}`, { items: [{ name: 'Only', qty: 3, rate: 19.99, discountPct: 10, taxPct: 5 }] });
  assert.equal(replaced.status, 200);
  assert.equal(replaced.body.items.length, 1);
  assert.equal(replaced.body.items[0].order, 0);
  assert.ok(!full.items.some((i: any) => i.id === replaced.body.items[0].id));
  assert.equal(replaced.body.subtotal, 56.67);
  assert.equal(replaced.body.total, 56.42);
  const emptied = await api.patch(`/proposals/${full.id}`, { items: [], adjustment: 0 });
  assert.deepEqual([emptied.body.items, emptied.body.subtotal, emptied.body.total], [[], 0, 0]);
  assert.deepEqual((await api.get(`/proposals/${full.id}`)).body, emptied.body);
  const rows = await db.selectFrom('proposal_items').select('id').where('proposal_id', '=', full.id).execute();
  assert.equal(rows.length, 0);
});

test('proposals: validation of bodies (400 validation_failed naming the field)', async () => {
  const { api } = await newTenant(t);
  const cases: [Record<string, unknown>, string][] = [
    [{}, 'subject'],
    [{ subject: '' }, 'subject'],
    [{ subject: '   ' }, 'subject'],
    [{ subject: 5 }, 'subject'],
    [{ subject: 'x', items: [{}] }, 'items[0].name'],
    [{ subject: 'x', items: [{ name: '  ' }] }, 'items[0].name'],
    [{ subject: 'x', items: [{ name: 'a' }, { name: 'b', rate: 1.005 }] }, 'items[1].rate'],
    [{ subject: 'x', items: [{ name: 'a', rate: -1 }] }, 'items[0].rate'],
    [{ subject: 'x', items: [{ name: 'a', qty: -1 }] }, 'items[0].qty'],
    [{ subject: 'x', items: [{ name: 'a', qty: '2' }] }, 'items[0].qty'],
    [{ subject: 'x', items: [{ name: 'a', discountPct: 101 }] }, 'items[0].discountPct'],
    [{ subject: 'x', items: [{ name: 'a', taxPct: -5 }] }, 'items[0].taxPct'],
    [{ subject: 'x', items: [{ name: 'a', total: 5 }] }, 'items[0].total'],
    [{ subject: 'x', items: [{ name: 'a', id: 'pit_1' }] }, 'items[0].id'],
    [{ subject: 'x', discount: 1.234 }, 'discount'],
    [{ subject: 'x', discount: -1 }, 'discount'],
    [{ subject: 'x', adjustment: 0.001 }, 'adjustment'],
    [{ subject: 'x', discount: 1e14 }, 'discount'],
    [{ subject: 'x', recipientEmail: 'not-an-email' }, 'recipientEmail'],
    [{ subject: 'x', number: 'PR-1' }, 'number'],
    [{ subject: 'x', total: 1 }, 'total'],
    [{ subject: 'x', subtotal: 1 }, 'subtotal'],
    [{ subject: 'x', sentAt: '2026-01-01T00:00:00.000Z' }, 'sentAt'],
    [{ subject: 'x', deal: null }, 'deal'],
    [{ subject: 'x', items: 'none' }, 'items'],
  ];
  for (const [body, field] of cases) {
    const r = await api.post('/proposals', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed', JSON.stringify(body));
    assert.ok(
      r.body.details.some((d: any) => d.field === field),
      `${JSON.stringify(body)} → ${JSON.stringify(r.body.details)}`,
    );
  }
  const p = await proposal(api);
  for (const [body, field] of cases.slice(1)) {
    const r = await api.patch(`/proposals/${p.id}`, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.ok(
      r.body.details.some((d: any) => d.field === field),
      `PATCH ${JSON.stringify(body)}`,
    );
  }
  assert.deepEqual((await api.get(`/proposals/${p.id}`)).body, p);
  assert.equal((await api.get('/proposals')).body.pagination.total, 1, 'nothing was created by the bad requests');
});

test('proposals: references must exist in the tenant (404 naming the field), on create and update', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const gone = await contact(a.api);
  await a.api.delete(`/contacts/${gone.id}`);
  const bContact = await contact(b.api);
  const bCompany = await company(b.api);
  const bDeal = await deal(b.api, b.refs);
  const aCompany = await company(a.api);
  for (const [field, id] of [
    ['dealId', 'deal_missing'],
    ['contactId', 'con_missing'],
    ['clientId', 'com_missing'],
    ['ownerId', 'usr_missing'],
    ['contactId', gone.id],
    ['clientId', gone.id],
    ['dealId', aCompany.id],
    ['contactId', ''],
    ['dealId', bDeal.id],
    ['contactId', bContact.id],
    ['clientId', bCompany.id],
    ['ownerId', b.refs.ana],
  ]) {
    const r = await a.api.post('/proposals', { subject: 'x', [field]: id });
    assert.equal(r.status, 404, `${field}=${id}`);
    assert.equal(r.body.error, 'not_found');
    assert.equal(r.body.field, field);
    assert.match(r.body.message, new RegExp(field));
  }
  assert.equal((await a.api.get('/proposals')).body.pagination.total, 0);
  const p = await proposal(a.api, { clientId: aCompany.id });
  for (const [field, id] of [
    ['dealId', bDeal.id],
    ['contactId', bContact.id],
    ['clientId', bCompany.id],
    ['ownerId', b.refs.ana],
  ]) {
    const r = await a.api.patch(`/proposals/${p.id}`, { [field]: id });
    assert.equal(r.status, 404, `PATCH ${field}`);
    assert.equal(r.body.field, field);
  }
  const cleared = await a.api.patch(`/proposals/${p.id}`, { clientId: null, ownerId: a.refs.bruno });
  assert.equal(cleared.status, 200);
  assert.equal(cleared.body.clientId, null);
  assert.equal(cleared.body.company, null);
  assert.equal(cleared.body.ownerId, a.refs.bruno);
});

test('proposals: at most one live proposal per deal; deleting it frees the deal', async () => {
  const { api, refs } = await newTenant(t);
  const d = await deal(api, refs);
  const d2 = await deal(api, refs);
  const first = await proposal(api, { dealId: d.id });
  const dup = await api.post('/proposals', { subject: 'again', dealId: d.id });
  assert.equal(dup.status, 400);
  assert.equal(dup.body.error, 'duplicate_proposal_for_deal');
  const other = await proposal(api, { dealId: d2.id });
  const move = await api.patch(`/proposals/${other.id}`, { dealId: d.id });
  assert.equal(move.status, 400);
  assert.equal(move.body.error, 'duplicate_proposal_for_deal');
  assert.equal((await api.patch(`/proposals/${first.id}`, { dealId: d.id, subject: 'same deal' })).status, 200);

  assert.equal((await api.delete(`/proposals/${first.id}`)).status, 204);
  assert.equal((await api.get(`/deals/${d.id}`)).status, 200, 'the deal is untouched');
  const again = await proposal(api, { dealId: d.id });
  assert.equal(again.dealId, d.id);
  // The number of the deleted proposal is never reused.
  assert.notEqual(again.number, first.number);

  // Concurrent creations for one deal: exactly one wins (the partial unique index decides).
  const d3 = await deal(api, refs);
  const results = await Promise.all(Array.from({ length: 6 }, () => api.post('/proposals', { subject: 'race', dealId: d3.id })));
  assert.deepEqual(results.map((r) => r.status).sort(), [201, 400, 400, 400, 400, 400]);
  assert.ok(results.filter((r) => r.status === 400).every((r) => r.body.error === 'duplicate_proposal_for_deal'));
});

test('proposals: numbers are per tenant and year, consecutive under 20 concurrent creations, wider past 9999', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => a.api.post('/proposals', { subject: `Concurrent ${i}` })));
  assert.deepEqual(
    results.map((r) => r.status),
    Array(20).fill(201),
  );
  const numbers = results.map((r) => r.body.number).sort();
  assert.deepEqual(
    numbers,
    Array.from({ length: 20 }, (_, i) => `PR-${YEAR}-${String(i + 1).padStart(4, '0')}`),
  );
  assert.equal((await proposal(b.api)).number, `PR-${YEAR}-0001`);

  const tenantId = await tenantIdOf(a.api); // takes 0021 (deleted, never reused)
  assert.equal((await proposal(a.api)).number, `PR-${YEAR}-0022`);
  await db.updateTable('proposal_counters').set({ last_seq: 9998 }).where('tenant_id', '=', tenantId).where('year', '=', YEAR).execute();
  assert.equal((await proposal(a.api)).number, `PR-${YEAR}-9999`);
  assert.equal((await proposal(a.api)).number, `PR-${YEAR}-10000`);
});

type Status = 'draft' | 'sent' | 'accepted' | 'declined' | 'expired';
const STATUSES: Status[] = ['draft', 'sent', 'accepted', 'declined', 'expired'];
const PATH_TO: Record<Status, Status[]> = {
  draft: [],
  sent: ['sent'],
  accepted: ['sent', 'accepted'],
  declined: ['sent', 'declined'],
  expired: ['sent', 'expired'],
};
const ALLOWED: Record<Status, Status[]> = { draft: ['sent'], sent: ['accepted', 'declined', 'expired'], accepted: [], declined: ['draft'], expired: ['draft'] };

test('proposals: the full status matrix — allowed moves, 422 for the others, no-op for the same status, events', async () => {
  const { api } = await newTenant(t);
  const tenantId = await tenantIdOf(api);
  for (const from of STATUSES) {
    for (const to of STATUSES) {
      const p = await proposal(api);
      for (const step of PATH_TO[from]) assert.equal((await api.patch(`/proposals/${p.id}`, { status: step })).status, 200);
      const before = (await api.get(`/proposals/${p.id}`)).body;
      assert.equal(before.status, from);
      const nEvents = (await events(tenantId)).length;
      const r = await api.patch(`/proposals/${p.id}`, { status: to });
      const after = (await api.get(`/proposals/${p.id}`)).body;
      const evs = (await events(tenantId)).slice(nEvents);
      const label = `${from} → ${to}`;
      if (from === to) {
        assert.equal(r.status, 200, label);
        assert.deepEqual(after, before, label);
        assert.equal(evs.length, 0, label);
      } else if (ALLOWED[from].includes(to)) {
        assert.equal(r.status, 200, label);
        assert.equal(r.body.status, to, label);
        assert.deepEqual(after, r.body, label);
        if (to === 'draft') {
          assert.equal(evs.length, 0, `${label}: a move back to draft raises no event`);
        } else {
          assert.deepEqual(
            evs.map((e) => e.type),
            [`proposal.${to}`],
            label,
          );
          assert.deepEqual(evs[0].payload.data.proposal, after, label);
          assert.equal(evs[0].payload.event, `proposal.${to}`);
          assert.equal(evs[0].payload.tenantId, tenantId);
        }
      } else {
        assert.equal(r.status, 422, label);
        assert.equal(r.body.error, 'business_rule_violation', label);
        assert.deepEqual(after, before, label);
        assert.equal(evs.length, 0, label);
      }
    }
  }
});

test('proposals: sentAt is set on every move to sent; status values outside the enum are 400 invalid_status', async () => {
  const { api } = await newTenant(t);
  const p = await proposal(api);
  const sent = (await api.patch(`/proposals/${p.id}`, { status: 'sent' })).body;
  assert.ok(sent.sentAt && sent.sentAt >= p.createdAt);
  assert.equal((await api.patch(`/proposals/${p.id}`, { status: 'declined' })).body.sentAt, sent.sentAt);
  const draft = (await api.patch(`/proposals/${p.id}`, { status: 'draft' })).body;
  assert.equal(draft.sentAt, sent.sentAt, 'a draft keeps the time it was last sent');
  await new Promise((r) => setTimeout(r, 5));
  const resent = (await api.patch(`/proposals/${p.id}`, { status: 'sent', subject: 'v2' })).body;
  assert.ok(resent.sentAt > sent.sentAt);
  assert.equal(resent.subject, 'v2');

  for (const status of ['won', 'SENT', '', 'Draft']) {
    const r = await api.patch(`/proposals/${p.id}`, { status });
    assert.equal(r.status, 400, status);
    assert.equal(r.body.error, 'invalid_status');
    const c = await api.post('/proposals', { subject: 'x', status });
    assert.equal(c.status, 400);
    assert.equal(c.body.error, 'invalid_status');
  }
  assert.equal((await api.patch(`/proposals/${p.id}`, { status: 3 })).body.error, 'validation_failed');
  // Create accepts only draft.
  for (const status of ['sent', 'accepted', 'declined', 'expired']) {
    const r = await api.post('/proposals', { subject: 'x', status });
    assert.equal(r.status, 422, status);
    assert.equal(r.body.error, 'business_rule_violation');
  }
  assert.equal((await api.get(`/proposals/${p.id}`)).body.status, 'sent');
});

test('proposals: concurrent moves of one proposal raise one event', async () => {
  const { api } = await newTenant(t);
  const tenantId = await tenantIdOf(api);
  const p = await proposal(api);
  const results = await Promise.all(Array.from({ length: 5 }, () => api.patch(`/proposals/${p.id}`, { status: 'sent' })));
  assert.ok(results.every((r) => r.status === 200));
  assert.deepEqual(
    (await events(tenantId)).map((e) => e.type),
    ['proposal.sent'],
  );
});

test('proposals: list with filters, search, paging (limit) and newest first', async () => {
  const { api, refs } = await newTenant(t);
  const c = await contact(api);
  const co = await company(api);
  const d = await deal(api, refs);
  const p1 = await proposal(api, { subject: 'Website redesign', contactId: c.id });
  const p2 = await proposal(api, { subject: 'Annual SUPPORT plan', clientId: co.id });
  const p3 = await proposal(api, { subject: 'Hardware', dealId: d.id });
  await api.patch(`/proposals/${p2.id}`, { status: 'sent' });

  const all = await api.get('/proposals');
  assert.equal(all.status, 200);
  assert.deepEqual(
    all.body.data.map((x: any) => x.id),
    [p3.id, p2.id, p1.id],
  );
  assert.deepEqual(all.body.pagination, { page: 1, pageSize: 50, total: 3, totalPages: 1, hasNext: false, hasPrev: false, nextCursor: null });
  const ids = async (q: string) => (await api.get(`/proposals?${q}`)).body.data.map((x: any) => x.id);
  assert.deepEqual(await ids('status=sent'), [p2.id]);
  assert.deepEqual(await ids('status=draft'), [p3.id, p1.id]);
  assert.deepEqual(await ids('status=accepted'), []);
  assert.deepEqual(await ids('search=support'), [p2.id]);
  assert.deepEqual(await ids('search=SITE%20RED'), [p1.id]);
  assert.deepEqual(await ids(`search=${p3.number.toLowerCase()}`), [p3.id]);
  assert.deepEqual(await ids(`search=PR-${YEAR}-000`), [p3.id, p2.id, p1.id]);
  assert.deepEqual(await ids('search=%25'), []);
  assert.deepEqual(await ids('search=_'), []);
  assert.deepEqual(await ids(`contactId=${c.id}`), [p1.id]);
  assert.deepEqual(await ids(`clientId=${co.id}`), [p2.id]);
  assert.deepEqual(await ids(`dealId=${d.id}`), [p3.id]);
  assert.deepEqual(await ids(`dealId=${d.id}&status=sent`), []);
  assert.deepEqual(await ids('contactId=con_nope'), []);
  assert.equal((await api.get('/proposals?contactId=%00')).status, 400); // NUL is refused at the edge

  const page1 = await api.get('/proposals?limit=2');
  assert.deepEqual(page1.body.pagination, {
    page: 1,
    pageSize: 2,
    total: 3,
    totalPages: 2,
    hasNext: true,
    hasPrev: false,
    nextCursor: page1.body.pagination.nextCursor,
  });
  assert.match(page1.body.pagination.nextCursor, /^[\w-]+\.[\w-]+$/, 'a next page has a cursor');
  const page2 = await api.get('/proposals?limit=2&page=2');
  assert.deepEqual(page2.body.pagination, { page: 2, pageSize: 2, total: 3, totalPages: 2, hasNext: false, hasPrev: true, nextCursor: null });
  assert.deepEqual(
    [...page1.body.data, ...page2.body.data].map((x: any) => x.id),
    [p3.id, p2.id, p1.id],
  );
  assert.equal((await api.get('/proposals?pageSize=1')).body.pagination.pageSize, 1);
  const far = await api.get('/proposals?page=100000000000000000000&limit=100');
  assert.equal(far.status, 200);
  assert.deepEqual(far.body.data, []);
  for (const q of ['limit=101', 'limit=0', 'page=0', 'status=won', 'status=', 'foo=1']) {
    const r = await api.get(`/proposals?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed', q);
  }
  await api.delete(`/proposals/${p3.id}`);
  assert.deepEqual(await ids(''), [p2.id, p1.id]);
  assert.deepEqual(await ids(`dealId=${d.id}`), []);
});

test('proposals: soft delete', async () => {
  const { api, refs } = await newTenant(t);
  const d = await deal(api, refs);
  const p = await proposal(api, { dealId: d.id });
  const r = await api.delete(`/proposals/${p.id}`);
  assert.equal(r.status, 204);
  assert.equal(r.raw.body, '');
  assert.equal((await api.get(`/proposals/${p.id}`)).status, 404);
  assert.equal((await api.patch(`/proposals/${p.id}`, { subject: 'x' })).status, 404);
  assert.equal((await api.delete(`/proposals/${p.id}`)).status, 404);
  const row = await db.selectFrom('proposals').select('deleted_at').where('id', '=', p.id).executeTakeFirstOrThrow();
  assert.ok(row.deleted_at);
  const dealAfter = (await api.get(`/deals/${d.id}`)).body;
  assert.equal(dealAfter.updatedAt, d.updatedAt);
});

test('proposals: tenant isolation and scopes', async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push(
    { ref: 'pr', name: 'Proposals read', user: 'ana', scopes: ['proposals:read'] },
    { ref: 'pw', name: 'Proposals write', user: 'bruno', scopes: ['proposals:write'] },
  );
  const a = await newTenant(t, setup);
  const b = await newTenant(t);
  const p = await proposal(a.api);
  assert.equal((await b.api.get(`/proposals/${p.id}`)).status, 404);
  assert.equal((await b.api.patch(`/proposals/${p.id}`, { status: 'sent' })).status, 404);
  assert.equal((await b.api.delete(`/proposals/${p.id}`)).status, 404);
  assert.equal((await b.api.get('/proposals')).body.pagination.total, 0);
  assert.equal((await a.api.get(`/proposals/${p.id}`)).body.status, 'draft');

  const ro = await a.as('ro').get('/proposals');
  assert.equal(ro.status, 403);
  assert.deepEqual(ro.body.required, ['proposals:read']);
  assert.equal((await a.as('pr').get(`/proposals/${p.id}`)).status, 200);
  assert.equal((await a.as('pr').post('/proposals', { subject: 'x' })).status, 403);
  const created = await a.as('pw').post('/proposals', { subject: 'by bruno' });
  assert.equal(created.status, 201);
  assert.equal(created.body.ownerId, a.refs.bruno);
  assert.equal((await a.as('pw').get('/proposals')).status, 403);
  assert.equal((await a.as('pw').delete(`/proposals/${p.id}`)).status, 204);
});

test('B.4: proposals sort by their scalar fields (number, subject, status, sentAt, subtotal, total), ties by id; others are 400', async () => {
  const { api } = await newTenant(t);
  for (const [subject, rate] of [
    ['beta', 30],
    ['Alpha', 10],
    ['gamma', 20],
    ['alpha', 10],
  ] as const) {
    const p = await proposal(api, { subject, items: [{ name: 'x', rate }] });
    if (rate === 20) assert.equal((await api.patch(`/proposals/${p.id}`, { status: 'sent' })).status, 200);
  }
  const listed = async (q: string) => {
    const r = await api.get(`/proposals?${q}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data as any[];
  };
  const totals = (await listed('sortKey=total&sortOrder=asc')).map((p) => p.total);
  assert.deepEqual(
    totals,
    [...totals].sort((a, b) => a - b),
  );
  assert.deepEqual(
    (await listed('sortKey=subtotal&sortOrder=desc')).map((p) => p.subtotal),
    [30, 20, 10, 10],
  );
  assert.deepEqual(
    (await listed('sortKey=subject&sortOrder=asc')).map((p) => p.subject.toLowerCase()),
    ['alpha', 'alpha', 'beta', 'gamma'],
  );
  const numbers = (await listed('sortKey=number&sortOrder=desc')).map((p) => p.number);
  assert.deepEqual(numbers, [...numbers].sort().reverse());
  assert.equal((await listed('sortKey=status&sortOrder=desc'))[0].status, 'sent');
  const bySent = await listed('sortKey=sentAt&sortOrder=asc');
  assert.notEqual(bySent[0].sentAt, null, 'empty values sort last');
  assert.equal(bySent.at(-1).sentAt, null);
  const bad = await api.get('/proposals?sortKey=notes');
  assert.equal(bad.status, 400);
  assert.match(bad.body.details[0].message, /must be one of createdAt, updatedAt, number, subject, status, sentAt, subtotal, total/);
});
