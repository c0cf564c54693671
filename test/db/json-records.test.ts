// Contacts, companies and deals are answered as the JSON text their rows store (`doc`, migrations 014 and 017) (http/replies.ts sendJsonText,
// modules/shared/record-json.ts): every read through it must parse to what the resource's mapper
// (toContact, toCompany) makes of the same row, key order included, on both databases. The rows here hold
// what a mapper treats specially: text needing escapes and outside the BMP, empty values, floats that need 17
// digits, nested custom properties, tags in no order, and a soft-deleted record (includeDeleted).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECT, newTenant, testApp } from '../helpers/app.js';
import { contextFor, type Ctx } from '../../src/http/context.js';
import * as contacts from '../../src/modules/contacts/contacts.service.js';
import * as companies from '../../src/modules/companies/companies.service.js';
import * as deals from '../../src/modules/deals/deals.service.js';

const t = await testApp();
const db = t.database.db;
const ctxFor = (tenantId: string): Ctx => contextFor(t.database, t.config, tenantId, null);

const ODD_TEXT = 'Zoë "quoted" \\ back\nslash\t\u0001\u001f </script> ✓ 😀 \u2028';
const CUSTOM = {
  prop_num: 1.5,
  prop_text: 'text "q" é \\',
  prop_list: [1, 'x', null, true, { a: [] }],
  prop_deep: { n: { deep: false, e: 1e-7 } },
  prop_null: null,
  prop_big: 12345678901234567890,
  '10': 'an integer-like key',
};
const SCORES = [0.1 + 0.2, 82, null, 1e21, 5e-324, -17.25, 100];

/** Reads `path` (a page), checks each record against the mapper's, returns the ids in page order. */
async function checkPage(
  api: { get(u: string): Promise<{ status: number; body: any }> },
  path: string,
  mapped: (id: string) => Promise<Record<string, unknown>>,
) {
  const r = await api.get(path);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  for (const rec of r.body.data) {
    const want = await mapped(rec.id);
    assert.deepStrictEqual(rec, want, `${path}: ${rec.id}`);
    assert.deepStrictEqual(Object.keys(rec), Object.keys(want), `${path}: key order of ${rec.id}`);
  }
  return r.body.data.map((x: { id: string }) => x.id) as string[];
}

