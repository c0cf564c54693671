// Which index a list page walks, on both databases. Plans are asserted, never times.
//
// 1. Migration 011: a page of contacts or companies filtered by owner, in the lists' default order
//    (created_at, ties by id), walks the owner index in that order — no sort of the owner's rows, and on
//    SQLite no walk of the created_at index that reads every row it passes to test the owner; the rows of
//    the page are checked against the order the API promises.
// 2. Pages that walk their own index run on the main connection (listing/planner.ts walksTimeIndex, reads.ts): a
//    page of contacts, companies or deals with no filter but the owner's, sorted by a time with an index,
//    reads at most offset + pageSize + 1 entries of that index whatever the tenant's size. These tests hold
//    that claim to the statements the API really runs: every such page is answered without the read pool,
//    and the plan of each statement it ran walks an index with no sort. Any other filter, a sort with no
//    index, or an offset past MAIN_MAX_OFFSET goes to the read pool (with its deadline).
// 3. A page's rows carry their own tags, read from each row's `tag_ids` (migration 013), with no subquery per
//    row on record_tags: PostgreSQL computes a SELECT list before OFFSET drops rows, so page 20 of 50 ran such
//    a subquery 1,000 times, and SQLite spent ~30 % of a page's statement on them.
//
// One file, one data set: PostgreSQL's statistics are per table, not per tenant, so a second file
// seeding thousands of rows (and analyzing) at the same time would move these plans.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql } from 'kysely';
import { COUNTED_ROWS, MAIN_MAX_OFFSET, PROBE_MAX_ROW_COST, PROBE_ROWS } from '../../src/listing/planner.js';
import SqliteDatabase from '../../src/db/sqlite-driver.mjs';
import { DIALECT, newTenant, recordStatements, testApp, type RanStatement, type Tenant } from '../helpers/app.js';

const CONTACTS = 20_000;
const COMPANIES = 12_000;
const DEALS = 8_000;
const OWNERS = 4;

// PostgreSQL keeps its database across runs: the rows go before the app (registered next) closes it.
after(async () => {
  if (!tenant) return;
  await db.deleteFrom('contacts').where('tenant_id', '=', tenant.tenantId).where('id', 'like', 'oc%').execute();
  await db.deleteFrom('companies').where('tenant_id', '=', tenant.tenantId).where('id', 'like', 'oc%').execute();
  await db.deleteFrom('deals').where('tenant_id', '=', tenant.tenantId).where('id', 'like', 'oc%').execute();
  await db.deleteFrom('record_tags').where('tenant_id', '=', tenant.tenantId).where('object_id', 'like', 'oc%').execute();
});
const t = await testApp();
const db = t.database.db;
let tenant: Tenant;

before(async () => {
  tenant = await newTenant(t);
  // Owners round-robin, so an owner's rows are spread over the whole table; one creation time for all, so
  // the order inside the index must come from the id as well.
  await sql`
    with recursive n(i) as (select 1 union all select i + 1 from n where i < ${CONTACTS})
    insert into contacts (tenant_id, id, first_name, last_name, email, phone, company_id, owner_id, score, custom_properties, created_at, updated_at, deleted_at, search_text)
    select cast(${tenant.tenantId} as text), 'oc' || i, 'F' || i, null, null, null, null, 'own' || (i % ${sql.lit(OWNERS)}), i % 100, '{}',
      '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', null, 'f' || i
    from n`.execute(db);
  await sql`
    with recursive n(i) as (select 1 union all select i + 1 from n where i < ${COMPANIES})
    insert into companies (tenant_id, id, name, cnpj, website, domain, phone, industry, owner_id, custom_properties, created_at, updated_at, deleted_at, search_text)
    select cast(${tenant.tenantId} as text), 'oc' || i, 'C' || i, null, null, null, null, null, 'own' || (i % ${sql.lit(OWNERS)}), '{}',
      '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', null, 'c' || i
    from n`.execute(db);
  await sql`
    with recursive n(i) as (select 1 union all select i + 1 from n where i < ${DEALS})
    insert into deals (tenant_id, id, title, pipeline_id, stage_id, currency, contact_id, owner_id, custom_properties, created_at, updated_at, search_text)
    select cast(${tenant.tenantId} as text), 'oc' || i, 'D' || i, 'p', 's', 'BRL', 'oc' || i, 'own' || (i % ${sql.lit(OWNERS)}), '{}',
      '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'd' || i
    from n`.execute(db);
  // Every third record has tag octag3, every fifth octag5 (tagsOf).
  for (const [type, n] of [
    ['contact', CONTACTS],
    ['company', COMPANIES],
    ['deal', DEALS],
  ] as const) {
    for (const k of [3, 5]) {
      await sql`
        with recursive n(i) as (select ${sql.lit(k)} union all select i + ${sql.lit(k)} from n where i + ${sql.lit(k)} <= ${sql.lit(n)})
        insert into record_tags (tenant_id, object_type, object_id, tag_id)
        select cast(${tenant.tenantId} as text), cast(${type} as text), 'oc' || i, cast(${'octag' + k} as text) from n`.execute(db);
    }
  }
  if (DIALECT === 'postgres') await sql`analyze contacts, companies, deals, record_tags`.execute(db);
  else await t.database.optimize();
});

