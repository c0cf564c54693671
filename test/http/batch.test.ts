// CONTRACT C.2: batch create, update, upsert, read and delete of contacts, companies and deals, on the
// dialect of this pass. Every per-input answer is compared with what the single call answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import SqliteDatabase from '../../src/db/sqlite-driver.mjs';
import { DIALECT, newTenant, testApp } from '../helpers/app.js';
import { errors } from '../../src/errors.js';
import { contextFor } from '../../src/http/context.js';
import { runBatch } from '../../src/modules/shared/batch.js';
import { createContact } from '../../src/modules/contacts/contacts.service.js';

const t = await testApp();
const db = t.database.db;
let seq = 0;
const uniq = (p: string) => `${p}${process.pid}x${Date.now().toString(36)}x${++seq}`;

const events = async (tenantId: string, type: string) =>
  (await db.selectFrom('events').select(['payload']).where('tenant_id', '=', tenantId).where('type', '=', type).execute()).map(
    (e) => JSON.parse(e.payload) as { data: Record<string, any> },
  );
const countOf = async (tenantId: string, table: 'contacts' | 'companies' | 'deals') =>
  Number(
    (
      await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** What the single call answers for a body, on a scratch tenant with the same setup (nothing else in it). */
async function singleAnswer(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const scratch = await newTenant(t);
  const r = await scratch.api.post(path, body as any);
  return { status: r.status, body: r.body };
}

test('batch create: 200 with every record as a single read returns it, one event each, in input order', async () => {
  const { api, tenantId, refs } = await newTenant(t);
  const tagIds: string[] = [];
  for (const name of ['zeta', 'Alpha', 'beta']) tagIds.push((await api.post('/tags', { name })).body.id);
  const names = [uniq('Ana'), uniq('Bia'), uniq('Caio')];
  const extra = {
    tags: [tagIds[2], tagIds[0], tagIds[1], tagIds[0]],
    customProperties: { [refs.contact_number]: 7.5, [refs.contact_email]: 'X@Y.test', [refs.contact_text]: null },
  };
  const r = await api.post('/contacts/batch/create', {
    inputs: names.map((firstName, i) => ({ firstName, email: `${firstName}@b.test`, score: i + 0.1, ...(i === 1 ? extra : {}) })),
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.succeeded, 3);
  assert.equal(r.body.failed, 0);
  assert.deepEqual(
    r.body.results.map((x: any) => [x.index, x.status, x.record.firstName]),
    names.map((n, i) => [i, 201, n]),
  );
  for (const x of r.body.results) {
    assert.equal(x.id, x.record.id);
    assert.deepEqual((await api.get(`/contacts/${x.id}`)).body, x.record);
  }
  const created = await events(tenantId, 'contact.created');
  assert.deepEqual(created.map((e) => e.data.contact.id).sort(), r.body.results.map((x: any) => x.id).sort());
});

test('partial success: 207, each failure is exactly the single call answer; failed inputs change nothing', async () => {
  const { api, tenantId, refs } = await newTenant(t);
  const taken = uniq('taken');
  const first = await api.post('/contacts', { firstName: 'Holder', email: `${taken}@b.test` });
  const bad = [
    { firstName: 42 },
    { firstName: 'X', email: 'not-an-email', bogus: 1 },
    { firstName: 'Y', ownerId: 'usr_nope' },
    { firstName: 'Z', tags: ['tag_nope'] },
    { firstName: ' ' },
  ];
  const good = { firstName: uniq('Good'), ownerId: refs.ana };
  const dup = { firstName: 'Dup', email: `  ${taken.toUpperCase()}@B.TEST ` };
  const r = await api.post('/contacts/batch/create', { inputs: [good, ...bad, dup] });
  assert.equal(r.status, 207, JSON.stringify(r.body));
  assert.equal(r.body.succeeded, 1);
  assert.equal(r.body.failed, bad.length + 1);
  assert.equal(r.body.results[0].status, 201);
  for (let i = 0; i < bad.length; i++) {
    const single = await singleAnswer('/contacts', bad[i]);
    const item = r.body.results[i + 1];
    assert.equal(item.index, i + 1);
    assert.equal(item.status, single.status, JSON.stringify(item));
    assert.deepEqual(item.error, single.body, `input ${i + 1}`);
    assert.equal(item.record, undefined);
  }
  const last = r.body.results[bad.length + 1];
  assert.equal(last.status, 409);
  assert.equal(last.error.error, 'duplicate_email');
  assert.equal(last.error.existingContactId, first.body.id);
  assert.equal(await countOf(tenantId, 'contacts'), 2);
  assert.equal((await events(tenantId, 'contact.created')).length, 2);
});

test('two inputs of one batch that collide behave as two single calls in input order', async () => {
  const { api } = await newTenant(t);
  const email = `${uniq('twice')}@b.test`;
  const r = await api.post('/contacts/batch/create', {
    inputs: [
      { firstName: 'One', email },
      { firstName: 'Two', email: email.toUpperCase() },
    ],
  });
  assert.equal(r.status, 207);
  assert.equal(r.body.results[0].status, 201);
  assert.equal(r.body.results[1].status, 409);
  assert.equal(r.body.results[1].error.existingContactId, r.body.results[0].id);

  const up = await api.post('/contacts/batch/upsert', {
    idProperty: 'email',
    inputs: [
      { firstName: 'Three', email: `x${email}` },
      { firstName: 'Four', email: `X${email}` },
    ],
  });
  assert.equal(up.status, 200, JSON.stringify(up.body));
  assert.deepEqual(
    up.body.results.map((x: any) => [x.status, x.action]),
    [
      [201, 'created'],
      [200, 'updated'],
    ],
  );
  assert.equal(up.body.results[1].id, up.body.results[0].id);
  assert.equal(up.body.results[1].record.firstName, 'Four');
});

test('atomic: the first failing input answers for the call, details prefixed inputs[i]., and nothing changes', async () => {
  const { api, tenantId } = await newTenant(t);
  const before = await countOf(tenantId, 'contacts');
  const r = await api.post('/contacts/batch/create', {
    atomic: true,
    inputs: [{ firstName: uniq('A') }, { firstName: uniq('B') }, { firstName: 'C', email: 'nope' }, { firstName: 'D', ownerId: 'usr_x' }],
  });
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.error, 'validation_failed');
  assert.deepEqual(
    r.body.details.map((d: any) => d.field),
    ['inputs[2].email'],
  );
  assert.equal(await countOf(tenantId, 'contacts'), before);
  assert.equal((await events(tenantId, 'contact.created')).length, 0);

  const notFound = await api.post('/contacts/batch/create', { atomic: true, inputs: [{ firstName: uniq('A') }, { firstName: 'D', ownerId: 'usr_x' }] });
  assert.equal(notFound.status, 404);
  assert.equal(notFound.body.error, 'not_found');
  assert.equal(notFound.body.field, 'ownerId');
  assert.equal(await countOf(tenantId, 'contacts'), before);

  const ok = await api.post('/contacts/batch/create', { atomic: true, inputs: [{ firstName: uniq('A') }, { firstName: uniq('B') }] });
  assert.equal(ok.status, 200);
  assert.equal(await countOf(tenantId, 'contacts'), before + 2);
});

test('partial success runs once without a savepoint per input; after a failure, once more from the start, keeping only that run', async () => {
  const { tenantId } = await newTenant(t);
  const ctx = contextFor(t.database, t.config, tenantId, null);
  const refused = uniq('Refused');
  const calls: string[] = [];
  const apply = async (c: typeof ctx, firstName: string) => {
    calls.push(firstName);
    if (firstName === refused) throw errors.field('firstName', 'refused');
    const record = await createContact(c, { firstName });
    return { status: 201, id: record.id, record };
  };
  // Every input succeeds: one run.
  const ok = [uniq('P0'), uniq('P1')];
  assert.equal((await runBatch(ctx, ok, false, apply)).status, 200);
  assert.deepEqual(calls, ok);
  // Input 2 fails: the first run stops there and is undone; the second runs every input, each in a savepoint.
  calls.length = 0;
  const inputs = [uniq('P2'), uniq('P3'), refused, uniq('P4')];
  const partial = await runBatch(ctx, inputs, false, apply);
  assert.equal(partial.status, 207);
  assert.deepEqual(calls, [...inputs.slice(0, 3), ...inputs]);
  assert.deepEqual(
    partial.body.results.map((r) => r.status),
    [201, 201, 400, 201],
  );
  // Only the second run's writes and events remain: one contact and one event per created input.
  const ids = partial.body.results
    .filter((r) => r.status === 201)
    .map((r) => r.id)
    .sort();
  const stored = await db.selectFrom('contacts').select('id').where('tenant_id', '=', tenantId).where('first_name', 'in', inputs).execute();
  assert.deepEqual(stored.map((r) => r.id).sort(), ids);
  const created = (await events(tenantId, 'contact.created')).filter((e) => inputs.includes(e.data.contact.firstName));
  assert.deepEqual(created.map((e) => e.data.contact.id).sort(), ids);
});

test(
  'SQLite: a batch whose inputs succeed takes no savepoint per input, creates and upserts alike',
  { skip: DIALECT !== 'sqlite' && "SQLite only (PostgreSQL keeps the upsert race's savepoint)" },
  async () => {
    // Every statement better-sqlite3 runs, by its SQL: a savepoint copies each page an input changes to its journal first.
    const proto = Object.getPrototypeOf(new SqliteDatabase(':memory:').prepare('select 1')) as Record<'run' | 'all' | 'get', (...a: unknown[]) => unknown>;
    const ran: string[] = [];
    const originals = { run: proto.run, all: proto.all, get: proto.get };
    for (const m of ['run', 'all', 'get'] as const) {
      proto[m] = function (this: { source: string }, ...args: unknown[]) {
        ran.push(this.source);
        return originals[m].apply(this, args);
      };
    }
    const { api } = await newTenant(t);
    try {
      const created = await api.post('/contacts/batch/create', {
        inputs: [{ firstName: uniq('S1') }, { firstName: uniq('S2'), email: `${uniq('s')}@b.test` }],
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const upserted = await api.post('/contacts/batch/upsert', {
        idProperty: 'email',
        inputs: [
          { firstName: 'U1', email: `${uniq('u')}@b.test` },
          { firstName: 'U2', email: `${uniq('u')}@b.test` },
        ],
      });
      assert.equal(upserted.status, 200, JSON.stringify(upserted.body));
      assert.deepEqual(
        upserted.body.results.map((r: any) => r.action),
        ['created', 'created'],
      );
    } finally {
      Object.assign(proto, originals);
    }
    // The group commit's own savepoint (crm_member) stays: one per transaction, not per input.
    assert.deepEqual(
      ran.filter((q) => /savepoint/i.test(q) && !q.includes('crm_member')),
      [],
    );
    assert.ok(
      ran.some((q) => q.startsWith('insert into "contacts"')),
      'the statements were seen',
    );
  },
);

test('batch update: like PATCH per input; 404 for missing or foreign ids; id required', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const mine = (await a.api.post('/contacts', { firstName: 'Mine', lastName: 'Keep', score: 1 })).body;
  const theirs = (await b.api.post('/contacts', { firstName: 'Theirs' })).body;
  const r = await a.api.post('/contacts/batch/update', {
    inputs: [
      { id: mine.id, score: 9 },
      { id: theirs.id, firstName: 'Hacked' },
      { firstName: 'No id' },
      { id: mine.id, email: 'bad' },
      { id: 'con_missing', score: 1 },
    ],
  });
  assert.equal(r.status, 207, JSON.stringify(r.body));
  const [ok, foreign, noId, badEmail, missing] = r.body.results;
  assert.equal(ok.status, 200);
  assert.equal(ok.record.score, 9);
  assert.equal(ok.record.lastName, 'Keep');
  assert.deepEqual([foreign.status, foreign.error.error, foreign.id], [404, 'not_found', theirs.id]);
  assert.deepEqual([noId.status, noId.error.details], [400, [{ field: 'id', message: 'is required' }]]);
  const single = await a.api.patch(`/contacts/${mine.id}`, { email: 'bad' });
  assert.deepEqual([badEmail.status, badEmail.error], [single.status, single.body]);
  assert.equal(missing.status, 404);
  assert.equal((await b.api.get(`/contacts/${theirs.id}`)).body.firstName, 'Theirs');
  const updated = await events(a.tenantId, 'contact.updated');
  assert.deepEqual(
    updated.map((e) => e.data.contact.score),
    [9],
  );
});

test('batch upsert of contacts by email and by phone: matches after normalization, omitted fields stay', async () => {
  const { api } = await newTenant(t);
  const email = `${uniq('up')}@b.test`;
  const existing = (await api.post('/contacts', { firstName: 'Old', lastName: 'Stays', email, phone: '(11) 98888-7777' })).body;
  const r = await api.post('/contacts/batch/upsert', {
    idProperty: 'email',
    inputs: [{ firstName: 'New', email: ` ${email.toUpperCase()} ` }, { firstName: 'Fresh', email: `n${email}` }, { firstName: 'No key' }],
  });
  assert.equal(r.status, 207, JSON.stringify(r.body));
  const [match, fresh, noKey] = r.body.results;
  assert.deepEqual([match.status, match.action, match.id], [200, 'updated', existing.id]);
  assert.equal(match.record.firstName, 'New');
  assert.equal(match.record.lastName, 'Stays');
  assert.deepEqual([fresh.status, fresh.action], [201, 'created']);
  assert.deepEqual([noKey.status, noKey.error.error, noKey.error.details[0].field], [400, 'validation_failed', 'email']);

  const byPhone = await api.post('/contacts/batch/upsert', { idProperty: 'phone', inputs: [{ firstName: 'Phoned', phone: '+55 11 98888-7777' }] });
  assert.equal(byPhone.status, 200, JSON.stringify(byPhone.body));
  assert.deepEqual([byPhone.body.results[0].action, byPhone.body.results[0].id], ['updated', existing.id]);

  const badKey = await api.post('/contacts/batch/upsert', { idProperty: 'cnpj', inputs: [{ firstName: 'X' }] });
  assert.equal(badKey.status, 400);
  assert.equal(badKey.body.details[0].field, 'idProperty');
  assert.match(badKey.body.details[0].message, /email, phone, id/);
});

test('batch upsert of companies by CNPJ and domain; deals only by id', async () => {
  const { api, refs } = await newTenant(t);
  const domain = `${uniq('acme')}.com.br`;
  const co = (await api.post('/companies', { name: 'Acme', cnpj: '11.222.333/0001-81', domain })).body;
  const byCnpj = await api.post('/companies/batch/upsert', { idProperty: 'cnpj', inputs: [{ name: 'Acme SA', cnpj: '11222333000181' }] });
  assert.equal(byCnpj.status, 200, JSON.stringify(byCnpj.body));
  assert.deepEqual([byCnpj.body.results[0].action, byCnpj.body.results[0].id, byCnpj.body.results[0].record.domain], ['updated', co.id, domain]);
  const byDomain = await api.post('/companies/batch/upsert', {
    idProperty: 'domain',
    inputs: [
      { name: 'Acme Web', domain: `https://www.${domain}/about` },
      { name: 'Other', domain: `other-${domain}` },
    ],
  });
  assert.equal(byDomain.status, 200, JSON.stringify(byDomain.body));
  assert.deepEqual(
    byDomain.body.results.map((x: any) => x.action),
    ['updated', 'created'],
  );
  assert.equal(byDomain.body.results[0].id, co.id);

  const dealBody = { title: 'Big', pipelineId: refs.sales, stageId: refs.lead };
  const noKey = await api.post('/deals/batch/upsert', { idProperty: 'email', inputs: [dealBody] });
  assert.equal(noKey.status, 400);
  assert.equal(noKey.body.details[0].field, 'idProperty');
  const created = await api.post('/deals/batch/upsert', { idProperty: 'id', inputs: [dealBody] });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = created.body.results[0].id;
  const again = await api.post('/deals/batch/upsert', {
    idProperty: 'id',
    inputs: [
      { ...dealBody, id, title: 'Bigger' },
      { ...dealBody, id: 'deal_missing' },
    ],
  });
  assert.equal(again.status, 207);
  assert.deepEqual([again.body.results[0].action, again.body.results[0].record.title], ['updated', 'Bigger']);
  assert.equal(again.body.results[1].status, 404);
});

test('deals batch: rules and events of the single call (stage_invalid, deal.created, deal.won)', async () => {
  const { api, tenantId, refs } = await newTenant(t);
  const r = await api.post('/deals/batch/create', {
    inputs: [
      { title: 'Ok', pipelineId: refs.sales, stageId: refs.lead, value: 10.5, currency: 'BRL' },
      { title: 'Wrong stage', pipelineId: refs.sales, stageId: refs.p_intro },
      { title: 'Won', pipelineId: refs.sales, stageId: refs.won },
    ],
  });
  assert.equal(r.status, 207, JSON.stringify(r.body));
  const single = await api.post('/deals', { title: 'Wrong stage', pipelineId: refs.sales, stageId: refs.p_intro });
  assert.equal(single.status, 409);
  assert.deepEqual([r.body.results[1].status, r.body.results[1].error], [single.status, single.body]);
  assert.deepEqual(r.body.results[0].record, (await api.get(`/deals/${r.body.results[0].id}`)).body);
  assert.equal((await events(tenantId, 'deal.created')).length, 2);
  assert.deepEqual(
    (await events(tenantId, 'deal.won')).map((e) => e.data.deal.id),
    [r.body.results[2].id],
  );
});

test('batch read: records in input order, repeats once, missing ids (deleted, foreign) listed; scope is :read', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const ids: string[] = [];
  for (const n of ['R1', 'R2', 'R3']) ids.push((await a.api.post('/contacts', { firstName: n })).body.id);
  await a.api.delete(`/contacts/${ids[1]}`);
  const foreign = (await b.api.post('/contacts', { firstName: 'F' })).body.id;
  const r = await a.api.post('/contacts/batch/read', { ids: [ids[2], ids[0], ids[2], ids[1], foreign, 'con_nope'] });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(
    r.body.results.map((c: any) => c.firstName),
    ['R3', 'R1'],
  );
  assert.deepEqual(r.body.results[0], (await a.api.get(`/contacts/${ids[2]}`)).body);
  assert.deepEqual(r.body.missing, [ids[1], foreign, 'con_nope']);
  assert.equal((await a.as('ro').post('/contacts/batch/read', { ids })).status, 200);
  assert.equal((await a.as('wo').post('/contacts/batch/read', { ids })).status, 403);
  assert.equal((await a.as('ro').post('/contacts/batch/create', { inputs: [{ firstName: 'x' }] })).status, 403);
  assert.equal((await a.as('wo').post('/contacts/batch/create', { inputs: [{ firstName: 'x' }] })).status, 200);
  const companies = await a.api.post('/companies/batch/read', { ids: [ids[0]] });
  assert.deepEqual(companies.body, { results: [], missing: [ids[0]] });
});

test('batch delete: 204 per id, 404 for a repeat or a foreign id; deletes are soft and visible to sync', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const c1 = (await a.api.post('/companies', { name: 'C1' })).body.id;
  const c2 = (await a.api.post('/companies', { name: 'C2' })).body.id;
  const contact = (await a.api.post('/contacts', { firstName: 'Linked', companyId: c1 })).body.id;
  const foreign = (await b.api.post('/companies', { name: 'F' })).body.id;
  const r = await a.api.post('/companies/batch/delete', { ids: [c1, c1, foreign, c2] });
  assert.equal(r.status, 207, JSON.stringify(r.body));
  assert.deepEqual(
    r.body.results.map((x: any) => [x.id, x.status]),
    [
      [c1, 204],
      [c1, 404],
      [foreign, 404],
      [c2, 204],
    ],
  );
  assert.equal(r.body.results[1].error.error, 'not_found');
  assert.equal((await a.api.get(`/companies/${c2}`)).status, 404);
  assert.equal((await b.api.get(`/companies/${foreign}`)).status, 200);
  assert.equal((await a.api.get(`/contacts/${contact}`)).body.companyId, null, 'deleting a company clears references, as the single call does');
  const sync = await a.api.get('/companies?includeDeleted=true&sortKey=updatedAt&sortOrder=asc');
  assert.equal(sync.body.data.filter((x: any) => x.deletedAt).length, 2);

  const atomic = await a.api.post('/deals/batch/delete', { atomic: true, ids: ['deal_nope'] });
  assert.equal(atomic.status, 404);
});

test("envelope: 1 to 100 inputs, known fields only; another tenant's ids inside inputs are 404", async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  for (const body of [
    { inputs: [] },
    { inputs: Array.from({ length: 101 }, (_, i) => ({ firstName: `n${i}` })) },
    { inputs: {} },
    {},
    { inputs: [1] },
    { inputs: [{ firstName: 'a' }], extra: 1 },
  ]) {
    const r = await a.api.post('/contacts/batch/create', body);
    assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
    assert.equal(r.body.error, 'validation_failed');
  }
  assert.equal((await a.api.post('/contacts/batch/read', { ids: Array.from({ length: 101 }, (_, i) => `c${i}`) })).status, 400);
  const hundred = await a.api.post('/contacts/batch/create', { inputs: Array.from({ length: 100 }, (_, i) => ({ firstName: `n${i}` })) });
  assert.equal(hundred.status, 200);
  assert.equal(hundred.body.succeeded, 100);

  const theirCompany = (await b.api.post('/companies', { name: 'Theirs' })).body.id;
  const theirTag = (await b.api.post('/tags', { name: uniq('tag') })).body.id;
  const r = await a.api.post('/contacts/batch/create', {
    inputs: [
      { firstName: 'x', companyId: theirCompany },
      { firstName: 'y', tags: [theirTag] },
    ],
  });
  assert.equal(r.status, 207);
  assert.deepEqual(
    r.body.results.map((x: any) => [x.status, x.error.field]),
    [
      [404, 'companyId'],
      [404, 'tags[0]'],
    ],
  );
  const deals = await a.api.post('/deals/batch/create', { inputs: [{ title: 'x', pipelineId: b.refs.sales, stageId: b.refs.lead }] });
  assert.equal(deals.body.results[0].status, 404);
});

