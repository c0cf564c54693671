import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { PAGE_SAMPLES, sampleStats, samplingsSettled } from '../../src/db/page-samples.js';
import { MAIN_MAX_OFFSET } from '../../src/listing/planner.js';
import { markChanged } from '../../src/modules/shared/changes.js';
import { withTx } from '../../src/db/index.js';
import { newTenant, testApp, type Client, type TestApp } from '../helpers/app.js';

// Pages by number past MAIN_MAX_OFFSET are read after a sampled position (db/page-samples.ts): every one must be
// the page a plain OFFSET reads, for every sort key (text, nullable, ties), both orders, filters, page sizes,
// pages past the end, and after writes.
PAGE_SAMPLES.stride = 97;
PAGE_SAMPLES.rebuildMs = 0;
PAGE_SAMPLES.gapPerCost = 0;
const t = await testApp();
const ROWS = 2_600;

/** A tenant with ROWS contacts (and every 17th soft-deleted): many ties, empty values and mixed case. */
async function seeded(app: TestApp) {
  const tenant = await newTenant(app);
  const { tenantId, refs } = tenant;
  const db = app.database.db;
  await withTx(db, async (tx) => {
    await sql`
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${ROWS})
      insert into contacts (tenant_id, id, first_name, last_name, email, phone, company_id, owner_id, score, custom_properties, created_at, updated_at, deleted_at, search_text)
      select cast(${tenantId} as text), 'pn' || i,
        case when i % 2 = 0 then 'F' else 'f' end || (i % 37),
        case when i % 5 = 0 then null else 'L' || (i % 113) end,
        case when i % 3 = 0 then null else 'e' || i || '@x.test' end,
        null, null,
        case when i % 4 = 0 then cast(${refs.bruno} as text) else cast(${refs.ana} as text) end,
        case when i % 7 = 0 then null else i % 50 end,
        '{}',
        '2026-01-0' || (1 + i % 9) || 'T00:00:00.000Z',
        '2026-02-' || (10 + i % 13) || 'T00:00:00.000Z',
        case when i % 17 = 0 then '2026-03-01T00:00:00.000Z' else null end,
        ''
      from n`.execute(tx);
    await markChanged(tx, tenantId, 'contact');
  });
  // Far more requests than the fixture key's 1,000 a minute.
  await db.updateTable('api_keys').set({ rate_limit: 1_000_000_000 }).where('tenant_id', '=', tenantId).execute();
  return tenant;
}

const KEYS = ['createdAt', 'updatedAt', 'firstName', 'lastName', 'email', 'score'];

/** Every id of a list, in order, by cursor (keyset pages: no offset anywhere). */
async function allIds(api: Client, query: string): Promise<string[]> {
  const ids: string[] = [];
  let r = await api.get(`/contacts?${query}&pageSize=100`);
  for (;;) {
    assert.equal(r.status, 200, JSON.stringify(r.body));
    ids.push(...r.body.data.map((c: { id: string }) => c.id));
    const next = r.body.pagination.nextCursor;
    if (!next) return ids;
    r = await api.get(`/contacts?${query}&pageSize=100&cursor=${encodeURIComponent(next)}`);
  }
}

/** Pages by number past MAIN_MAX_OFFSET of one list: each against the list read by cursor, and the first one read before the list had samples. */
async function checkList(api: Client, query: string, pageSize: number) {
  const ids = await allIds(api, query);
  const first = Math.floor(MAIN_MAX_OFFSET / pageSize) + 1;
  const last = Math.ceil(ids.length / pageSize) + 1; // one past the end
  const url = (page: number) => `/contacts?${query}&pageSize=${pageSize}&page=${page}`;
  // Read before the samples (the plain OFFSET's page, which starts a sampling), then from them: the same answer.
  const before = await api.get(url(first));
  await samplingsSettled();
  const pages = sampleStats.pages;
  const after = await api.get(url(first));
  assert.deepEqual(after.body, before.body, `${query} pageSize ${pageSize}: page ${first}`);
  assert.equal(sampleStats.pages, pages + 1, `${query}: the page came from samples`);
  const step = Math.max(1, Math.floor((last - first) / 6));
  const numbers = new Set([first + 1, last - 1, last]);
  for (let page = first; page < last; page += step) numbers.add(page);
  for (const page of numbers) {
    const r = await api.get(url(page));
    assert.equal(r.status, 200);
    const want = ids.slice((page - 1) * pageSize, page * pageSize);
    const what = `${query} pageSize ${pageSize}: page ${page}`;
    assert.deepEqual(
      r.body.data.map((c: { id: string }) => c.id),
      want,
      what,
    );
    const totalPages = Math.ceil(ids.length / pageSize);
    assert.deepEqual(
      { ...r.body.pagination, nextCursor: r.body.pagination.nextCursor !== null },
      { page, pageSize, total: ids.length, totalPages, hasNext: page < totalPages, hasPrev: true, nextCursor: page < totalPages },
      what,
    );
  }
}