const pageSql = (table: string, offset: number) =>
  `select id from ${table} where tenant_id = $1 and deleted_at is null and owner_id = $2 order by created_at desc, id desc limit 50 offset ${offset}`;

async function planOf(table: string, offset: number): Promise<string> {
  const text = pageSql(table, offset);
  const query = DIALECT === 'postgres' ? `explain ${text}` : `explain query plan ${text.replace(/\$\d/g, '?')}`;
  const rows = (await db.executeQuery({ sql: query, parameters: [tenant.tenantId, 'own1'], query: { kind: 'RawNode' } as never, queryId: { queryId: 'plan' } }))
    .rows as Record<string, unknown>[];
  return rows.map((r) => String(r['QUERY PLAN'] ?? r.detail)).join('\n');
}

for (const table of ['contacts', 'companies']) {
  test(`${table} filtered by owner: a deep page walks ${table}__owner in the list's order, with no sort (${DIALECT})`, async () => {
    for (const offset of [0, 950]) {
      const plan = await planOf(table, offset);
      assert.match(plan, new RegExp(`${table}__owner`), plan);
      assert.doesNotMatch(plan, /TEMP B-TREE|Sort/, plan);
    }
  });

  test(`${table} filtered by owner: the page holds that owner's rows, newest first, ties by id descending (${DIALECT})`, async () => {
    const text = pageSql(table, 950);
    const rows = (
      await db.executeQuery({
        sql: DIALECT === 'postgres' ? text : text.replace(/\$\d/g, '?'),
        parameters: [tenant.tenantId, 'own1'],
        query: { kind: 'RawNode' } as never,
        queryId: { queryId: 'page' },
      })
    ).rows as { id: string }[];
    const n = table === 'contacts' ? CONTACTS : COMPANIES;
    // Every created_at is equal: the order is by id descending, as text.
    const ids = Array.from({ length: n }, (_, k) => k + 1)
      .filter((i) => i % OWNERS === 1)
      .map((i) => `oc${i}`)
      .sort()
      .reverse();
    assert.deepEqual(
      rows.map((r) => r.id),
      ids.slice(950, 1000),
    );
  });
}

