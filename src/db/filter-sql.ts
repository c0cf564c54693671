/**
 * The filter language (src/domain/filters.ts) compiled to SQL, for `POST /contacts/search` and the
 * dynamic-list engine. Records are never filtered in memory.
 *
 *   compileFilter(filter, objectType, { dialect, tenantId, properties, table?, path? }) → RawBuilder<SqlBool>
 *       Validates (throws ApiError 400 validation_failed with `details` when invalid) and returns a boolean
 *       SQL expression for `selectFrom(<table>)`: `.where(compileFilter(...))`. Column references are
 *       qualified with `table` (default `contacts` / `companies` / `deals`; pass your alias if you use one).
 *       The caller still filters `tenant_id` and `deleted_at is null` on the outer query; `tenantId` is used
 *       for the `record_tags` subqueries.
 *
 * Cost (DESIGN §4): O(rows examined), never rows × filter values. A value list is a set the database
 * builds once per statement and probes once per row (SQLite: an ephemeral index; PostgreSQL ≥ 14: a
 * hashed ScalarArrayOp, or a hash join); tags are a set of record ids computed once, not a subquery
 * per record; a multi_select is one probe per array element, not one subquery per value.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { errors } from '../errors.js';
import { parseFilter, type FilterNode, type FilterObjectType, type FilterOperator } from '../domain/filters.js';
import type { PropertyDef } from '../domain/properties.js';
import { containsInsensitive, foldedContains, jsonBooleanIs, type SqlDialect } from './dialect.js';

export interface CompileOptions {
  dialect: SqlDialect;
  tenantId: string;
  properties: Map<string, PropertyDef>;
  /** Table name or alias of the outer query (default: contacts / companies / deals). */
  table?: string;
  /** Path named in validation errors (default `filters`). */
  path?: string;
}

const TABLES: Record<FilterObjectType, string> = { contact: 'contacts', company: 'companies', deal: 'deals' };

/**
 * Validates `filter` and compiles it to a boolean SQL expression for `selectFrom(<table>)`.
 * Throws ApiError 400 `validation_failed` (details naming the paths) when it is invalid.
 */
export function compileFilter(filter: unknown, objectType: FilterObjectType, opts: CompileOptions): RawBuilder<SqlBool> {
  const { node, c } = parsed(filter, objectType, opts);
  return compileNode(node, c);
}

/** The validated filter and its compiler; throws 400 validation_failed when the filter is invalid. */
function parsed(filter: unknown, objectType: FilterObjectType, opts: CompileOptions): { node: FilterNode; c: Compiler } {
  const { issues, node } = parseFilter(filter, objectType, opts.properties, opts.path ?? 'filters');
  if (issues.length || !node) throw errors.validation(issues.length ? issues : [{ field: opts.path ?? 'filters', message: 'is invalid' }]);
  return { node, c: { ...opts, objectType, table: opts.table ?? TABLES[objectType] } };
}

/**
 * A filter compiled for a list page: an `ownerId eq` the whole filter requires (a condition of the root AND),
 * taken out so that the page can walk the owner's index (listing/planner.ts), the rest as SQL, and what testing one row
 * against that rest costs.
 */
export interface FilterParts {
  /** Set when a condition of the root AND is `ownerId eq <id>`: every match has that owner. */
  ownerId?: string;
  /** The filter but that condition (undefined when nothing else is left). */
  rest?: RawBuilder<SqlBool>;
  /**
   * What testing one row against `rest` costs, in simple comparisons: 1 a comparison, 2 a `contains`, one per
   * value of an `in`/`notIn` (a set built per statement) or multi_select list; Infinity for tags, whose set
   * of records is read from record_tags, as large as the tag, and for a `contains` folded in SQL (rowCostOf).
   * The listing planner probes a page on the main connection only below a bound (PROBE_MAX_ROW_COST).
   */
  rowCost: number;
}

/**
 * Filters compiled for list pages (compileFilterParts), by dialect, tenant, object type and filter JSON, most
 * recently used last. A search's page statements are compiled once per filter (listing/planner.ts compiledShape), but
 * its filter was parsed, validated and compiled again on every page: ~7 µs of a search's CPU. Only filters
 * with no custom property: their SQL depends on the property definitions, which can change between pages.
 * What is kept is immutable (Kysely expressions); a filter that fails validation is never kept.
 */
const compiledParts = new Map<string, FilterParts>();
const MAX_COMPILED_PARTS = 1_000;
/**
 * Longer filters (their JSON) are compiled every time: 1,000 of the largest the API takes (10,000 values,
 * ~150 KiB) would hold ~150 MiB. As long as a large request body (plugins/body-share.ts LARGE_BYTES).
 */
const MAX_KEPT_FILTER_CHARS = 16 * 1024;