test('one batch counts once against the rate limit; an Idempotency-Key replays a batch without running it again', async () => {
  const { api, tenantId } = await newTenant(t);
  const before = Number((await api.get('/contacts?pageSize=1')).headers['x-ratelimit-remaining']);
  const key = uniq('idem');
  const body = { inputs: [{ firstName: uniq('I1') }, { firstName: 'bad', email: 'x' }] };
  const first = await api.post('/contacts/batch/create', body, { 'idempotency-key': key });
  assert.equal(first.status, 207);
  assert.equal(Number(first.headers['x-ratelimit-remaining']), before - 1);
  const again = await api.post('/contacts/batch/create', body, { 'idempotency-key': key });
  assert.equal(again.status, 207);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.raw.body, first.raw.body);
  assert.equal(await countOf(tenantId, 'contacts'), 1);
  assert.equal((await events(tenantId, 'contact.created')).length, 1);
});

test('20 concurrent batch upserts of the same e-mail give one contact', async () => {
  const { api, tenantId } = await newTenant(t);
  const email = `${uniq('race')}@b.test`;
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      api.post('/contacts/batch/upsert', {
        idProperty: 'email',
        inputs: [
          { firstName: `Racer${i}`, email },
          { firstName: `Other${i}`, email: `${i}${email}` },
        ],
      }),
    ),
  );
  for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
  const ids = new Set(answers.map((a) => a.body.results[0].id));
  assert.equal(ids.size, 1);
  assert.equal(answers.filter((a) => a.body.results[0].action === 'created').length, 1);
  const rows = await db.selectFrom('contacts').select('id').where('tenant_id', '=', tenantId).where('email', '=', email).execute();
  assert.equal(rows.length, 1);
  assert.equal((await events(tenantId, 'contact.created')).filter((e) => e.data.contact.email === email).length, 1);
});