test(`the total of a contact search by owner and score is counted from one range of contacts__owner_score (migration 012) (${DIALECT})`, async () => {
  const filters = {
    operator: 'AND',
    conditions: [
      { field: 'ownerId', operator: 'eq', value: 'own1' },
      { field: 'score', operator: 'gte', value: 60 },
    ],
  };
  const { result: res, pooled, main } = await recordStatements(t.database, () => tenant.api.post('/contacts/search', { filters, pageSize: 50 }));
  assert.equal(res.status, 200);
  // Owner 1's contacts are i % 4 = 1; scores are i % 100.
  assert.equal(res.body.pagination.total, Array.from({ length: CONTACTS }, (_, k) => k + 1).filter((i) => i % OWNERS === 1 && i % 100 >= 60).length);
  const counts = [...pooled, ...main].filter((q) => /count\(/i.test(q.sql) && /from "contacts"/.test(q.sql));
  assert.equal(counts.length, 1, 'the total was counted by one statement');
  // PostgreSQL may rightly read 20,000 rows in one sequential scan instead: the plan asserted is the one it
  // takes when it reads through an index, as it does at the bench's 1,000,000.
  const plan = await planOfQuery(counts[0], { noSeqScan: true });
  assert.match(plan, /contacts__owner_score/, plan);
});

/** The statements of `fn`: how many went to the read pool, and those run on the main connection. */
async function observed<T>(fn: () => Promise<T>): Promise<{ result: T; pooled: number; main: RanStatement[] }> {
  const { result, pooled, main } = await recordStatements(t.database, fn);
  return { result, pooled: pooled.length, main };
}

async function planOfQuery(q: RanStatement, opts: { noSeqScan?: boolean } = {}): Promise<string> {
  const text = DIALECT === 'postgres' ? `explain ${q.sql}` : `explain query plan ${q.sql}`;
  const explain = CompiledQuery.raw(text, [...q.parameters]);
  const rows = (
    DIALECT === 'postgres' && opts.noSeqScan
      ? await db.transaction().execute(async (trx) => {
          await sql`set local enable_seqscan = off`.execute(trx);
          return trx.executeQuery(explain);
        })
      : await db.executeQuery(explain)
  ).rows as Record<string, unknown>[];
  return rows.map((r) => String(r['QUERY PLAN'] ?? r.detail)).join('\n');
}

const walking: [string, string][] = [];
for (const path of ['/contacts', '/companies', '/deals']) {
  for (const sort of ['', 'sortKey=createdAt', 'sortKey=updatedAt', 'sortKey=createdAt&sortOrder=asc', 'sortKey=updatedAt&sortOrder=asc']) {
    walking.push([path, sort]);
  }
}
// An empty search is no filter.
walking.push(['/contacts', 'search='], ['/contacts', 'search=%20%20'], ['/deals', 'search=']);
walking.push(
  ['/contacts', 'ownerId=own1'],
  ['/contacts', 'ownerId=own1&sortOrder=asc'],
  ['/companies', 'ownerId=own1'],
  ['/companies', 'ownerId=own1&sortOrder=asc'],
);
// Migration 016: deals of a pipeline, in their default order (updated_at).
walking.push(['/deals', 'pipelineId=p'], ['/deals', 'pipelineId=p&sortOrder=asc'], ['/deals', 'pipelineId=p&sortKey=updatedAt']);

test(`pages that walk their index run on the main connection, and each of their statements walks an index with no sort (${DIALECT})`, async () => {
  for (const [path, query] of walking) {
    const tableName = path.slice(1);
    for (const page of [1, MAIN_MAX_OFFSET / 50 + 1]) {
      const url = `${path}?pageSize=50&page=${page}${query ? '&' + query : ''}`;
      await tenant.api.get(url); // the total is counted (on the read pool) once, then cached
      const { result: res, pooled, main } = await observed(() => tenant.api.get(url));
      assert.equal(res.status, 200, url);
      assert.equal(res.body.data.length, 50, url);
      assert.equal(pooled, 0, `${url}: no statement on the read pool`);
      const pages = main.filter((q) => new RegExp(`from "${tableName}"`).test(q.sql) && /order by/.test(q.sql));
      assert.equal(pages.length, 1, `${url}: its page on the main connection`);
      const plan = await planOfQuery(pages[0]);
      assert.match(plan, new RegExp(`${tableName}__(created|updated|owner|pipeline_updated)\\b`), `${url}\n${plan}`);
      // On SQLite, the walk the probes rely on. PostgreSQL picks by its statistics: here every deal is in pipeline p, so
      // deals__updated with the pipeline as a filter reads the very same entries, and is as good a plan.
      if (query.startsWith('pipelineId=') && DIALECT === 'sqlite')
        assert.match(plan, /deals__pipeline_updated\b/, `${url}: walks its pipeline's entries only\n${plan}`);
      // A deep page read after a sampled position checks the list's change version in its own statement
      // (db/page-samples.ts): PostgreSQL reads the few rows of change_versions as it likes; the page's walk is the rule.
      assert.doesNotMatch(plan.replace(/Seq Scan on change_versions.*/g, ''), /TEMP B-TREE|Sort|Seq Scan/, `${url}\n${plan}`);
    }
    // A cursor page, at any depth, too.
    const q = query ? '&' + query : '';
    const { nextCursor } = (await tenant.api.get(`${path}?pageSize=50&page=${MAIN_MAX_OFFSET / 50 + 1}${q}`)).body.pagination;
    const { result: next, pooled } = await observed(() => tenant.api.get(`${path}?pageSize=50${q}&cursor=${encodeURIComponent(nextCursor)}`));
    assert.equal(next.status, 200);
    assert.equal(pooled, 0, `${path}?${query}: a cursor page, no statement on the read pool`);
  }
});

test(`the rows of a page read on the main connection are the ones the read pool gives (${DIALECT})`, async () => {
  // Same order and content as a page that goes to the pool and selects every row (includeDeleted, with no
  // deleted row): a main-connection page is not a different listing.
  for (const path of ['/contacts', '/companies', '/deals']) {
    for (const page of [1, 7]) {
      const mine = await tenant.api.get(`${path}?pageSize=50&page=${page}&sortKey=createdAt`);
      const pooled = await observed(() => tenant.api.get(`${path}?pageSize=50&page=${page}&sortKey=createdAt&includeDeleted=true`));
      if (t.database.readPool) assert.ok(pooled.pooled > 0, 'the filtered page went to the read pool');
      assert.deepEqual(
        mine.body.data.map((r: { id: string }) => r.id),
        pooled.result.body.data.map((r: { id: string }) => r.id),
        `${path} page ${page}`,
      );
    }
  }
});

// 4. A filtered page of contacts whose walk is one of the above and whose other conditions are cheap to test
//    on a row is first looked for among the first PROBE_ROWS entries of that walk, on the main connection
//    (listing/planner.ts ListingSpec.probes): one statement, which tells whether those entries held the page.

/**
 * A covered probe (the walk's index holds the filter's columns) cuts its page from the walk's entries that pass,
 * offset included, and only then reads those rows by rowid: the entries an offset skips are never read from the
 * table (db/pages.ts compileProbe).
 */
const PAGE_CUT_FROM_ENTRIES = /as "probe_hits" where "probe_hits"\."__hit" limit \(\? \+ 0\)( offset \(\? \+ 0\))?\) as "probe_walk" cross join/;