/** compileFilter, split for a list page (FilterParts). Same validation and errors. */
export function compileFilterParts(filter: unknown, objectType: FilterObjectType, opts: CompileOptions): FilterParts {
  if (opts.properties.size > 0 || opts.table !== undefined || opts.path !== undefined) return compilePartsOf(filter, objectType, opts);
  const json = JSON.stringify(filter);
  if (json === undefined || json.length > MAX_KEPT_FILTER_CHARS) return compilePartsOf(filter, objectType, opts);
  const key = `${opts.dialect.name}\u0001${opts.tenantId}\u0001${objectType}\u0001${json}`;
  let parts = compiledParts.get(key);
  if (parts) compiledParts.delete(key);
  else {
    parts = compilePartsOf(filter, objectType, opts);
    if (compiledParts.size >= MAX_COMPILED_PARTS) compiledParts.delete(compiledParts.keys().next().value as string);
  }
  compiledParts.set(key, parts);
  return parts;
}

function compilePartsOf(filter: unknown, objectType: FilterObjectType, opts: CompileOptions): FilterParts {
  const { node, c } = parsed(filter, objectType, opts);
  const isOwner = (n: FilterNode) =>
    n.type === 'cond' && n.target.type === 'column' && n.target.name === 'ownerId' && n.operator === 'eq' && typeof n.value === 'string';
  let rest: FilterNode | undefined = node;
  let ownerId: string | undefined;
  // The root is always a group (domain/filters.ts).
  if (node.type === 'group' && node.operator === 'AND') {
    const i = node.children.findIndex(isOwner);
    if (i >= 0) {
      ownerId = (node.children[i] as { value: string }).value;
      const others = node.children.filter((_, k) => k !== i);
      rest = others.length ? { type: 'group', operator: 'AND', children: others } : undefined;
    }
  }
  return { ownerId, rest: rest && compileNode(rest, c), rowCost: rest ? rowCostOf(rest) : 0 };
}

function rowCostOf(node: FilterNode): number {
  if (node.type === 'group') return node.children.reduce((sum, n) => sum + rowCostOf(n), 0);
  const t = node.target;
  if (t.type === 'column' && t.spec.kind === 'tags') return Infinity;
  if (Array.isArray(node.value)) return Math.max(1, node.value.length);
  if (node.operator !== 'contains') return 1;
  // A `contains` on a field with no stored folded column folds the value in SQL, on SQLite a call of a JavaScript
  // function per row (crm_fold): ~0.5–0.9 µs a row, 1,000 rows 700 µs against 210 for a plain LIKE, in process.
  if (t.type === 'column' && t.spec.folded) return 2;
  return Infinity;
}

interface Compiler extends CompileOptions {
  objectType: FilterObjectType;
  table: string;
}

const TRUE = sql<SqlBool>`(1 = 1)`;
const FALSE = sql<SqlBool>`(1 = 0)`;

function compileNode(node: FilterNode, c: Compiler): RawBuilder<SqlBool> {
  if (node.type === 'group') {
    if (node.children.length === 0) return node.operator === 'AND' ? TRUE : FALSE;
    const parts = node.children.map((n) => compileNode(n, c));
    if (parts.length === 1) return parts[0];
    return sql<SqlBool>`(${sql.join(parts, node.operator === 'AND' ? sql` and ` : sql` or `)})`;
  }
  const t = node.target;
  if (t.type === 'column' && t.spec.kind === 'tags') return compileTags(node.operator, node.value, c);
  if (t.type === 'prop' && t.kind === 'jmulti') return compileMulti(t.def.id, node.operator, node.value, c);
  if (t.type === 'prop' && t.kind === 'jboolean') return compileJsonBoolean(t.def.id, node.operator, node.value as boolean, c);
  let expr: RawBuilder<unknown>;
  let folded: RawBuilder<unknown> | undefined;
  let value = node.value;
  if (t.type === 'column') {
    expr = sql.ref(`${c.table}.${t.spec.column}`);
    if (t.spec.folded) folded = sql.ref(`${c.table}.${t.spec.folded}`);
    if (t.spec.kind === 'boolean') value = value ? 1 : 0;
  } else {
    const col = `${c.table}.custom_properties`;
    expr = t.kind === 'jnumber' ? c.dialect.jsonNumber(col, t.def.id) : c.dialect.jsonText(col, t.def.id);
    if (node.operator === 'exists') return c.dialect.jsonHasKey(col, t.def.id) as RawBuilder<SqlBool>;
    if (node.operator === 'notExists') return sql<SqlBool>`(not ${c.dialect.jsonHasKey(col, t.def.id)})`;
  }
  return compare(c.dialect, expr, node.operator, value, folded);
}

const SQL_OPS: Partial<Record<FilterOperator, string>> = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=', after: '>', before: '<' };

/**
 * `expr <operator> value`. `contains` ignores case and accents (CONTRACT C.5): on `folded`, a stored column
 * holding exactly this field folded, when there is one; otherwise on `expr` folded in SQL.
 */
