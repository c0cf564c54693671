// Cost of hostile filters (the isolation issue): seeds N contacts (default 100,000) in a fresh tenant,
// then times `count(*)` of each filter compiled by compileFilter and prints its plan.
//   SQLite:      node --import tsx bench/filters.ts
//   PostgreSQL:  DATABASE_URL=postgres://… node --import tsx bench/filters.ts
// Env: N (rows), ONLY (comma-separated case names), PLAN=1 (print plans).
import { sql } from 'kysely';
import { applySetup } from '../src/admin/setup.js';
import { createDatabase, migrate } from '../src/db/index.js';
import { compileFilter } from '../src/db/filter-sql.js';
import type { PropertyDef } from '../src/domain/properties.js';
import { STANDARD_SETUP } from '../test/helpers/fixtures.js';
import { seedContacts, tagId, unseedContacts } from '../test/helpers/bulk.js';

const N = Number(process.env.N ?? 100_000);
const only = process.env.ONLY?.split(',');
const database = createDatabase({ databaseUrl: process.env.DATABASE_URL ?? '', dataDir: '' }, { sqliteFile: ':memory:' });
await migrate(database);
const { db, dialect } = database;
const setup = await applySetup(db, STANDARD_SETUP());
const tenantId = setup.tenantId;
const multi = setup.refs.contact_multi_select;
const text = setup.refs.contact_text;
const properties = new Map<string, PropertyDef>([
  [multi, { id: multi, type: 'multi_select' }],
  [text, { id: text, type: 'text' }],
]);
let t0 = performance.now();
await seedContacts(db, tenantId, N, multi);
if (dialect.name === 'postgres') await sql`analyze contacts, record_tags`.execute(db);
else await database.optimize();
console.log(`${dialect.name}: seeded ${N} contacts in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const vals = <T = string>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
const group = (operator: 'AND' | 'OR', conditions: unknown[]) => ({ operator, conditions });
const M = `customProperties.${multi}`;
const cases: Record<string, unknown> = {
  tagsNotIn1000: group('AND', [{ field: 'tags', operator: 'notIn', value: vals(1000, (i) => tagId(i)) }]),
  tagsIn1000: group('AND', [{ field: 'tags', operator: 'in', value: vals(1000, (i) => tagId(i)) }]),
  tagsExists: group('AND', [{ field: 'tags', operator: 'exists' }]),
  tagsNotExists: group('AND', [{ field: 'tags', operator: 'notExists' }]),
  multiNotIn10x900: group(
    'AND',
    vals(10, (k) => k).map((k) => ({ field: M, operator: 'notIn', value: vals(900, (i) => `x${k}-${i}`) })),
  ),
  multiNotIn8x900: group(
    'AND',
    vals(8, (k) => k).map((k) => ({ field: M, operator: 'notIn', value: vals(900, (i) => `x${k}-${i}`) })),
  ),
  multiIn994: group('AND', [{ field: M, operator: 'in', value: vals(994, (i) => `v${i}`) }]),
  multiNotIn1000: group('AND', [{ field: M, operator: 'notIn', value: vals(1000, (i) => `v${i + 10}`) }]),
  textIn1000: group('AND', [{ field: 'firstName', operator: 'in', value: vals(1000, (i) => `First${i * 7}`) }]),
  textNotIn1000: group('AND', [{ field: 'firstName', operator: 'notIn', value: vals(1000, (i) => `First${i * 7}`) }]),
  idNotIn1000: group('AND', [{ field: 'id', operator: 'notIn', value: vals(1000, (i) => `bk${i * 3}`) }]),
  scoreIn1000: group('AND', [{ field: 'score', operator: 'in', value: vals(1000, (i) => i / 10) }]),
  // The worst the caps allow without a value list: 50 substring tests per row, OR-ed (none matches).
  propContains50: group(
    'OR',
    vals(50, (k) => k).map((k) => ({ field: `customProperties.${text}`, operator: 'contains', value: `zz${k}` })),
  ),
  textContains50: group(
    'OR',
    vals(50, (k) => k).map((k) => ({ field: k % 2 ? 'firstName' : 'lastName', operator: 'contains', value: `zz${k}` })),
  ),
  multiContains50: group(
    'OR',
    vals(50, (k) => k).map((k) => ({ field: M, operator: 'contains', value: `zz${k}` })),
  ),
  tagsNotIn50x200: group(
    'AND',
    vals(50, (k) => k).map((k) => ({ field: 'tags', operator: 'notIn', value: vals(200, (i) => tagId(1000 + k * 200 + i)) })),
  ),
  tagsIn50x200: group(
    'OR',
    vals(50, (k) => k).map((k) => ({ field: 'tags', operator: 'in', value: vals(200, (i) => `nope${k}-${i}`) })),
  ),
  // 10,000 values: ten conditions of 1,000, mixed.
  mixed10000: group(
    'AND',
    vals(10, (k) => k).map((k) => ({ field: k % 3 === 0 ? 'tags' : k % 3 === 1 ? M : 'firstName', operator: 'notIn', value: vals(1000, (i) => `q${k}-${i}`) })),
  ),
};

for (const [name, filter] of Object.entries(cases)) {
  if (only && !only.includes(name)) continue;
  let where;
  try {
    where = compileFilter(filter, 'contact', { dialect, tenantId, properties });
  } catch (err) {
    console.log(`${dialect.name} ${name}: refused: ${JSON.stringify((err as { extra?: unknown }).extra)}`);
    continue;
  }
  const q = db
    .selectFrom('contacts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .where(where);
  if (process.env.PLAN) {
    const c = q.compile();
    const explain = dialect.name === 'postgres' ? `explain ${c.sql}` : `explain query plan ${c.sql}`;
    const rows = (await db.executeQuery({ ...c, sql: explain, query: c.query }).catch((e) => ({ rows: [{ error: String(e) }] }))).rows as any[];
    console.log(`--- ${name}\n` + rows.map((r) => r['QUERY PLAN'] ?? r.detail ?? JSON.stringify(r)).join('\n'));
  }
  t0 = performance.now();
  try {
    const r = await q.executeTakeFirstOrThrow();
    console.log(`${dialect.name} ${name}: ${(performance.now() - t0).toFixed(0)} ms (count ${r.n})`);
  } catch (err) {
    console.log(`${dialect.name} ${name}: failed after ${(performance.now() - t0).toFixed(0)} ms: ${(err as Error).message}`);
  }
}
await unseedContacts(db, tenantId);
await database.close();