/** Contacts `oc<i>` in the walk's order (every created_at equal: id descending, as text), with their owner and score. */
const walkOrder = Array.from({ length: CONTACTS }, (_, k) => k + 1)
  .map((i) => ({ id: `oc${i}`, owner: `own${i % OWNERS}`, score: i % 100 }))
  .sort((a, b) => (a.id < b.id ? 1 : -1));

test(`a filtered contact page found within the first ${PROBE_ROWS} entries of its index walk is answered on the main connection, with the read pool's rows (${DIALECT})`, async (c) => {
  if (!t.database.readPool || DIALECT !== 'sqlite') return c.skip('probes run on SQLite with a read pool');
  // `covered`: the walk's index holds every column the filter reads (contacts__owner holds score, migration 015),
  // so the probe tests the filter on the index entries and reads only the rows that pass (db/pages-sqlite.ts walkCoversFilter).
  const cases: { name: string; request: () => Promise<{ status: number; body: any }>; expected: string[]; covered: boolean }[] = [];
  // ownerId eq (walks contacts__owner) + score: half the owner's rows pass.
  const filters = {
    operator: 'AND',
    conditions: [
      { field: 'score', operator: 'gte', value: 50 },
      { field: 'ownerId', operator: 'eq', value: 'own1' },
    ],
  };
  const bySearch = walkOrder.filter((r) => r.owner === 'own1' && r.score >= 50).map((r) => r.id);
  cases.push({
    name: 'search, page 1',
    request: () => tenant.api.post('/contacts/search', { filters, pageSize: 50 }),
    expected: bySearch.slice(0, 50),
    covered: true,
  });
  cases.push({
    name: 'search, page 3',
    request: () => tenant.api.post('/contacts/search', { filters, pageSize: 50, page: 3 }),
    expected: bySearch.slice(100, 150),
    covered: true,
  });
  // No owner: walks contacts__created; a score between tests each row.
  const band = {
    operator: 'AND',
    conditions: [
      { field: 'score', operator: 'gte', value: 20 },
      { field: 'score', operator: 'lt', value: 70 },
    ],
  };
  const byBand = walkOrder.filter((r) => r.score >= 20 && r.score < 70).map((r) => r.id);
  cases.push({
    name: 'score band',
    request: () => tenant.api.post('/contacts/search', { filters: band, pageSize: 50, page: 2 }),
    expected: byBand.slice(50, 100),
    covered: false,
  });
  // The owner's walk and a condition on a column contacts__owner does not hold.
  const named = {
    operator: 'AND',
    conditions: [
      { field: 'ownerId', operator: 'eq', value: 'own1' },
      { field: 'firstName', operator: 'neq', value: 'nobody' },
    ],
  };
  const byOwner = walkOrder.filter((r) => r.owner === 'own1').map((r) => r.id);
  cases.push({
    name: 'owner + first name',
    request: () => tenant.api.post('/contacts/search', { filters: named, pageSize: 50, page: 2 }),
    expected: byOwner.slice(50, 100),
    covered: false,
  });
  for (const { name, request, expected, covered } of cases) {
    const { result: res, pooled, main } = await recordStatements(t.database, request);
    assert.equal(res.status, 200, name);
    assert.deepEqual(
      res.body.data.map((r: { id: string }) => r.id),
      expected,
      name,
    );
    const pages = pooled.filter((q) => /order by/.test(q.sql));
    assert.equal(pages.length, 0, `${name}: the page was not read on the pool`);
    const probes = main.filter((q) => /union all/.test(q.sql));
    assert.equal(probes.length, 1, `${name}: one probe`);
    assert.equal(/"__hit"/.test(probes[0].sql), covered, `${name}: the filter tested on the walk's index entries: ${covered}`);
    if (covered)
      assert.match(
        probes[0].sql,
        PAGE_CUT_FROM_ENTRIES,
        `${name}: the page (and the entries its offset skips) cut from the index entries, before any row is read`,
      );
    const plan = await planOfQuery(probes[0]);
    assert.match(plan, /contacts__(owner|created)\b/, `${name}\n${plan}`);
    assert.doesNotMatch(plan, /TEMP B-TREE|SCAN contacts\b/, `${name}\n${plan}`);
  }
  // Companies and deals: filters of GET, each page the one the pool gives for the same rows (includeDeleted, no deleted row).
  for (const [url, same] of [
    ['/companies?pageSize=50&page=3&updatedAfter=2000-01-01T00:00:00Z', '/companies?pageSize=50&page=3&includeDeleted=true'],
    ['/deals?pageSize=50&page=2&pipelineId=p&isWon=false', '/deals?pageSize=50&page=2&includeDeleted=true'],
  ]) {
    const { result: res, pooled, main } = await recordStatements(t.database, () => tenant.api.get(url));
    assert.equal(res.status, 200, url);
    assert.equal(pooled.filter((q) => /order by/.test(q.sql)).length, 0, `${url}: not on the pool`);
    const probes = main.filter((q) => /union all/.test(q.sql));
    assert.equal(probes.length, 1, `${url}: probed`);
    if (url.includes('pipelineId=')) {
      // Migration 016: the pipeline's entries of deals__pipeline_updated, whose `is_won` the probe tests on them.
      assert.match(await planOfQuery(probes[0]), /deals__pipeline_updated\b/, url);
      assert.match(probes[0].sql, /"__hit"/, `${url}: isWon tested on the walk's index entries`);
      assert.match(probes[0].sql, PAGE_CUT_FROM_ENTRIES, `${url}: the 50 entries page 2 skips are not read from the table`);
    }
    const expected = (await tenant.api.get(same)).body.data.map((r: { id: string }) => r.id);
    assert.deepEqual(
      res.body.data.map((r: { id: string }) => r.id),
      expected,
      url,
    );
  }
  // Walked by cursor, the probed pages are the list, to its end (the last page is found short, at the walk's end).
  const most = {
    operator: 'AND',
    conditions: [
      { field: 'ownerId', operator: 'eq', value: 'own2' },
      { field: 'score', operator: 'gte', value: 10 },
    ],
  };
  const all = walkOrder.filter((r) => r.owner === 'own2' && r.score >= 10).map((r) => r.id);
  const walked: string[] = [];
  let cursor: string | null = null;
  let pooledPages = 0;
  do {
    const { result: res, pooled } = await recordStatements(t.database, () =>
      tenant.api.post('/contacts/search', { filters: most, pageSize: 100, ...(cursor ? { cursor } : {}) }),
    );
    assert.equal(res.status, 200);
    pooledPages += pooled.filter((q) => /order by/.test(q.sql)).length;
    walked.push(...res.body.data.map((r: { id: string }) => r.id));
    cursor = res.body.pagination.nextCursor;
  } while (cursor);
  assert.equal(walked.length, all.length);
  assert.deepEqual(walked, all);
  assert.equal(pooledPages, 0, 'every page was probed');
});