function compare(dialect: SqlDialect, expr: RawBuilder<unknown>, operator: FilterOperator, value: unknown, folded?: RawBuilder<unknown>): RawBuilder<SqlBool> {
  switch (operator) {
    case 'eq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
    case 'after':
    case 'before':
      return sql<SqlBool>`(${expr} ${sql.raw(SQL_OPS[operator]!)} ${value})`;
    case 'neq':
      return sql<SqlBool>`(${expr} is null or ${expr} <> ${value})`;
    case 'contains':
      return (folded ? foldedContains(folded, value as string) : containsInsensitive(dialect, expr, value as string)) as RawBuilder<SqlBool>;
    // A set built once and probed once per row (SqlDialect.inStrings); a list of numbers is short and
    // stays a list of constants, which both databases treat the same way.
    case 'in':
      if (allStrings(value)) return dialect.inStrings(expr, value) as RawBuilder<SqlBool>;
      return sql<SqlBool>`(${expr} in (${sql.join(value as unknown[])}))`;
    case 'notIn':
      if (allStrings(value)) return sql<SqlBool>`(${expr} is null or ${dialect.inStrings(expr, value, true)})`;
      return sql<SqlBool>`(${expr} is null or ${expr} not in (${sql.join(value as unknown[])}))`;
    case 'exists':
      return sql<SqlBool>`(${expr} is not null)`;
    case 'notExists':
      return sql<SqlBool>`(${expr} is null)`;
  }
}

/**
 * Tags as a set of record ids computed once per statement. `in`/`contains`/`exists` are an uncorrelated
 * `id in (select object_id …)`: a LIST SUBQUERY on SQLite, a hash semi join on PostgreSQL.
 */
function compileTags(operator: FilterOperator, value: unknown, c: Compiler): RawBuilder<SqlBool> {
  const id = sql.ref(`${c.table}.id`);
  const only =
    operator === 'contains'
      ? sql` and ft.tag_id = ${value as string}`
      : operator === 'in' || operator === 'notIn'
        ? sql` and ${c.dialect.inStrings(sql.raw('ft.tag_id'), value as string[])}`
        : sql``;
  const tagged = sql`select ft.object_id from record_tags ft where ft.tenant_id = ${c.tenantId} and ft.object_type = ${c.objectType}${only}`;
  if (operator !== 'notIn' && operator !== 'notExists') return sql<SqlBool>`(${id} in (${tagged}))`;
  if (c.dialect.name === 'postgres') {
    // NOTE: PostgreSQL cannot turn `not in (subquery)` into an anti join (NULL semantics, even over a
    // not-null column); it hashes the subquery only while the set fits in work_mem, and past that rescans
    // it for every row (with work_mem 64kB, 100k contacts: > 20 s). A correlated NOT EXISTS is planned as
    // a hash anti join, which reads the tag rows once and spills to batches instead.
    return sql<SqlBool>`(not exists (${tagged} and ft.object_id = ${id}))`;
  }
  // NOTE: SQLite runs a correlated NOT EXISTS once per row, and with an IN list of tag ids it may drive
  // each run from the (tenant_id, tag_id) index: rows × values probes (9 s for 1,000 ids on 100k contacts).
  // `not in (subquery)` is a LIST SUBQUERY built once; object_id is NOT NULL (part of the primary key), so
  // the NULL trap of NOT IN cannot occur.
  return sql<SqlBool>`(${id} not in (${tagged}))`;
}

function allStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function compileMulti(key: string, operator: FilterOperator, value: unknown, c: Compiler): RawBuilder<SqlBool> {
  const col = `${c.table}.custom_properties`;
  switch (operator) {
    case 'contains':
      return c.dialect.jsonArrayContains(col, key, value as string) as RawBuilder<SqlBool>;
    case 'in':
      return c.dialect.jsonArrayHasAny(col, key, value as string[]) as RawBuilder<SqlBool>;
    case 'notIn':
      return sql<SqlBool>`(not ${c.dialect.jsonArrayHasAny(col, key, value as string[])})`;
    case 'exists':
      return c.dialect.jsonHasKey(col, key) as RawBuilder<SqlBool>;
    default:
      return sql<SqlBool>`(not ${c.dialect.jsonHasKey(col, key)})`;
  }
}

function compileJsonBoolean(key: string, operator: FilterOperator, value: boolean, c: Compiler): RawBuilder<SqlBool> {
  const col = `${c.table}.custom_properties`;
  switch (operator) {
    case 'eq':
      return sql<SqlBool>`coalesce(${jsonBooleanIs(c.dialect, col, key, value)}, false)`;
    case 'neq':
      return sql<SqlBool>`(not coalesce(${jsonBooleanIs(c.dialect, col, key, value)}, false))`;
    case 'exists':
      return c.dialect.jsonHasKey(col, key) as RawBuilder<SqlBool>;
    default:
      return sql<SqlBool>`(not ${c.dialect.jsonHasKey(col, key)})`;
  }
}