test('a duplicate names the record that holds the value (existing…Id) on every resource', async () => {
  const { api, refs } = await newTenant(t);
  const company = (await api.post('/companies', { name: 'Holder', cnpj: '11.222.333/0001-81', domain: 'holder.test' })).body;
  const cnpj = await api.post('/companies', { name: 'Copy', cnpj: '11222333000181' });
  assert.deepEqual([cnpj.status, cnpj.body.error, cnpj.body.existingCompanyId], [409, 'duplicate_cnpj', company.id]);
  const domain = await api.post('/companies/batch/create', { inputs: [{ name: 'Copy', domain: 'HOLDER.test' }] });
  assert.deepEqual([domain.body.results[0].error.error, domain.body.results[0].error.existingCompanyId], ['duplicate_domain', company.id]);
  const phoneHolder = (await api.post('/contacts', { firstName: 'P', phone: '+5511977776666' })).body;
  const phone = await api.post('/contacts', { firstName: 'Q', phone: '(11) 97777-6666' });
  assert.deepEqual([phone.status, phone.body.error, phone.body.existingContactId], [409, 'duplicate_phone', phoneHolder.id]);
  const tag = (await api.post('/tags', { name: 'VIP' })).body;
  const tagDup = await api.post('/tags', { name: ' vip ' });
  assert.deepEqual([tagDup.status, tagDup.body.error, tagDup.body.existingTagId], [409, 'duplicate_name', tag.id]);
  const deal = (await api.post('/deals', { title: 'D', pipelineId: refs.sales, stageId: refs.lead })).body;
  const proposal = (await api.post('/proposals', { subject: 'P1', dealId: deal.id })).body;
  const second = await api.post('/proposals', { subject: 'P2', dealId: deal.id });
  assert.deepEqual([second.status, second.body.error, second.body.existingProposalId], [400, 'duplicate_proposal_for_deal', proposal.id]);
});