test(`a filtered contact page not found within the first ${PROBE_ROWS} entries of its walk is read on the read pool, whole (${DIALECT})`, async (c) => {
  if (!t.database.readPool || DIALECT !== 'sqlite') return c.skip('probes run on SQLite with a read pool');
  // Score 99 and owner 3: 1 row in 400 of the walk. The probe reads PROBE_ROWS entries, finds ~1, and sees the walk go on.
  const filters = {
    operator: 'AND',
    conditions: [
      { field: 'ownerId', operator: 'eq', value: 'own3' },
      { field: 'score', operator: 'eq', value: 99 },
    ],
  };
  const expected = walkOrder.filter((r) => r.owner === 'own3' && r.score === 99).map((r) => r.id);
  const first = await recordStatements(t.database, () => tenant.api.post('/contacts/search', { filters, pageSize: 50 }));
  assert.equal(first.result.status, 200);
  assert.deepEqual(
    first.result.body.data.map((r: { id: string }) => r.id),
    expected.slice(0, 50),
  );
  assert.equal(first.main.filter((q) => /union all/.test(q.sql)).length, 1, 'probed once');
  assert.equal(first.pooled.filter((q) => /order by/.test(q.sql)).length, 1, 'then read on the pool');
  // The same list again goes straight to the pool for a while (no second probe in vain).
  const again = await recordStatements(t.database, () => tenant.api.post('/contacts/search', { filters, pageSize: 50, page: 2 }));
  assert.deepEqual(
    again.result.body.data.map((r: { id: string }) => r.id),
    expected.slice(50, 100),
  );
  assert.equal(again.main.filter((q) => /union all/.test(q.sql)).length, 0, 'no probe');
  // A miss deep in a list does not keep its shallower pages from the probe.
  const half = {
    operator: 'AND',
    conditions: [
      { field: 'ownerId', operator: 'eq', value: 'own3' },
      { field: 'score', operator: 'lt', value: 50 },
    ],
  };
  const deep = await recordStatements(t.database, () => tenant.api.post('/contacts/search', { filters: half, pageSize: 50, page: PROBE_ROWS / 50 }));
  assert.equal(deep.main.filter((q) => /union all/.test(q.sql)).length, 1, 'the deep page was probed');
  assert.equal(deep.pooled.filter((q) => /order by/.test(q.sql)).length, 1, 'and read on the pool');
  const shallow = await recordStatements(t.database, () => tenant.api.post('/contacts/search', { filters: half, pageSize: 50, page: 2 }));
  assert.equal(shallow.pooled.filter((q) => /order by/.test(q.sql)).length, 0, 'page 2 was found by its probe');
  // A filter that tests tags reads record_tags: never probed.
  const tagged = await recordStatements(t.database, () =>
    tenant.api.post('/contacts/search', { filters: { operator: 'AND', conditions: [{ field: 'tags', operator: 'contains', value: 'octag3' }] }, pageSize: 50 }),
  );
  assert.equal(tagged.result.status, 200);
  assert.equal(tagged.main.filter((q) => /union all/.test(q.sql)).length, 0, 'a tag filter is not probed');
  assert.ok(tagged.pooled.length > 0);
  // Nor a `contains` on a field with no stored folded column: SQLite folds each row's value by a JavaScript call.
  const folded = await recordStatements(t.database, () =>
    tenant.api.post('/contacts/search', {
      filters: { operator: 'AND', conditions: [{ field: 'firstName', operator: 'contains', value: 'f1' }] },
      pageSize: 50,
    }),
  );
  assert.equal(folded.result.status, 200);
  assert.equal(folded.main.filter((q) => /union all/.test(q.sql)).length, 0, 'a contains folded in SQL is not probed');
  assert.equal(folded.pooled.filter((q) => /order by/.test(q.sql)).length, 1);
  // A row test costs what its comparisons cost: a list of PROBE_MAX_ROW_COST values is probed, one more is not.
  // (A page of that many rows: the probe finds it whole.)
  for (const n of [PROBE_MAX_ROW_COST, PROBE_MAX_ROW_COST + 1]) {
    const ids = walkOrder.slice(0, n).map((r) => r.id);
    const listed = await recordStatements(t.database, () =>
      tenant.api.post('/contacts/search', { filters: { operator: 'AND', conditions: [{ field: 'id', operator: 'in', value: ids }] }, pageSize: n }),
    );
    assert.equal(listed.result.status, 200);
    assert.deepEqual(
      listed.result.body.data.map((r: { id: string }) => r.id),
      ids,
      `${n} values`,
    );
    const probed = n <= PROBE_MAX_ROW_COST;
    assert.equal(listed.main.filter((q) => /union all/.test(q.sql)).length, probed ? 1 : 0, `${n} values: probed ${probed}`);
    assert.equal(listed.pooled.filter((q) => /order by/.test(q.sql)).length, probed ? 0 : 1, `${n} values: on the pool ${!probed}`);
  }
});

