import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { postgresDialect, sqliteDialect } from '../../src/db/dialect.js';
import { compileFilter, compileFilterParts } from '../../src/db/filter-sql.js';
import { withSearchText } from '../../src/db/search-text.js';
import { validateFilter, type FilterObjectType } from '../../src/domain/filters.js';
import type { PropertyDef } from '../../src/domain/properties.js';
import { ApiError } from '../../src/errors.js';
import { newTenant, testApp, DIALECT } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

// Opened before any test is declared: testApp's `after` hooks (close, then remove the directory) must be
// registered before the file's root test starts, or the runner runs the first one at once.
const t = await testApp();
const db = t.database.db;

// ---------------------------------------------------------------------------------------------
// Validation (pure)

const PROPS = new Map<string, PropertyDef>([
  ['p_num', { id: 'p_num', type: 'number' }],
  ['p_text', { id: 'p_text', type: 'text' }],
  ['p_date', { id: 'p_date', type: 'date' }],
  ['p_dt', { id: 'p_dt', type: 'datetime' }],
  ['p_bool', { id: 'p_bool', type: 'boolean' }],
  ['p_multi', { id: 'p_multi', type: 'multi_select', options: [{ value: 'a', label: 'A' }] }],
]);
const group = (...conditions: unknown[]) => ({ operator: 'AND', conditions });
const issuesOf = (filter: unknown, type: FilterObjectType = 'contact', path?: string) => validateFilter(filter, type, PROPS, path);
const fieldsOf = (filter: unknown, type: FilterObjectType = 'contact') => issuesOf(filter, type).map((i) => i.field);

test('filters: valid filters produce no issues', () => {
  const valid = [
    STANDARD_SETUP().lists[0].filters,
    group(
      { field: 'ownerId', operator: 'eq', value: 'usr_1' },
      { field: 'score', operator: 'gte', value: 80 },
      { field: 'createdAt', operator: 'after', value: '2026-01-01T00:00:00Z' },
    ),
    {
      operator: 'OR',
      conditions: [group({ field: 'email', operator: 'exists' }, { operator: 'OR', conditions: [{ field: 'phone', operator: 'notExists' }] })],
    },
    group(
      { field: 'tags', operator: 'contains', value: 'tag_1' },
      { field: 'tags', operator: 'in', value: ['tag_1', 'tag_2'] },
      { field: 'tags', operator: 'notExists' },
    ),
    group({ field: 'customProperties.p_num', operator: 'lt', value: 3.5 }, { field: 'customProperties.p_text', operator: 'contains', value: 'x' }),
    group(
      { field: 'customProperties.p_date', operator: 'before', value: '2026-01-01' },
      { field: 'customProperties.p_dt', operator: 'gte', value: '2026-01-01T10:00:00+03:00' },
    ),
    group({ field: 'customProperties.p_bool', operator: 'eq', value: false }, { field: 'customProperties.p_multi', operator: 'in', value: ['a'] }),
    group({ field: 'firstName', operator: 'in', value: Array.from({ length: 1000 }, (_, i) => `n${i}`) }),
    group(...Array.from({ length: 50 }, () => ({ field: 'score', operator: 'exists' }))),
  ];
  for (const f of valid) assert.deepEqual(issuesOf(f), [], JSON.stringify(f).slice(0, 200));
  assert.deepEqual(
    issuesOf(
      group(
        { field: 'value', operator: 'gte', value: 10.5 },
        { field: 'isWon', operator: 'eq', value: true },
        { field: 'expectedCloseDate', operator: 'before', value: '2026-12-31' },
      ),
      'deal',
    ),
    [],
  );
  assert.deepEqual(
    issuesOf(group({ field: 'domain', operator: 'eq', value: 'acme.com' }, { field: 'cnpj', operator: 'contains', value: '11.222' }), 'company'),
    [],
  );
});

test('filters: structural problems name the path', () => {
  assert.deepEqual(fieldsOf(null), ['filters']);
  assert.deepEqual(fieldsOf([]), ['filters']);
  assert.deepEqual(fieldsOf('score > 1'), ['filters']);
  assert.deepEqual(fieldsOf({ field: 'score', operator: 'eq', value: 1 }), ['filters'], 'the root must be a group');
  assert.deepEqual(fieldsOf({ conditions: [{ field: 'score', operator: 'exists' }] }), ['filters.operator']);
  assert.deepEqual(fieldsOf({ operator: 'and', conditions: [{ field: 'score', operator: 'exists' }] }), ['filters.operator']);
  assert.deepEqual(fieldsOf({ operator: 'AND', conditions: {} }), ['filters.conditions']);
  assert.deepEqual(fieldsOf({ operator: 'AND', conditions: [] }), ['filters.conditions']);
  assert.deepEqual(fieldsOf({ operator: 'AND', conditions: [{ field: 'score', operator: 'exists' }], extra: 1 }), ['filters.extra']);
  assert.deepEqual(fieldsOf(group(1)), ['filters.conditions[0]']);
  assert.deepEqual(fieldsOf(group({ field: 'score', operator: 'exists', foo: 1 })), ['filters.conditions[0].foo']);
  // Depth: root = 1, so a group at level 4 is refused, at its own path.
  const level3 = group(group(group({ field: 'score', operator: 'exists' })));
  assert.deepEqual(issuesOf(level3), []);
  assert.deepEqual(fieldsOf(group(group(group(group({ field: 'score', operator: 'exists' }))))), ['filters.conditions[0].conditions[0].conditions[0]']);
  // At most 50 conditions in total, counted across groups.
  const many = Array.from({ length: 26 }, () => ({ field: 'score', operator: 'exists' }));
  assert.deepEqual(fieldsOf(group(group(...many), group(...many))), ['filters']);
  assert.match(issuesOf(group(group(...many), group(...many)))[0].message, /50/);
  // A custom path prefix (setup files, lists).
  assert.deepEqual(
    issuesOf(group({ field: 'nope', operator: 'eq', value: 1 }), 'contact', 'lists[0].filters')[0].field,
    'lists[0].filters.conditions[0].field',
  );
});