test('totals and dynamic-list markers see every committed batch input (change markers once per transaction)', async () => {
  const { api, tenantId } = await newTenant(t);
  const total = async () => (await api.get('/contacts?pageSize=1')).body.pagination.total as number;
  assert.equal(await total(), 0);
  await api.post('/contacts/batch/create', { atomic: true, inputs: [{ firstName: 'A' }, { firstName: 'B', email: 'bad' }] });
  assert.equal(await total(), 0);
  const r = await api.post('/contacts/batch/create', {
    inputs: [{ firstName: 'C', email: 'bad' }, { firstName: 'D', score: 90 }, { firstName: 'E', ownerId: 'usr_x' }, { firstName: 'F' }],
  });
  assert.equal(r.status, 207);
  assert.equal(await total(), 2);
  const marker = await db
    .selectFrom('list_dirty')
    .select('object_type')
    .where('tenant_id', '=', tenantId)
    .where('object_type', '=', 'contact')
    .executeTakeFirst();
  assert.ok(marker, 'the dynamic-list marker of the batch committed');
  await api.post('/contacts/batch/delete', { ids: [r.body.results[1].id, 'con_nope'] });
  assert.equal(await total(), 1);
});

test('a batch of 100 gives the event loop a turn every few inputs: other clients are read, accepted and answered meanwhile', async () => {
  const { api } = await newTenant(t);
  // Turns of the loop while the batch runs: one per setImmediate that gets to run.
  let turns = 0;
  let running = true;
  const tick = () => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const r = await api.post('/contacts/batch/create', { inputs: Array.from({ length: 100 }, (_, i) => ({ firstName: uniq('Turn'), score: i })) });
  running = false;
  assert.equal(r.status, 200, JSON.stringify(r.body));
  // One turn per 10 inputs at least (in one turn, a batch kept libuv from accepting any new connection).
  assert.ok(turns >= 10, `the loop turned ${turns} times during the batch`);
});
