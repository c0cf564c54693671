// test: alone (it seeds 100,000 contacts; see scripts/test.mjs)
// The cost of POST /contacts/search (DESIGN §4): filters cost O(rows), never rows × filter values.
// Plans are asserted, never times.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { compileFilter } from '../../src/db/filter-sql.js';
import type { PropertyDef } from '../../src/domain/properties.js';
import { DIALECT, newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';
import { multiOf, seedContacts, tagId, tagsOf, unseedContacts } from '../helpers/bulk.js';

const N = 100_000;
// PostgreSQL keeps its database across runs: the rows go before the app (registered next) closes it.
after(async () => {
  if (big) await unseedContacts(db, big.tenantId);
});
// Plans, not clocks: a deadline generous enough for 100,000 contacts on a loaded two-core machine (the deadline
// itself is tested in test/http/query-deadline.test.ts and test/db/read-deadline.test.ts).
const t = await testApp({ QUERY_TIMEOUT_MS: '120000' });
const db = t.database.db;
const group = (...conditions: unknown[]) => ({ operator: 'AND', conditions });
const range = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));

let big: Tenant;
let multi: string;
before(async () => {
  big = await newTenant(t);
  multi = big.refs.contact_multi_select;
  await seedContacts(db, big.tenantId, N, multi);
  if (DIALECT === 'postgres') await sql`analyze contacts, record_tags`.execute(db);
  else await t.database.optimize();
});

/** The ids bk<i> (1…N) for which `pred(i)` holds. */
function expected(pred: (i: number) => boolean): Set<string> {
  const out = new Set<string>();
  for (let i = 1; i <= N; i++) if (pred(i)) out.add(`bk${i}`);
  return out;
}

/** Searches and checks the total and that every id of the first page is expected. */
async function check(api: Client, filters: unknown, want: Set<string>) {
  const r = await api.post('/contacts/search', { filters, pageSize: 100 });
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
  assert.equal(r.body.pagination.total, want.size);
  assert.equal(r.body.data.length, Math.min(100, want.size));
  for (const c of r.body.data) assert.ok(want.has(c.id), c.id);
}

/**
 * The plan of the search's filter, as compileFilter produces it, one line a row: of the page query
 * (sorted, 50 rows) or of its count.
 */
async function planOf(filter: unknown, count = false): Promise<string> {
  const properties = new Map<string, PropertyDef>([[multi, { id: multi, type: 'multi_select' }]]);
  const where = compileFilter(filter, 'contact', { dialect: t.database.dialect, tenantId: big.tenantId, properties });
  const base = db.selectFrom('contacts').where('tenant_id', '=', big.tenantId).where('deleted_at', 'is', null).where(where);
  const q = count
    ? base.select((eb) => eb.fn.countAll().as('n')).compile()
    : base.select('id').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(50).compile();
  const explain = DIALECT === 'postgres' ? 'explain ' : 'explain query plan ';
  const rows = (await db.executeQuery({ ...q, sql: explain + q.sql })).rows as Record<string, unknown>[];
  return rows.map((r) => String(r['QUERY PLAN'] ?? r.detail)).join('\n');
}

/**
 * The tag set is evaluated once, never rescanned per row: SQLite has no CORRELATED subquery; PostgreSQL
 * has no plain SubPlan (only a hashed one), and its anti/semi joins either hash the set, merge it with the
 * rows by id (each side read once; chosen on some statistics since the rows grew a search column), or
 * probe the record_tags primary key by the row's id (a bounded index lookup, not a scan).
 */
function assertTagSetOnce(plan: string) {
  if (DIALECT === 'sqlite') {
    assert.doesNotMatch(plan, /CORRELATED/, plan);
    assert.match(plan, /LIST SUBQUERY|SEARCH ft USING/, plan);
    return;
  }
  assert.doesNotMatch(plan.replace(/hashed SubPlan/g, ''), /SubPlan/, plan);
  if (/Hash (Anti |Semi |Right Anti |Right Semi )?Join|hashed SubPlan/.test(plan)) return;
  // A merge join reads each side once, in key order: the tag set (aggregated by object id) and the rows.
  if (/Merge (Anti |Semi |Right Anti |Right Semi )?Join/.test(plan)) {
    assert.match(plan, /Merge Cond: \(contacts\.id = ft\.object_id\)/, plan);
    return;
  }
  // A nested loop either reads the tag set once as its outer side, or probes it by the row's id.
  assert.match(plan, /Nested Loop/, plan);
  const driven = plan.indexOf('on record_tags ft') < plan.indexOf('on contacts');
  if (!driven) assert.match(plan, /Index (Only )?Scan using record_tags_pkey on record_tags ft[\s\S]*object_id = contacts\.id/, plan);
}

const TAGS = range(1000, (i) => tagId(i));
const inTags = new Set(TAGS);

test(`search cost: tags notIn 1,000 ids on ${N} contacts is right, and the tag set is computed once (${DIALECT})`, async () => {
  await check(
    big.api,
    group({ field: 'tags', operator: 'notIn', value: TAGS }),
    expected((i) => !tagsOf(i).some((x) => inTags.has(x))),
  );
  const filter = group({ field: 'tags', operator: 'notIn', value: TAGS });
  assertTagSetOnce(await planOf(filter));
  const counted = await planOf(filter, true);
  assertTagSetOnce(counted);
  if (DIALECT === 'sqlite') assert.match(counted, /LIST SUBQUERY/, counted);
  else assert.match(counted, /Hash Anti Join|hashed SubPlan/, counted);
});