// 5. A page by number on the read pool whose total is not cached reads the list once for both, up to
//    COUNTED_ROWS rows (db/pages.ts compileCounted): a filter no index answers no longer reads its walk twice.
test(`a page by number on the read pool takes its total from the rows it read, when the list has fewer than ${COUNTED_ROWS} (${DIALECT})`, async (c) => {
  if (!t.database.readPool || DIALECT !== 'sqlite') return c.skip('counted pages run on SQLite with a read pool');
  const counted = (q: RanStatement) => /counted_rows/.test(q.sql);
  const counts = (q: RanStatement) => /^select count\(\*\)/.test(q.sql);
  // `f123` is in the search text of oc123, oc1230–oc1239 and oc12300–oc12399: 111 contacts.
  const matches = walkOrder.filter((r) => r.id.startsWith('oc123')).map((r) => r.id);
  assert.equal(matches.length, 111);
  const first = await recordStatements(t.database, () => tenant.api.get('/contacts?search=f123&pageSize=50&page=2'));
  assert.equal(first.result.status, 200);
  assert.deepEqual(
    first.result.body.data.map((r: { id: string }) => r.id),
    matches.slice(50, 100),
  );
  assert.equal(first.result.body.pagination.total, 111);
  assert.equal(first.result.body.pagination.totalPages, 3);
  assert.deepEqual(first.pooled.map(counted), [true], 'one statement: the page and its total');
  const plan = await planOfQuery(first.pooled[0]);
  assert.match(plan, /MATERIALIZE counted_rows/, plan);
  assert.match(plan, /SEARCH contacts USING INTEGER PRIMARY KEY \(rowid=\?\)/, `only the page's rows are read from the table\n${plan}`);
  // The total is cached now: the next page is the plain statement, and nothing counts.
  const next = await recordStatements(t.database, () => tenant.api.get('/contacts?search=f123&pageSize=50&page=3'));
  assert.deepEqual(
    next.result.body.data.map((r: { id: string }) => r.id),
    matches.slice(100),
  );
  assert.equal(next.result.body.pagination.total, 111);
  assert.deepEqual(next.pooled.map(counted), [false]);
  assert.equal(next.pooled.filter(counts).length, 0);
  // Companies and deals alike (`c112`: c112, c1120–c1129, c11200–c11299; `d71`: d71, d710–d719, d7100–d7199).
  for (const [path, n] of [
    ['/companies?search=c112', 111],
    ['/deals?search=d71', 111],
  ] as const) {
    const r = await recordStatements(t.database, () => tenant.api.get(`${path}&pageSize=50&page=3`));
    assert.equal(r.result.status, 200, path);
    assert.equal(r.result.body.pagination.total, n, path);
    assert.equal(r.result.body.data.length, n - 100, path);
    assert.deepEqual(r.pooled.map(counted), [true], path);
    const pooled = await tenant.api.get(`${path}&pageSize=50&page=3&includeDeleted=true`);
    assert.deepEqual(
      r.result.body.data.map((x: { id: string }) => x.id),
      pooled.body.data.map((x: { id: string }) => x.id),
      path,
    );
  }
  // `f12`: 1,111 contacts, more than the statement reads. It gives the page, and the total is counted apart.
  const many = walkOrder.filter((r) => r.id.startsWith('oc12')).map((r) => r.id);
  const big = await recordStatements(t.database, () => tenant.api.get('/contacts?search=f12&pageSize=50&page=4'));
  assert.deepEqual(
    big.result.body.data.map((r: { id: string }) => r.id),
    many.slice(150, 200),
  );
  assert.equal(big.result.body.pagination.total, many.length);
  assert.deepEqual(big.pooled.map(counted), [true, false]);
  assert.equal(big.pooled.filter(counts).length, 1);
  // After a write (the total is stale), that list skips the counted statement for a while: page, then count.
  assert.equal((await tenant.api.post('/contacts', { firstName: 'Zed' })).status, 201);
  const again = await recordStatements(t.database, () => tenant.api.get('/contacts?search=f12&pageSize=50&page=5'));
  assert.deepEqual(
    again.result.body.data.map((r: { id: string }) => r.id),
    many.slice(200, 250),
  );
  assert.deepEqual(again.pooled.map(counted), [false, false]);
  assert.equal(again.pooled.filter(counts).length, 1);
});