test(`contacts and companies built as JSON by the database read as their mappers make them (${DIALECT})`, async () => {
  const { api, tenantId } = await newTenant(t);
  const ctx = ctxFor(tenantId);
  const contactIds: string[] = [];
  const companyIds: string[] = [];
  for (let i = 0; i < SCORES.length; i++) {
    const co = await api.post('/companies', { name: `Company ${i}` });
    assert.equal(co.status, 201, JSON.stringify(co.body));
    companyIds.push(co.body.id);
    const c = await api.post('/contacts', { firstName: `Person ${i}`, companyId: i % 2 ? co.body.id : null });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    contactIds.push(c.body.id);
  }
  // Values no request writes as such (the API trims and checks them), written to the rows themselves.
  for (const [i, id] of contactIds.entries()) {
    await db
      .updateTable('contacts')
      .set({
        first_name: i === 0 ? ODD_TEXT : `Person ${i}`,
        last_name: i % 3 === 0 ? null : ODD_TEXT,
        score: SCORES[i],
        custom_properties: i % 2 ? JSON.stringify(CUSTOM) : '{}',
      })
      .where('id', '=', id)
      .execute();
  }
  for (const [i, id] of companyIds.entries()) {
    await db
      .updateTable('companies')
      .set({ industry: i === 1 ? ODD_TEXT : null, custom_properties: i % 2 ? '{}' : JSON.stringify(CUSTOM) })
      .where('id', '=', id)
      .execute();
  }
  // Tags out of order, mixed case (code point order: "tag_A" < "tag_a" < "tag_b").
  for (const [type, id] of [
    ['contact', contactIds[1]],
    ['company', companyIds[2]],
    ['contact', contactIds[4]],
  ] as const) {
    for (const tag of ['tag_b', 'tag_A', 'tag_a']) {
      await db.insertInto('record_tags').values({ tenant_id: tenantId, object_type: type, object_id: id, tag_id: tag }).execute();
    }
  }
  await api.delete(`/contacts/${contactIds[5]}`);
  await api.delete(`/companies/${companyIds[5]}`);
  // The pages' totals are cached against the change version, which the direct writes above did not bump.
  await db
    .updateTable('change_versions')
    .set({ version: sql`version + 1` })
    .where('tenant_id', '=', tenantId)
    .execute();

  const contact = (id: string) => contacts.getContact(ctx, id) as unknown as Promise<Record<string, unknown>>;
  const company = (id: string) => companies.getCompany(ctx, id) as unknown as Promise<Record<string, unknown>>;
  for (const id of contactIds.filter((_, i) => i !== 5)) {
    const r = await api.get(`/contacts/${id}`);
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json; charset=utf-8$/);
    const want = await contact(id);
    assert.deepStrictEqual(r.body, want);
    assert.deepStrictEqual(Object.keys(r.body), Object.keys(want));
  }
  for (const id of companyIds.filter((_, i) => i !== 5)) {
    const r = await api.get(`/companies/${id}`);
    assert.equal(r.status, 200);
    const want = await company(id);
    assert.deepStrictEqual(r.body, want);
    assert.deepStrictEqual(Object.keys(r.body), Object.keys(want));
  }
  assert.deepEqual((await api.get(`/contacts/${contactIds[1]}`)).body.tags, ['tag_A', 'tag_a', 'tag_b']);
  assert.deepEqual((await api.get(`/contacts/${contactIds[1]}`)).body.customProperties, CUSTOM);
  assert.equal((await api.get(`/contacts/${contactIds[0]}`)).body.score, 0.1 + 0.2);
  assert.equal((await api.get(`/contacts/${contactIds[0]}`)).body.firstName, ODD_TEXT);
  assert.equal((await api.get(`/contacts/${contactIds[5]}`)).status, 404);

  // Pages: the first (walks its index on the main connection), pages by number past the first, by cursor, a
  // filtered list and a search (the read pool).
  const live = contactIds.filter((_, i) => i !== 5);
  const all = [
    ...(await checkPage(api, '/contacts?pageSize=3', contact)),
    ...(await checkPage(api, '/contacts?pageSize=3&page=2', contact)),
    ...(await checkPage(api, '/contacts?pageSize=3&page=3', contact)),
  ];
  assert.deepEqual([...all].sort(), [...live].sort());
  const first = await api.get('/contacts?pageSize=2&sortKey=score&sortOrder=asc');
  assert.equal(first.status, 200);
  const next = await api.get(`/contacts?pageSize=2&sortKey=score&sortOrder=asc&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
  for (const rec of next.body.data) assert.deepStrictEqual(rec, await contact(rec.id));
  await checkPage(api, `/contacts?search=${encodeURIComponent('person')}&pageSize=2&page=2`, contact);
  const search = await api.post('/contacts/search', {
    filters: { operator: 'AND', conditions: [{ field: 'score', operator: 'gte', value: 0 }] },
    pageSize: 50,
  });
  assert.equal(search.status, 200, JSON.stringify(search.body));
  assert.equal(search.body.data.length, SCORES.filter((s, i) => s !== null && s >= 0 && i !== 5).length);
  for (const rec of search.body.data) assert.deepStrictEqual(rec, await contact(rec.id));
  await checkPage(api, '/companies?pageSize=4&page=2', company);
  await checkPage(api, '/companies?pageSize=4', company);

  // includeDeleted: the same records plus `deletedAt`, last, and the deleted one with its timestamp.
  for (const [path, read, ids] of [
    ['/contacts?includeDeleted=true&pageSize=100', contact, contactIds],
    ['/contacts?includeDeleted=true&pageSize=4&page=2', contact, contactIds],
    ['/companies?includeDeleted=true&pageSize=100', company, companyIds],
  ] as const) {
    const r = await api.get(path);
    assert.equal(r.status, 200);
    for (const rec of r.body.data) {
      const keys = Object.keys(rec);
      assert.equal(keys[keys.length - 1], 'deletedAt', path);
      const { deletedAt, ...rest } = rec;
      if (rec.id === ids[5]) {
        assert.match(deletedAt, /^\d{4}-\d{2}-\d{2}T/);
        continue;
      }
      assert.equal(deletedAt, null);
      assert.deepStrictEqual(rest, await read(rec.id));
    }
  }
});

test(`a PATCH answers and announces the record a read returns after it, key order included (${DIALECT})`, async () => {
  // updateContact and updateCompany build the answer from the row as updated, without reading it back.
  const { api, refs, tenantId } = await newTenant(t);
  const tagIds: string[] = [];
  for (const name of ['zeta', 'Alpha', 'beta']) tagIds.push((await api.post('/tags', { name })).body.id);
  const company = (await api.post('/companies', { name: 'Base', customProperties: { [refs.company_text]: 'keep', [refs.company_number]: 1 } })).body;
  const contact = (
    await api.post('/contacts', { firstName: 'Base', customProperties: { [refs.contact_text]: 'keep', [refs.contact_number]: 1 }, tags: [tagIds[0]] })
  ).body;
  const patches: [string, Record<string, unknown>][] = [
    [
      `/contacts/${contact.id}`,
      { lastName: `  ${ODD_TEXT}  `, email: ' Mixed.Case@Example.TEST ', phone: '(11) 98765-4321', score: SCORES[0], ownerId: refs.ana, companyId: company.id },
    ],
    [
      `/contacts/${contact.id}`,
      {
        customProperties: { [refs.contact_number]: 0.1 + 0.2, [refs.contact_multi_select]: ['ent', 'smb'], [refs.contact_text]: null },
        tags: [tagIds[2], tagIds[0], tagIds[1], tagIds[0]],
      },
    ],
    [`/contacts/${contact.id}`, { tags: [], score: null, lastName: null }],
    [
      `/companies/${company.id}`,
      {
        name: ` ${ODD_TEXT} `,
        cnpj: '11.222.333/0001-81',
        domain: 'Example.TEST',
        website: 'https://example.test/x',
        phone: '+55 11 3333-4444',
        industry: 'Tech',
        ownerId: refs.bruno,
      },
    ],
    [`/companies/${company.id}`, { customProperties: { [refs.company_number]: 1e21, [refs.company_boolean]: true }, tags: [tagIds[1], tagIds[2], tagIds[1]] }],
    [`/companies/${company.id}`, { tags: [] }],
  ];
  for (const [path, body] of patches) {
    const patched = await api.patch(path, body);
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const read = (await api.get(path)).body;
    assert.deepStrictEqual(patched.body, read, `${path} ${JSON.stringify(body)}`);
    assert.deepStrictEqual(Object.keys(patched.body), Object.keys(read));
  }
  // The events carry the same records: the last update of each.
  const last = async (type: string) => {
    const rows = await db
      .selectFrom('events')
      .select('payload')
      .where('tenant_id', '=', tenantId)
      .where('type', '=', type)
      .orderBy('seq', 'desc')
      .limit(1)
      .execute();
    return JSON.parse(rows[0].payload).data;
  };
  assert.deepStrictEqual((await last('contact.updated')).contact, (await api.get(`/contacts/${contact.id}`)).body);
  assert.deepStrictEqual((await last('company.updated')).company, (await api.get(`/companies/${company.id}`)).body);
});

test(`deals are answered as JSON text with their contact's and company's stored JSON, as expand makes them, key order included (${DIALECT})`, async () => {
  // deals.service.ts dealsJson: the list and the single read splice the records' `doc` into each deal's text; the
  // pages SQLite reads as one BLOB have the statement splice them (deals.repo.ts DEAL_BLOB_RECORD).
  const { api, refs, tenantId } = await newTenant(t);
  const ctx = ctxFor(tenantId);
  const company = (await api.post('/companies', { name: 'Acme' })).body;
  const other = (await api.post('/companies', { name: 'Other' })).body;
  const person = (await api.post('/contacts', { firstName: 'Ana', companyId: company.id })).body;
  const gone = (await api.post('/contacts', { firstName: 'Gone' })).body;
  const odd = (await api.post('/contacts', { firstName: 'Odd' })).body;
  await db
    .updateTable('contacts')
    .set({ first_name: ODD_TEXT, score: SCORES[0], custom_properties: JSON.stringify({ ...CUSTOM, contact: null, company: null }) })
    .where('id', '=', odd.id)
    .execute();
  await db
    .updateTable('companies')
    .set({ industry: ODD_TEXT, custom_properties: JSON.stringify({ company: null, contact: null }) })
    .where('id', '=', other.id)
    .execute();
  const base = { pipelineId: refs.sales, stageId: refs.lead };
  const made: string[] = [];
  for (const body of [
    { title: 'Both', contactId: person.id, companyId: company.id, value: 1234.5 },
    { title: 'Contact only', contactId: odd.id },
    { title: 'Company only', companyId: other.id, value: 0.1 },
    { title: 'Neither' },
    { title: 'Its contact deleted', contactId: gone.id, companyId: other.id },
    // A title and custom properties holding the very keys the splice looks for.
    { title: '"contact":null,"company":null', contactId: odd.id, companyId: company.id },
  ]) {
    const r = await api.post('/deals', { ...base, ...body });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    made.push(r.body.id);
  }
  await db
    .updateTable('deals')
    .set({ custom_properties: JSON.stringify({ contact: null, company: null, n: 1e21 }) })
    .where('id', '=', made[5])
    .execute();
  // What the stored JSON writes itself (migration 017): the value from cents (digits, zero, negative, the largest
  // amount), the two flags, dates, the closing's fields, text needing escapes, tags.
  const closed = { closed_at: '2026-01-02T03:04:05.678Z', expected_close_date: '2026-02-03' };
  const rowChanges = [
    { value_cents: 123456789012345, is_won: 1, ...closed, owner_id: 'usr_x' },
    { value_cents: -1, loss_notes: ODD_TEXT },
    { value_cents: 1, is_lost: 1, ...closed, loss_reason_id: 'lr_x', loss_notes: ODD_TEXT },
    { value_cents: 0, title: ODD_TEXT },
    { value_cents: 1e15 },
    { value_cents: 10, custom_properties: JSON.stringify({ ...CUSTOM, contact: null, company: null }) },
  ];
  for (const [i, set] of rowChanges.entries()) await db.updateTable('deals').set(set).where('id', '=', made[i]).execute();
  for (const tag of ['tag_b', 'tag_A', 'tag_a']) {
    await db.insertInto('record_tags').values({ tenant_id: tenantId, object_type: 'deal', object_id: made[0], tag_id: tag }).execute();
  }
  assert.equal((await api.delete(`/contacts/${gone.id}`)).status, 204);
  const dropped = (await api.post('/deals', { ...base, title: 'Deleted deal', contactId: person.id })).body;
  assert.equal((await api.delete(`/deals/${dropped.id}`)).status, 204);
  await db
    .updateTable('change_versions')
    .set({ version: sql`version + 1` })
    .where('tenant_id', '=', tenantId)
    .execute();

  const deal = (id: string) => deals.getDeal(ctx, id) as unknown as Promise<Record<string, unknown>>;
  const same = (got: Record<string, any>, want: Record<string, any>, what: string) => {
    assert.deepStrictEqual(got, want, what);
    assert.deepStrictEqual(Object.keys(got), Object.keys(want), `${what}: key order`);
    for (const k of ['contact', 'company'])
      if (want[k] !== null) assert.deepStrictEqual(Object.keys(got[k]), Object.keys(want[k]), `${what}: ${k}'s key order`);
  };
  for (const id of made) {
    const r = await api.get(`/deals/${id}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(String(r.headers['content-type']), /^application\/json; charset=utf-8$/);
    same(r.body, await deal(id), `GET /deals/${id}`);
  }
  assert.equal((await api.get(`/deals/${made[4]}`)).body.contact, null, 'a deleted contact expands to null');
  assert.equal((await api.get(`/deals/${made[4]}`)).body.contactId, gone.id);
  assert.equal((await api.get(`/deals/${made[5]}`)).body.title, '"contact":null,"company":null');
  assert.equal((await api.get(`/deals/${made[4]}`)).body.value, 1e13);
  assert.equal((await api.get(`/deals/${made[0]}`)).body.value, 1234567890123.45);
  assert.deepEqual((await api.get(`/deals/${made[0]}`)).body.tags, ['tag_A', 'tag_a', 'tag_b']);
  assert.equal((await api.get(`/deals/${made[2]}`)).body.isLost, true);
  assert.equal((await api.get(`/deals/${made[3]}`)).body.title, ODD_TEXT);
  assert.equal((await api.get(`/deals/${made[5]}`)).body.customProperties.prop_big, CUSTOM.prop_big);
  assert.equal((await api.get(`/deals/${made[1]}`)).body.contact.firstName, ODD_TEXT);
  assert.equal((await api.get(`/deals/${dropped.id}`)).status, 404);

  // Pages: the first, by number, by cursor, filtered by pipeline and by contact; every deal as its single read.
  const seen: string[] = [];
  for (const path of ['/deals?pageSize=4', '/deals?pageSize=4&page=2', `/deals?pipelineId=${refs.sales}&pageSize=50`, `/deals?contactId=${odd.id}`]) {
    const r = await api.get(path);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (const rec of r.body.data) same(rec, await deal(rec.id), `${path}: ${rec.id}`);
    if (path.includes('pageSize=4')) seen.push(...r.body.data.map((d: { id: string }) => d.id));
  }
  assert.deepEqual([...seen].sort(), [...made].sort());
  const first = await api.get('/deals?pageSize=2&sortKey=title&sortOrder=asc');
  const next = await api.get(`/deals?pageSize=2&sortKey=title&sortOrder=asc&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
  assert.equal(next.status, 200);
  assert.equal(next.body.data.length, 2);
  for (const rec of next.body.data) same(rec, await deal(rec.id), `cursor page: ${rec.id}`);
  // After a cursor in the index's order (SQLite: one BLOB read on the main connection, its extra row cut off).
  const walked = await api.get('/deals?pageSize=2');
  const walkedNext = await api.get(`/deals?pageSize=2&cursor=${encodeURIComponent(walked.body.pagination.nextCursor)}`);
  assert.equal(walkedNext.body.data.length, 2);
  for (const rec of walkedNext.body.data) same(rec, await deal(rec.id), `cursor page in the index's order: ${rec.id}`);
  const empty = await api.get(`/deals?contactId=${gone.id}&isWon=true`);
  assert.deepEqual(empty.body.data, []);

  // includeDeleted: the same deals plus `deletedAt`, last; the deleted one with its timestamp.
  const all = await api.get('/deals?includeDeleted=true&pageSize=100');
  assert.equal(all.status, 200);
  assert.equal(all.body.data.length, made.length + 1);
  for (const rec of all.body.data) {
    const keys = Object.keys(rec);
    assert.equal(keys[keys.length - 1], 'deletedAt');
    const { deletedAt, ...rest } = rec;
    if (rec.id === dropped.id) {
      assert.match(deletedAt, /^\d{4}-\d{2}-\d{2}T/);
      continue;
    }
    assert.equal(deletedAt, null);
    same(rest, await deal(rec.id), `includeDeleted: ${rec.id}`);
  }
});