test('filters: fields and operators by type', () => {
  const cases: [unknown, string, FilterObjectType?][] = [
    [{ field: 'nope', operator: 'eq', value: 1 }, 'field'],
    [{ field: 42, operator: 'eq', value: 1 }, 'field'],
    [{ operator: 'eq', value: 1 }, 'field'],
    [{ field: 'deletedAt', operator: 'exists' }, 'field'],
    [{ field: 'constructor', operator: 'exists' }, 'field'],
    [{ field: 'title', operator: 'exists' }, 'field', 'contact'],
    [{ field: 'firstName', operator: 'exists' }, 'field', 'deal'],
    [{ field: 'customProperties.p_missing', operator: 'exists' }, 'field'],
    [{ field: 'score', operator: 'like', value: 1 }, 'operator'],
    [{ field: 'score' }, 'operator'],
    [{ field: 'score', operator: 'contains', value: 1 }, 'operator'],
    [{ field: 'score', operator: 'after', value: 1 }, 'operator'],
    [{ field: 'email', operator: 'gt', value: 'a' }, 'operator'],
    [{ field: 'id', operator: 'contains', value: 'con' }, 'operator'],
    [{ field: 'tags', operator: 'eq', value: 'tag_1' }, 'operator'],
    [{ field: 'customProperties.p_bool', operator: 'gt', value: true }, 'operator'],
    [{ field: 'customProperties.p_multi', operator: 'eq', value: 'a' }, 'operator'],
    [{ field: 'customProperties.p_text', operator: 'gte', value: 'a' }, 'operator'],
    [{ field: 'customProperties.p_num', operator: 'contains', value: 1 }, 'operator'],
    [{ field: 'isWon', operator: 'gt', value: true }, 'operator', 'deal'],
    // values
    [{ field: 'score', operator: 'exists', value: 1 }, 'value'],
    [{ field: 'score', operator: 'notExists', value: null }, 'value'],
    [{ field: 'score', operator: 'eq' }, 'value'],
    [{ field: 'score', operator: 'eq', value: null }, 'value'],
    [{ field: 'score', operator: 'gte', value: '80' }, 'value'],
    [{ field: 'score', operator: 'gte', value: true }, 'value'],
    [{ field: 'firstName', operator: 'eq', value: 1 }, 'value'],
    [{ field: 'firstName', operator: 'eq', value: 'x'.repeat(1001) }, 'value'],
    [{ field: 'firstName', operator: 'contains', value: '  ' }, 'value'],
    [{ field: 'createdAt', operator: 'after', value: 'yesterday' }, 'value'],
    [{ field: 'createdAt', operator: 'after', value: 1700000000000 }, 'value'],
    [{ field: 'createdAt', operator: 'after', value: '2026-02-30T00:00:00Z' }, 'value'],
    [{ field: 'customProperties.p_date', operator: 'eq', value: '2026-01-01T00:00:00Z' }, 'value'],
    [{ field: 'customProperties.p_bool', operator: 'eq', value: 'true' }, 'value'],
    [{ field: 'customProperties.p_multi', operator: 'contains', value: ['a'] }, 'value'],
    [{ field: 'customProperties.p_num', operator: 'eq', value: '1' }, 'value'],
    [{ field: 'tags', operator: 'contains', value: ['tag_1'] }, 'value'],
    [{ field: 'tags', operator: 'in', value: 'tag_1' }, 'value'],
    [{ field: 'ownerId', operator: 'in', value: [] }, 'value'],
    [{ field: 'ownerId', operator: 'in', value: Array.from({ length: 1001 }, (_, i) => `u${i}`) }, 'value'],
    [{ field: 'isWon', operator: 'eq', value: 1 }, 'value', 'deal'],
    [{ field: 'value', operator: 'gt', value: 10.005 }, 'value', 'deal'],
    [{ field: 'value', operator: 'gt', value: '10' }, 'value', 'deal'],
    [{ field: 'expectedCloseDate', operator: 'after', value: '2026-13-01' }, 'value', 'deal'],
  ];
  for (const [cond, part, type] of cases) {
    const issues = issuesOf(group({ field: 'id', operator: 'exists' }, cond), type ?? 'contact');
    assert.ok(issues.length >= 1, JSON.stringify(cond));
    assert.equal(issues[0].field, `filters.conditions[1].${part}`, JSON.stringify(cond) + ' → ' + JSON.stringify(issues));
  }
  // Items of `in` are named by index.
  assert.deepEqual(fieldsOf(group({ field: 'score', operator: 'in', value: [1, '2'] })), ['filters.conditions[0].value[1]']);
  // Nested paths.
  assert.deepEqual(fieldsOf(group({ field: 'score', operator: 'exists' }, { operator: 'OR', conditions: [{ field: 'score', operator: 'eq', value: 'x' }] })), [
    'filters.conditions[1].conditions[0].value',
  ]);
  // A property of another object type is unknown here.
  assert.deepEqual(
    validateFilter(group({ field: 'customProperties.p_num', operator: 'exists' }), 'deal', new Map()).map((i) => i.field),
    ['filters.conditions[0].field'],
  );
  // Too many problems are capped.
  assert.ok(issuesOf(group(...Array.from({ length: 200 }, () => ({ field: 'x', operator: 'eq', value: 1 })))).length <= 20);
});