test('pages by number from samples equal the plain OFFSET pages: every sort key, both orders, filters, page sizes', async () => {
  const { api, refs } = await seeded(t);
  const filters = ['', `&ownerId=${refs.ana}`, '&includeDeleted=true', '&updatedAfter=2026-02-11T00:00:00.000Z'];
  let n = 0;
  for (const key of KEYS) {
    for (const order of ['asc', 'desc']) {
      for (const filter of filters) {
        const pageSize = [1, 7, 50, 100, 33, 13][n++ % 6];
        await checkList(api, `sortKey=${key}&sortOrder=${order}${filter}`, pageSize);
      }
    }
  }
});

test('a write between two pages by number: the next page is the new state’s, never a mix', async () => {
  const { api } = await seeded(t);
  const query = 'sortKey=lastName&sortOrder=asc';
  await checkList(api, query, 20);
  // A contact that sorts first: every later page shifts by one row.
  await api.post('/contacts', { firstName: 'Zed', lastName: '' + 'A' });
  const ids = await allIds(api, query);
  const r = await api.get(`/contacts?${query}&pageSize=20&page=60`);
  assert.deepEqual(
    r.body.data.map((c: { id: string }) => c.id),
    ids.slice(59 * 20, 60 * 20),
  );
  assert.equal(r.body.pagination.total, ids.length);
  await samplingsSettled();
  await checkList(api, query, 20);
});

test('a write that commits between the version a page reads and its statement: the guard sends the page the plain way', async () => {
  const { api, tenantId } = await seeded(t);
  const query = 'sortKey=firstName&sortOrder=desc';
  await checkList(api, query, 50);
  const db = t.database.db;
  const pool = t.database.readPool;
  // Before the sampled page's statement (it reads change_versions and skips an offset), a write lands.
  let wrote = false;
  const writeFirst = async (text: string) => {
    if (wrote || !/change_versions/.test(text) || !/offset/i.test(text)) return;
    wrote = true;
    await withTx(db, async (tx) => {
      await tx.deleteFrom('contacts').where('tenant_id', '=', tenantId).where('id', '=', 'pn1').execute();
      await markChanged(tx, tenantId, 'contact');
    });
  };
  const exec = db.executeQuery;
  const run = pool?.run;
  db.executeQuery = (async (q: { sql: string }) => (await writeFirst(q.sql), exec.call(db, q as never))) as typeof exec;
  if (pool && run) pool.run = async (tenant, text, ...rest) => (await writeFirst(text), run.call(pool, tenant, text, ...rest));
  const pages = sampleStats.pages;
  let r;
  try {
    r = await api.get(`/contacts?${query}&pageSize=50&page=25`);
  } finally {
    db.executeQuery = exec;
    if (pool && run) pool.run = run;
  }
  assert.ok(wrote, 'the sampled statement ran');
  assert.equal(sampleStats.pages, pages, 'the guarded statement answered no page');
  const ids = await allIds(api, query);
  assert.equal(ids.includes('pn1'), false);
  assert.deepEqual(
    r.body.data.map((c: { id: string }) => c.id),
    ids.slice(24 * 50, 25 * 50),
  );
  assert.equal(r.body.pagination.total, ids.length);
});

test('a list written all the time is sampled at most once per rebuildMs; its pages meanwhile are read the plain way, exact', async () => {
  const { api } = await seeded(t);
  const query = 'sortKey=score&sortOrder=desc';
  await checkList(api, query, 40);
  PAGE_SAMPLES.rebuildMs = 60_000;
  try {
    const builds = sampleStats.builds;
    const pages = sampleStats.pages;
    for (let i = 0; i < 3; i++) {
      await api.post('/contacts', { firstName: `W${i}`, score: 99 });
      const r = await api.get(`/contacts?${query}&pageSize=40&page=30`);
      await samplingsSettled();
      const ids = await allIds(api, query);
      assert.deepEqual(
        r.body.data.map((c: { id: string }) => c.id),
        ids.slice(29 * 40, 30 * 40),
      );
    }
    assert.equal(sampleStats.builds, builds, 'no sampling within rebuildMs of the last one');
    assert.equal(sampleStats.pages, pages, 'stale samples are never read');
  } finally {
    PAGE_SAMPLES.rebuildMs = 0;
  }
});