test(`any other filter, a sort with no index, or an offset past ${MAIN_MAX_OFFSET} reads its page on the read pool (${DIALECT})`, async (c) => {
  if (!t.database.readPool) return c.skip('no read pool (in-memory database)');
  const others = [
    // Not probed: a sort with no index, deleted rows, an offset past the probe or the main connection's depth.
    '/contacts?sortKey=firstName',
    '/contacts?ownerId=own1&sortKey=updatedAt',
    '/contacts?includeDeleted=true',
    // (A deep page by number of an unfiltered list reads after a sampled position on the main connection once its
    // list is sampled, db/page-samples.ts, and on the read pool before: test/http/pages-by-number.test.ts.)
    `/contacts?search=F&page=${PROBE_ROWS / 50 + 1}&pageSize=50`,
    '/companies?sortKey=name',
    // A pipeline's deals walk deals__pipeline_updated only in its order (updated_at; migration 016).
    '/deals?pipelineId=none&sortKey=createdAt',
    // Probed, but the first PROBE_ROWS entries of the walk do not hold the page (on SQLite; PostgreSQL never probes).
    '/contacts?search=F12',
    '/contacts?updatedAfter=2026-02-01T00:00:00Z',
    '/companies?search=C12',
    '/deals?ownerId=nobody',
    '/deals?pipelineId=p&isWon=true',
    '/deals?isWon=true',
  ];
  for (const url of others) {
    const { result: res, pooled } = await recordStatements(t.database, () => tenant.api.get(url));
    assert.equal(res.status, 200, url);
    // A deep page by number may also start the list's sampling in the background (db/page-samples.ts: row_number()):
    // that statement is no read of the page.
    assert.equal(pooled.filter((q) => /order by/.test(q.sql) && !/row_number\(\)/.test(q.sql)).length, 1, `${url}: its page on the read pool`);
  }
  const { pooled } = await recordStatements(t.database, () =>
    tenant.api.post('/contacts/search', { filters: { operator: 'AND', conditions: [{ field: 'firstName', operator: 'eq', value: 'F1' }] } }),
  );
  assert.equal(pooled.filter((q) => /order by/.test(q.sql)).length, 1, 'POST /contacts/search with a filter matching one row: on the read pool');
});

const tagsOf = (id: string) => {
  const i = Number(id.slice(2));
  return [...(i % 3 === 0 ? ['octag3'] : []), ...(i % 5 === 0 ? ['octag5'] : [])];
};