test('filters: compileFilter refuses an invalid filter with 400 validation_failed', () => {
  const opts = { dialect: { name: 'sqlite' } as any, tenantId: 't', properties: PROPS };
  assert.throws(
    () => compileFilter(group({ field: 'score', operator: 'gte', value: '80' }), 'contact', opts),
    (e: unknown) =>
      e instanceof ApiError && e.statusCode === 400 && e.code === 'validation_failed' && (e.extra.details as any[])[0].field === 'filters.conditions[0].value',
  );
});

test('filters: the complexity budget counts conditions on tags and custom properties 12, others 1', () => {
  const costly = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      i % 2 ? { field: 'tags', operator: 'exists' } : { field: 'customProperties.p_multi', operator: 'notIn', value: ['a'] },
    );
  const columns = (n: number) => Array.from({ length: n }, () => ({ field: 'score', operator: 'exists' }));
  assert.deepEqual(issuesOf(group(...costly(8), ...columns(4))), [], '8 × 12 + 4 = 100');
  assert.deepEqual(issuesOf(group(...costly(4), ...columns(46))), [], '4 × 12 + 46 = 94, 50 conditions');
  for (const filter of [group(...costly(9)), group(...costly(8), ...columns(5)), { operator: 'OR', conditions: [group(...costly(5)), group(...costly(5))] }]) {
    const issues = issuesOf(filter);
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.equal(issues[0].field, 'filters');
    assert.match(issues[0].message, /complexity budget of 100.*tags or on a custom property costs 12/);
  }
});

test('filters: compileFilterParts takes out an ownerId eq the whole filter requires, and prices a row test', () => {
  const parts = (filter: unknown) => compileFilterParts(filter, 'contact', { dialect: sqliteDialect, tenantId: 't', properties: PROPS });
  const owner = { field: 'ownerId', operator: 'eq', value: 'usr_1' };
  const score = { field: 'score', operator: 'gte', value: 50 };
  // A condition of the root AND: the rest is what is left.
  assert.deepEqual(parts(group(owner)), { ownerId: 'usr_1', rest: undefined, rowCost: 0 });
  const and = parts(group(score, owner));
  assert.equal(and.ownerId, 'usr_1');
  assert.ok(and.rest);
  assert.equal(and.rowCost, 1);
  // Not under an OR, nor deeper than the root's AND, nor another operator.
  assert.equal(parts({ operator: 'OR', conditions: [owner, score] }).ownerId, undefined);
  assert.equal(parts(group(group(owner), score)).ownerId, undefined);
  assert.equal(parts(group({ field: 'ownerId', operator: 'neq', value: 'usr_1' }, score)).ownerId, undefined);
  // Costs: a comparison 1, a LIKE on a stored folded column 2, one per value of a list, tags and SQL folding never.
  assert.equal(parts(group(score, { field: 'score', operator: 'in', value: [1, 2, 3] })).rowCost, 4);
  assert.equal(parts(group({ field: 'tags', operator: 'exists' })).rowCost, Infinity);
  assert.equal(parts(group({ field: 'firstName', operator: 'contains', value: 'a' })).rowCost, Infinity);
  assert.equal(parts(group({ field: 'customProperties.p_text', operator: 'contains', value: 'a' })).rowCost, Infinity);
  assert.equal(
    compileFilterParts(group({ field: 'title', operator: 'contains', value: 'a' }), 'deal', { dialect: sqliteDialect, tenantId: 't', properties: PROPS })
      .rowCost,
    2,
  );
  // The same validation as compileFilter.
  assert.throws(
    () => parts(group({ field: 'score', operator: 'gte', value: '80' })),
    (e: unknown) => e instanceof ApiError && e.statusCode === 400,
  );
});