test(`search cost: tags in 1,000 ids, and contains / exists / notExists, on ${N} contacts (${DIALECT})`, async () => {
  await check(
    big.api,
    group({ field: 'tags', operator: 'in', value: TAGS }),
    expected((i) => tagsOf(i).some((x) => inTags.has(x))),
  );
  await check(
    big.api,
    group({ field: 'tags', operator: 'contains', value: tagId(7) }),
    expected((i) => tagsOf(i).includes(tagId(7))),
  );
  await check(
    big.api,
    group({ field: 'tags', operator: 'notExists' }),
    expected((i) => tagsOf(i).length === 0),
  );
  await check(
    big.api,
    group({ field: 'tags', operator: 'exists' }),
    expected((i) => tagsOf(i).length > 0),
  );
  for (const operator of ['in', 'contains', 'exists', 'notExists']) {
    const condition =
      operator === 'in'
        ? { field: 'tags', operator, value: TAGS }
        : operator === 'contains'
          ? { field: 'tags', operator, value: tagId(7) }
          : { field: 'tags', operator };
    assertTagSetOnce(await planOf(group(condition)));
    assertTagSetOnce(await planOf(group(condition), true));
  }
});

for (const n of [994, 1000]) {
  test(`search cost: multi_select in / notIn with ${n} values answer 200, right, with one membership test (${DIALECT})`, async () => {
    // Two real values among junk, so the answer tells membership apart.
    const values = ['v3', 'w5', ...range(n - 2, (i) => `junk${i}`)];
    const any = (i: number) => (multiOf(i) ?? []).some((v) => v === 'v3' || v === 'w5');
    const field = `customProperties.${multi}`;
    await check(big.api, group({ field, operator: 'in', value: values }), expected(any));
    await check(
      big.api,
      group({ field, operator: 'notIn', value: values }),
      expected((i) => !any(i)),
    );
    for (const operator of ['in', 'notIn']) {
      const text = await planOf(group({ field, operator, value: values }));
      const scans = text.split('\n').filter((l) => (DIALECT === 'sqlite' ? /json_each/.test(l) : /Function Scan on jsonb_path_query/.test(l)));
      assert.equal(scans.length, 1, text.slice(0, 2000));
    }
  });
}

test(`search cost: ten multi_select notIn of 900 values exceed the complexity budget; eight answer (${DIALECT})`, async () => {
  const field = `customProperties.${multi}`;
  const conditions = (k: number) => range(k, (c) => `${c}`).map((c) => ({ field, operator: 'notIn', value: range(900, (i) => `x${c}-${i}`) }));
  const r = await big.api.post('/contacts/search', { filters: group(...conditions(10)) });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'validation_failed');
  assert.deepEqual(
    r.body.details.map((d: any) => d.field),
    ['filters'],
  );
  assert.match(r.body.details[0].message, /complexity budget of 100/);
  await check(
    big.api,
    group(...conditions(8)),
    expected(() => true),
  );
});

test(`search: every tags and multi_select operator on a small hand-made set, empty values included (${DIALECT})`, async () => {
  const { api, refs } = await newTenant(t);
  const tag = async (name: string) => (await api.post('/tags', { name })).body.id as string;
  const [vip, cold, unused] = [await tag('VIP'), await tag('Cold'), await tag('Unused')];
  const m = refs.contact_multi_select;
  const make = async (firstName: string, tags: string[], value?: string[]) => {
    const r = await api.post('/contacts', { firstName, tags, ...(value ? { customProperties: { [m]: value } } : {}) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  };
  const a = await make('A', [vip], ['smb']);
  const b = await make('B', [vip, cold], ['smb', 'ent']);
  const c = await make('C', []);
  const d = await make('D', [cold], []);
  const ids = async (condition: Record<string, unknown>) => {
    const r = await api.post('/contacts/search', { filters: group(condition) });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data.map((x: any) => x.id).sort();
  };
  const s = (...xs: string[]) => xs.sort();
  const cases: [Record<string, unknown>, string[]][] = [
    [{ field: 'tags', operator: 'contains', value: cold }, s(b, d)],
    [{ field: 'tags', operator: 'contains', value: unused }, []],
    [{ field: 'tags', operator: 'in', value: [cold, unused] }, s(b, d)],
    [{ field: 'tags', operator: 'notIn', value: [cold, unused] }, s(a, c)],
    [{ field: 'tags', operator: 'notIn', value: [unused] }, s(a, b, c, d)],
    [{ field: 'tags', operator: 'exists' }, s(a, b, d)],
    [{ field: 'tags', operator: 'notExists' }, s(c)],
    [{ field: `customProperties.${m}`, operator: 'contains', value: 'ent' }, s(b)],
    [{ field: `customProperties.${m}`, operator: 'in', value: ['ent', 'nope'] }, s(b)],
    [{ field: `customProperties.${m}`, operator: 'in', value: ['smb'] }, s(a, b)],
    [{ field: `customProperties.${m}`, operator: 'notIn', value: ['ent'] }, s(a, c, d)],
    [{ field: `customProperties.${m}`, operator: 'notIn', value: ['nope'] }, s(a, b, c, d)],
    [{ field: `customProperties.${m}`, operator: 'exists' }, s(a, b, d)],
    [{ field: `customProperties.${m}`, operator: 'notExists' }, s(c)],
  ];
  for (const [condition, want] of cases) assert.deepEqual(await ids(condition), want, JSON.stringify(condition));
});