test(`a page's rows carry their own tags, read from their rows with no subquery on record_tags (${DIALECT})`, async () => {
  const urls = [
    // On the main connection (walks its index) …
    '/contacts?pageSize=50&page=20',
    '/companies?pageSize=50&page=20',
    '/deals?pageSize=50&page=20',
    '/contacts?pageSize=50&page=20&ownerId=own1',
    // … and on the read pool.
    '/contacts?pageSize=50&page=20&ownerId=own1&sortKey=updatedAt',
    '/deals?pageSize=50&page=20&ownerId=own1',
    `/contacts?pageSize=50&page=${MAIN_MAX_OFFSET / 50 + 3}`,
  ];
  for (const url of urls) {
    const table = url.slice(1, url.indexOf('?'));
    const { result: res, pooled, main } = await recordStatements(t.database, () => tenant.api.get(url));
    assert.equal(res.status, 200, url);
    const rows = res.body.data as { id: string; tags: string[] }[];
    assert.equal(rows.length, 50, url);
    assert.ok(
      rows.some((r) => r.tags.length === 2),
      `${url}: the page has tagged rows`,
    );
    for (const r of rows) assert.deepEqual(r.tags, tagsOf(r.id), `${url}: ${r.id}`);
    // The page is the one the same list gives by cursor: the order is kept.
    // The sampling a deep page may start in the background (db/page-samples.ts: row_number()) is no read of the page.
    const read = [...pooled, ...main].filter((q) => new RegExp(`from "${table}"`).test(q.sql) && /order by/.test(q.sql) && !/row_number\(\)/.test(q.sql));
    // A probe that could not hold the page (4.) reads no tags either.
    for (const q of read) assert.doesNotMatch(q.sql, /record_tags/, url);
    const pages = read.filter((q) => !/union all/.test(q.sql));
    assert.equal(pages.length, 1, url);
    // Each reads the record its row stores, tags included (migrations 014 and 017).
    assert.match(pages[0].sql, /"doc"/, url);
  }
});

test(`a page by number and the same list walked by cursor give the same rows in the same order (${DIALECT})`, async () => {
  for (const list of ['/contacts?pageSize=50&ownerId=own1', '/deals?pageSize=50&sortKey=updatedAt&sortOrder=asc', '/companies?pageSize=50&sortKey=name']) {
    const byCursor: string[] = [];
    let cursor: string | null = null;
    for (let k = 0; k < 4; k++) {
      const res = await tenant.api.get(`${list}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      byCursor.push(...res.body.data.map((r: { id: string }) => r.id));
      cursor = res.body.pagination.nextCursor;
    }
    const byPage: string[] = [];
    for (let page = 1; page <= 4; page++) byPage.push(...(await tenant.api.get(`${list}&page=${page}`)).body.data.map((r: { id: string }) => r.id));
    assert.equal(byPage.length, 200, list);
    assert.deepEqual(byPage, byCursor, list);
  }
});

// 5. SQLite's main connection reads a page of deals as one BLOB, each deal's contact and company spliced into its
//    record by the statement (db/pages-sqlite.ts pageAsBlob with ListingSpec.blobRecord, deals.repo.ts dealRecordSql): two
//    lookups by primary key a deal. The aggregate uses each record twice (the BLOB and its byte length), so the
//    record is computed in a subquery SQLite cannot flatten into it: once a row, not twice.
test(`a page of deals read as one BLOB computes each deal's record once (${DIALECT})`, async (c) => {
  if (DIALECT !== 'sqlite') return c.skip("BLOB pages are SQLite's main connection's");
  const first = await tenant.api.get('/deals?pageSize=50');
  const urls = [
    '/deals?pageSize=50',
    '/deals?pageSize=50&page=3',
    '/deals?pageSize=50&page=2&pipelineId=p&isWon=false', // a probe
    `/deals?pageSize=50&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`, // one row more
  ];
  // Each page's statement again, on a connection of its own whose instr() counts its calls: five a deal with a
  // contact (dealRecordSql).
  const [{ file }] = (await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(db)).rows;
  const other = new SqliteDatabase(file, { readonly: true });
  let calls = 0;
  other.function('instr', { deterministic: true }, (haystack: unknown, needle: unknown) => {
    calls++;
    return String(haystack).indexOf(String(needle)) + 1;
  });
  try {
    for (const url of urls) {
      const { result: res, main } = await recordStatements(t.database, () => tenant.api.get(url));
      assert.equal(res.status, 200, url);
      const blobs = main.filter((q) => /group_concat/.test(q.sql) && /'"contact"/.test(q.sql));
      assert.equal(blobs.length, 1, `${url}: one BLOB statement splices the page's records`);
      calls = 0;
      other.prepare(blobs[0].sql).all(...blobs[0].parameters);
      const rows = url.includes('cursor=') ? 51 : 50;
      assert.equal(calls, 5 * rows, `${url}: ${calls / 5} records computed for ${rows} rows`);
      assert.equal(res.body.data.length, 50, url);
      for (const deal of res.body.data) assert.equal(deal.contact?.id, deal.contactId, `${url}: ${deal.id} has its contact`);
    }
  } finally {
    other.close();
  }
});