/** Kysely without a connection, to read the SQL compileFilter produces on each dialect. */
function sqlOf(dialect: 'sqlite' | 'postgres', filter: unknown): { sql: string; parameters: readonly unknown[] } {
  const k = new Kysely<any>({
    dialect: {
      createAdapter: () => (dialect === 'sqlite' ? new SqliteAdapter() : new PostgresAdapter()),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => (dialect === 'sqlite' ? new SqliteIntrospector(db) : new PostgresIntrospector(db)),
      createQueryCompiler: () => (dialect === 'sqlite' ? new SqliteQueryCompiler() : new PostgresQueryCompiler()),
    },
  });
  const where = compileFilter(filter, 'contact', { dialect: dialect === 'sqlite' ? sqliteDialect : postgresDialect, tenantId: 'ten', properties: PROPS });
  return k.selectFrom('contacts').select('id').where(where).compile();
}
const count = (s: string, re: RegExp) => (s.match(re) ?? []).length;

for (const dialect of ['sqlite', 'postgres'] as const) {
  test(`filters: tags compile to one set of record ids per condition, never a subquery per value (${dialect})`, () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `tag_${i}`);
    for (const operator of ['in', 'notIn', 'contains', 'exists', 'notExists']) {
      const value = operator === 'in' || operator === 'notIn' ? ids : operator === 'contains' ? 'tag_1' : undefined;
      const { sql, parameters } = sqlOf(dialect, group({ field: 'tags', operator, value }));
      assert.equal(count(sql, /record_tags/g), 1, `${operator}: ${sql.slice(0, 300)}`);
      assert.equal(count(sql, / or /g), 0, operator);
      // PostgreSQL binds the 1,000 ids as one value (SqlDialect.inStrings): the statement does not grow with them.
      const listed = operator === 'in' || operator === 'notIn' ? (dialect === 'sqlite' ? 1000 : 1) : operator === 'contains' ? 1 : 0;
      assert.equal(parameters.length, 2 + listed);
      if (dialect === 'postgres' && (operator === 'in' || operator === 'notIn')) {
        assert.deepEqual(parameters[2], ids);
        assert.ok(sql.length < 400, sql);
      }
      const positive = operator === 'in' || operator === 'contains' || operator === 'exists';
      if (positive || dialect === 'sqlite') {
        // Uncorrelated: the subquery never names the outer row, so it is evaluated once.
        assert.match(
          sql,
          positive
            ? /"contacts"\."id" in \(select ft\.object_id from record_tags ft where/
            : /"contacts"\."id" not in \(select ft\.object_id from record_tags ft where/,
        );
        assert.doesNotMatch(sql, /ft\.object_id = /);
      } else {
        // NOTE: PostgreSQL plans a correlated NOT EXISTS as a hash anti join (NOT IN cannot be one).
        assert.match(sql, /not exists \(select ft\.object_id from record_tags ft where .* and ft\.object_id = "contacts"\."id"\)/);
      }
    }
  });

  test(`filters: multi_select in/notIn is one membership test for the condition, not one per value (${dialect})`, () => {
    for (const n of [1, 994, 1000]) {
      for (const operator of ['in', 'notIn']) {
        const value = Array.from({ length: n }, (_, i) => `v${i}`);
        const { sql, parameters } = sqlOf(dialect, group({ field: 'customProperties.p_multi', operator, value }));
        const each = dialect === 'sqlite' ? /json_each\(/g : /jsonb_path_query\(/g;
        assert.equal(count(sql, each), 1, `${operator} ${n}: ${sql.slice(0, 300)}`);
        assert.equal(count(sql, / or /g), 0);
        // SQLite: a list of constants; PostgreSQL: the set as one bound value (SqlDialect.inStrings).
        assert.equal(count(sql, dialect === 'sqlite' ? / in \(/g : / = any\(cast\(\$\d+ as text\[\]\)\)/g), 1, sql);
        assert.equal(parameters.length, dialect === 'sqlite' ? n + 1 : 2, 'the JSON path and the values');
        if (operator === 'notIn') assert.match(sql, /^select "id" from "contacts" where \(not exists/);
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Compilation, run against the real database of the current dialect (SQLite, or PostgreSQL with TEST_DB=postgres).

test(`filters: contacts — every operator, tags and custom properties compile and run (${DIALECT})`, async () => {
  const { tenantId, refs } = await newTenant(t);
  const p = (ref: string) => `customProperties.${refs[ref]}`;
  const defs = new Map<string, PropertyDef>();
  for (const r of await db
    .selectFrom('properties')
    .select(['id', 'type', 'options'])
    .where('tenant_id', '=', tenantId)
    .where('object_type', '=', 'contact')
    .execute()) {
    defs.set(r.id, { id: r.id, type: r.type as any, options: r.options ? JSON.parse(r.options) : null });
  }
  const base = { tenant_id: tenantId, company_id: null, deleted_at: null, search_text: '' };
  const rows = [
    {
      id: 'c1',
      first_name: 'Ana',
      last_name: 'Souza',
      email: 'ana@acme.com',
      phone: '+5511987654321',
      owner_id: refs.ana,
      score: 80,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-05T00:00:00.000Z',
      custom_properties: JSON.stringify({
        [refs.contact_number]: 5,
        [refs.contact_text]: 'Hello World',
        [refs.contact_date]: '2026-03-01',
        [refs.contact_datetime]: '2026-03-01T12:00:00.000Z',
        [refs.contact_boolean]: true,
        [refs.contact_multi_select]: ['smb'],
        [refs.contact_select]: 'smb',
        [refs.contact_email]: 'x@y.com',
        [refs.contact_phone]: '+5511933334444',
      }),
    },
    {
      id: 'c2',
      first_name: 'Bruno',
      last_name: null,
      email: null,
      phone: null,
      owner_id: refs.bruno,
      score: 50.5,
      created_at: '2026-02-01T00:00:00.000Z',
      updated_at: '2026-02-05T00:00:00.000Z',
      custom_properties: JSON.stringify({
        [refs.contact_number]: 10,
        [refs.contact_boolean]: false,
        [refs.contact_multi_select]: ['smb', 'ent'],
        [refs.contact_select]: 'ent',
        [refs.contact_date]: '2026-04-01',
      }),
    },
    {
      id: 'c3',
      first_name: 'Carla',
      last_name: 'Lima',
      email: 'carla@other.com',
      phone: '+5521912345678',
      owner_id: null,
      score: null,
      created_at: '2026-03-01T00:00:00.000Z',
      updated_at: '2026-03-05T00:00:00.000Z',
      custom_properties: '{}',
    },
  ];
  await db
    .insertInto('contacts')
    .values(rows.map((r) => ({ ...base, ...r })))
    .execute();
  await db
    .insertInto('record_tags')
    .values([
      { tenant_id: tenantId, object_type: 'contact', object_id: 'c1', tag_id: 't1' },
      { tenant_id: tenantId, object_type: 'contact', object_id: 'c2', tag_id: 't1' },
      { tenant_id: tenantId, object_type: 'contact', object_id: 'c2', tag_id: 't2' },
      // Same ids in another object type and another tenant must not leak in.
      { tenant_id: tenantId, object_type: 'company', object_id: 'c3', tag_id: 't1' },
      { tenant_id: `other-${tenantId}`, object_type: 'contact', object_id: 'c3', tag_id: 't1' },
    ])
    .execute();

  const run = async (filter: unknown) => {
    const where = compileFilter(filter, 'contact', { dialect: t.database.dialect, tenantId, properties: defs });
    const r = await db
      .selectFrom('contacts')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .where(where)
      .orderBy('id')
      .execute();
    return r.map((x) => x.id);
  };
  const one = (field: string, operator: string, value?: unknown) => run(group(value === undefined ? { field, operator } : { field, operator, value }));
  const cases: [string, string, unknown, string[]][] = [
    // standard fields
    ['id', 'eq', 'c2', ['c2']],
    ['id', 'in', ['c1', 'c3', 'nope'], ['c1', 'c3']],
    ['id', 'notIn', ['c1'], ['c2', 'c3']],
    ['firstName', 'eq', 'Ana', ['c1']],
    ['firstName', 'eq', 'ana', []],
    ['firstName', 'neq', 'Ana', ['c2', 'c3']],
    ['firstName', 'contains', 'AR', ['c3']],
    ['firstName', 'contains', '%', []],
    ['lastName', 'neq', 'Lima', ['c1', 'c2']],
    ['lastName', 'notIn', ['Lima', 'Souza'], ['c2']],
    ['lastName', 'exists', undefined, ['c1', 'c3']],
    ['lastName', 'notExists', undefined, ['c2']],
    ['email', 'eq', ' ANA@Acme.com ', ['c1']],
    ['email', 'contains', 'ACME', ['c1']],
    ['email', 'in', ['CARLA@other.com', 'x@x.com'], ['c3']],
    ['phone', 'eq', '(11) 98765-4321', ['c1']],
    ['phone', 'contains', '912-345', ['c3']],
    ['ownerId', 'eq', refs.ana, ['c1']],
    ['ownerId', 'neq', refs.ana, ['c2', 'c3']],
    ['ownerId', 'notExists', undefined, ['c3']],
    ['companyId', 'notExists', undefined, ['c1', 'c2', 'c3']],
    ['score', 'eq', 80, ['c1']],
    ['score', 'gt', 50.5, ['c1']],
    ['score', 'gte', 50.5, ['c1', 'c2']],
    ['score', 'lt', 80, ['c2']],
    ['score', 'lte', 80, ['c1', 'c2']],
    ['score', 'neq', 80, ['c2', 'c3']],
    ['score', 'in', [50.5, 1], ['c2']],
    ['score', 'exists', undefined, ['c1', 'c2']],
    ['createdAt', 'after', '2026-02-01T00:00:00.000Z', ['c3']],
    ['createdAt', 'after', '2026-01-31T21:00:00-03:00', ['c3']],
    ['createdAt', 'gte', '2026-01-31T21:00:00-03:00', ['c2', 'c3']],
    ['createdAt', 'before', '2026-02-01', ['c1']],
    ['createdAt', 'lte', '2026-02-01', ['c1', 'c2']],
    ['createdAt', 'eq', '2026-02-01T00:00:00Z', ['c2']],
    ['updatedAt', 'gt', '2026-02-05T00:00:00.000Z', ['c3']],
    // tags
    ['tags', 'contains', 't1', ['c1', 'c2']],
    ['tags', 'contains', 't2', ['c2']],
    ['tags', 'in', ['t2', 't9'], ['c2']],
    ['tags', 'notIn', ['t2'], ['c1', 'c3']],
    ['tags', 'exists', undefined, ['c1', 'c2']],
    ['tags', 'notExists', undefined, ['c3']],
    // custom properties
    [p('contact_number'), 'gt', 5, ['c2']],
    [p('contact_number'), 'gte', 5, ['c1', 'c2']],
    [p('contact_number'), 'eq', 10, ['c2']],
    [p('contact_number'), 'neq', 10, ['c1', 'c3']],
    [p('contact_number'), 'in', [5, 7], ['c1']],
    [p('contact_number'), 'exists', undefined, ['c1', 'c2']],
    [p('contact_number'), 'notExists', undefined, ['c3']],
    [p('contact_text'), 'contains', 'world', ['c1']],
    [p('contact_text'), 'eq', 'Hello World', ['c1']],
    [p('contact_text'), 'neq', 'Hello World', ['c2', 'c3']],
    [p('contact_select'), 'eq', 'smb', ['c1']],
    [p('contact_select'), 'in', ['ent', 'x'], ['c2']],
    [p('contact_select'), 'notIn', ['ent'], ['c1', 'c3']],
    [p('contact_email'), 'eq', 'X@Y.com', ['c1']],
    [p('contact_phone'), 'eq', '11 93333-4444', ['c1']],
    [p('contact_date'), 'after', '2026-03-01', ['c2']],
    [p('contact_date'), 'gte', '2026-03-01', ['c1', 'c2']],
    [p('contact_date'), 'before', '2026-04-01', ['c1']],
    [p('contact_datetime'), 'after', '2026-03-01T08:59:59-03:00', ['c1']],
    [p('contact_datetime'), 'after', '2026-03-01T09:00:00-03:00', []],
    [p('contact_datetime'), 'lte', '2026-03-01T12:00:00Z', ['c1']],
    [p('contact_boolean'), 'eq', true, ['c1']],
    [p('contact_boolean'), 'eq', false, ['c2']],
    [p('contact_boolean'), 'neq', true, ['c2', 'c3']],
    [p('contact_boolean'), 'exists', undefined, ['c1', 'c2']],
    [p('contact_multi_select'), 'contains', 'ent', ['c2']],
    [p('contact_multi_select'), 'in', ['ent', 'smb'], ['c1', 'c2']],
    [p('contact_multi_select'), 'notIn', ['ent'], ['c1', 'c3']],
    [p('contact_multi_select'), 'notExists', undefined, ['c3']],
  ];
  for (const [field, operator, value, expected] of cases) {
    assert.deepEqual(await one(field, operator, value), expected, `${field} ${operator} ${JSON.stringify(value)}`);
  }
  // Groups.
  assert.deepEqual(
    await run({
      operator: 'OR',
      conditions: [
        { field: 'id', operator: 'eq', value: 'c1' },
        { field: 'id', operator: 'eq', value: 'c3' },
      ],
    }),
    ['c1', 'c3'],
  );
  assert.deepEqual(
    await run({
      operator: 'AND',
      conditions: [
        { field: 'tags', operator: 'contains', value: 't1' },
        { field: 'score', operator: 'lt', value: 60 },
      ],
    }),
    ['c2'],
  );
  assert.deepEqual(
    await run({
      operator: 'OR',
      conditions: [
        { field: 'firstName', operator: 'eq', value: 'Carla' },
        {
          operator: 'AND',
          conditions: [
            { field: 'score', operator: 'gte', value: 50 },
            {
              operator: 'OR',
              conditions: [
                { field: p('contact_boolean'), operator: 'eq', value: false },
                { field: 'email', operator: 'notExists' },
              ],
            },
          ],
        },
      ],
    }),
    ['c2', 'c3'],
  );
  // Hostile strings are bound values, never SQL.
  assert.deepEqual(await one('firstName', 'eq', "x' or '1'='1"), []);
  assert.deepEqual(await one(`customProperties.${refs.contact_text}`, 'contains', "'); drop table contacts; --"), []);
  // An aliased outer table.
  const aliased = await db
    .selectFrom('contacts as x')
    .select('x.id')
    .where('x.tenant_id', '=', tenantId)
    .where(
      compileFilter(group({ field: 'tags', operator: 'contains', value: 't2' }, { field: 'score', operator: 'gt', value: 1 }), 'contact', {
        dialect: t.database.dialect,
        tenantId,
        properties: defs,
        table: 'x',
      }),
    )
    .execute();
  assert.deepEqual(
    aliased.map((r) => r.id),
    ['c2'],
  );
});

test(`filters: companies and deals (column maps, cents, booleans, dates) compile and run (${DIALECT})`, async () => {
  const { tenantId, refs } = await newTenant(t);
  const now = '2026-05-01T00:00:00.000Z';
  await db
    .insertInto('companies')
    .values([
      {
        tenant_id: tenantId,
        id: 'k1',
        name: 'Acme Ltda',
        cnpj: '11222333000181',
        website: 'https://acme.com.br',
        domain: 'acme.com.br',
        phone: '+551133334444',
        industry: 'Retail',
        owner_id: refs.ana,
        custom_properties: JSON.stringify({ [refs.company_number]: 3 }),
        created_at: now,
        updated_at: now,
        deleted_at: null,
        search_text: '',
      },
      {
        tenant_id: tenantId,
        id: 'k2',
        name: 'Beta SA',
        cnpj: null,
        website: null,
        domain: null,
        phone: null,
        industry: null,
        owner_id: null,
        custom_properties: '{}',
        created_at: now,
        updated_at: now,
        deleted_at: null,
        search_text: '',
      },
    ])
    .execute();
  // Rows as the deals repo writes them: with their search column, which `title contains` reads.
  const deal = (id: string, extra: Record<string, unknown>) =>
    withSearchText('deals', {
      tenant_id: tenantId,
      id,
      title: `Deal ${id}`,
      pipeline_id: refs.sales,
      stage_id: refs.lead,
      value_cents: null,
      currency: 'BRL',
      contact_id: null,
      company_id: null,
      owner_id: null,
      expected_close_date: null,
      custom_properties: '{}',
      is_won: 0,
      is_lost: 0,
      closed_at: null,
      loss_reason_id: null,
      loss_notes: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      ...extra,
    });
  await db
    .insertInto('deals')
    .values([
      deal('d1', {
        value_cents: 1050,
        is_won: 1,
        stage_id: refs.won,
        closed_at: '2026-04-01T10:00:00.000Z',
        expected_close_date: '2026-04-01',
        company_id: 'k1',
      }),
      deal('d2', { value_cents: 99999, currency: 'USD', is_lost: 1, loss_reason_id: refs.price, expected_close_date: '2026-06-30' }),
      deal('d3', { pipeline_id: refs.partners, stage_id: refs.p_intro, custom_properties: JSON.stringify({ [refs.deal_boolean]: true }) }),
    ])
    .execute();
  await db.insertInto('record_tags').values({ tenant_id: tenantId, object_type: 'deal', object_id: 'd3', tag_id: 'tx' }).execute();
  const defs = async (type: string) => {
    const m = new Map<string, PropertyDef>();
    for (const r of await db.selectFrom('properties').select(['id', 'type']).where('tenant_id', '=', tenantId).where('object_type', '=', type).execute())
      m.set(r.id, { id: r.id, type: r.type as any });
    return m;
  };
  const companyDefs = await defs('company');
  const dealDefs = await defs('deal');
  const companies = async (...conditions: unknown[]) =>
    (
      await db
        .selectFrom('companies')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where(compileFilter(group(...conditions), 'company', { dialect: t.database.dialect, tenantId, properties: companyDefs }))
        .orderBy('id')
        .execute()
    ).map((r) => r.id);
  const deals = async (...conditions: unknown[]) =>
    (
      await db
        .selectFrom('deals')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where(compileFilter(group(...conditions), 'deal', { dialect: t.database.dialect, tenantId, properties: dealDefs }))
        .orderBy('id')
        .execute()
    ).map((r) => r.id);

  assert.deepEqual(await companies({ field: 'name', operator: 'contains', value: 'acme' }), ['k1']);
  assert.deepEqual(await companies({ field: 'cnpj', operator: 'eq', value: '11.222.333/0001-81' }), ['k1']);
  assert.deepEqual(await companies({ field: 'domain', operator: 'eq', value: 'https://www.ACME.com.br/x' }), ['k1']);
  assert.deepEqual(await companies({ field: 'website', operator: 'exists' }), ['k1']);
  assert.deepEqual(await companies({ field: 'industry', operator: 'notExists' }), ['k2']);
  assert.deepEqual(await companies({ field: 'phone', operator: 'eq', value: '(11) 3333-4444' }), ['k1']);
  assert.deepEqual(await companies({ field: 'ownerId', operator: 'neq', value: refs.ana }), ['k2']);
  assert.deepEqual(await companies({ field: `customProperties.${refs.company_number}`, operator: 'lte', value: 3 }), ['k1']);
  assert.deepEqual(await companies({ field: 'createdAt', operator: 'eq', value: now }), ['k1', 'k2']);

  assert.deepEqual(await deals({ field: 'value', operator: 'eq', value: 10.5 }), ['d1'], 'value compared in cents');
  assert.deepEqual(await deals({ field: 'value', operator: 'gt', value: 10.5 }), ['d2']);
  assert.deepEqual(await deals({ field: 'value', operator: 'gte', value: 10.5 }), ['d1', 'd2']);
  assert.deepEqual(await deals({ field: 'value', operator: 'in', value: [999.99] }), ['d2']);
  assert.deepEqual(await deals({ field: 'value', operator: 'notExists' }), ['d3']);
  assert.deepEqual(await deals({ field: 'isWon', operator: 'eq', value: true }), ['d1']);
  assert.deepEqual(await deals({ field: 'isLost', operator: 'eq', value: false }), ['d1', 'd3']);
  assert.deepEqual(await deals({ field: 'isWon', operator: 'neq', value: true }), ['d2', 'd3']);
  assert.deepEqual(await deals({ field: 'currency', operator: 'eq', value: 'usd' }), ['d2']);
  assert.deepEqual(await deals({ field: 'pipelineId', operator: 'eq', value: refs.partners }), ['d3']);
  assert.deepEqual(await deals({ field: 'stageId', operator: 'in', value: [refs.won, refs.p_intro] }), ['d1', 'd3']);
  assert.deepEqual(await deals({ field: 'expectedCloseDate', operator: 'after', value: '2026-04-01' }), ['d2']);
  assert.deepEqual(await deals({ field: 'expectedCloseDate', operator: 'lte', value: '2026-04-01' }), ['d1']);
  assert.deepEqual(await deals({ field: 'closedAt', operator: 'before', value: '2026-04-01T10:00:00.001Z' }), ['d1']);
  assert.deepEqual(await deals({ field: 'lossReasonId', operator: 'eq', value: refs.price }), ['d2']);
  assert.deepEqual(await deals({ field: 'companyId', operator: 'eq', value: 'k1' }), ['d1']);
  assert.deepEqual(await deals({ field: 'contactId', operator: 'notExists' }), ['d1', 'd2', 'd3']);
  assert.deepEqual(await deals({ field: 'title', operator: 'contains', value: 'deal d' }), ['d1', 'd2', 'd3']);
  assert.deepEqual(await deals({ field: 'tags', operator: 'contains', value: 'tx' }), ['d3']);
  assert.deepEqual(await deals({ field: `customProperties.${refs.deal_boolean}`, operator: 'eq', value: true }), ['d3']);
  assert.deepEqual(await deals({ field: 'value', operator: 'gt', value: 0 }, { field: 'isWon', operator: 'eq', value: false }), ['d2']);
});

test('compileFilterParts: a filter is compiled once per dialect and tenant, and again every time when it names custom properties', () => {
  const filter = group({ field: 'ownerId', operator: 'eq', value: 'usr_1' }, { field: 'score', operator: 'gte', value: 10 });
  const opts = { dialect: sqliteDialect, tenantId: 'ten_a', properties: new Map<string, PropertyDef>() };
  const first = compileFilterParts(filter, 'contact', opts);
  assert.equal(first.ownerId, 'usr_1');
  // The same filter (an equal body, not the same object) is the same compiled parts.
  assert.equal(compileFilterParts(JSON.parse(JSON.stringify(filter)), 'contact', opts), first);
  // Another tenant, dialect, object type or filter is compiled apart.
  assert.notEqual(compileFilterParts(filter, 'contact', { ...opts, tenantId: 'ten_b' }), first);
  assert.notEqual(compileFilterParts(filter, 'contact', { ...opts, dialect: postgresDialect }), first);
  assert.notEqual(
    compileFilterParts(group({ field: 'ownerId', operator: 'eq', value: 'usr_1' }), 'company', opts),
    compileFilterParts(group({ field: 'ownerId', operator: 'eq', value: 'usr_1' }), 'contact', opts),
  );
  assert.notEqual(
    compileFilterParts(group({ field: 'score', operator: 'gte', value: 11 }, { field: 'ownerId', operator: 'eq', value: 'usr_1' }), 'contact', opts),
    first,
  );
  // Property definitions can change between two pages: such a filter is never kept.
  const withProps = group({ field: 'customProperties.p_text', operator: 'eq', value: 'x' });
  const a = compileFilterParts(withProps, 'contact', { ...opts, properties: PROPS });
  assert.notEqual(compileFilterParts(withProps, 'contact', { ...opts, properties: PROPS }), a);
  // A long filter (a large body) is compiled every time: the cache holds short ones only.
  const long = group({ field: 'email', operator: 'in', value: Array.from({ length: 700 }, (_, i) => `someone.${i}@example.com`) });
  assert.ok(JSON.stringify(long).length > 16 * 1024);
  assert.notEqual(compileFilterParts(long, 'contact', opts), compileFilterParts(long, 'contact', opts));
  // An invalid filter is refused every time, never kept.
  for (let i = 0; i < 2; i++) assert.throws(() => compileFilterParts(group({ field: 'score', operator: 'gte', value: 'x' }), 'contact', opts), ApiError);
});
