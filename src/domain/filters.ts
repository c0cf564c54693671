/**
 * The filter language of `POST /contacts/search` and of dynamic lists (CONTRACT B.4): its grammar and
 * validation. Pure: no database. Its compilation to SQL is `src/db/filter-sql.ts`.
 *
 * Grammar
 *   Group     = { operator: 'AND' | 'OR', conditions: (Condition | Group)[] }   (non-empty; root = depth 1, depth ≤ 3)
 *   Condition = { field, operator, value? }                                     (≤ 50 conditions in a filter)
 *   operators   eq neq gt gte lt lte after before contains in notIn exists notExists
 *
 * Semantics (decisions on B.4's gaps, also in the OpenAPI description of the search endpoint)
 *   - `gt`/`lt`/`after`/`before` are strict, `gte`/`lte` inclusive; `after`/`before` apply to dates and date-times.
 *   - `contains` on text is a substring ignoring case and accents (CONTRACT C.5, domain/fold.mjs); `eq`/`in` on text are exact (e-mails, domains,
 *     CNPJs, currencies and phones are normalized the way they are stored before comparing).
 *   - `neq` and `notIn` also match records where the field is empty (SQL `IS DISTINCT FROM` semantics).
 *   - `exists`/`notExists`: the field has a value / has none. They take no `value` (its presence is 400).
 *   - `in`/`notIn` take a non-empty array of at most 1000 values; a filter has at most 10,000 values.
 *   - Complexity budget (COST_BUDGET): conditions on tags or custom properties cost 12, others 1; at most 100.
 *   - Date-times are normalized to UTC with milliseconds before comparing with the stored ISO text.
 *   - Deal `value` is compared in cents (`value_cents`), so `{ value: 10.5 }` matches 1050 cents.
 *   - `tags`: `contains` (one tag id), `in` (any of the ids), `notIn` (none of them), `exists` (any tag),
 *     `notExists` (no tag).
 *   - `customProperties.<propertyId>`: the id must be a property of the object type; operators follow
 *     its type (number: numeric comparisons; text-like: eq/neq/contains/in/notIn; date/datetime:
 *     comparisons; boolean: eq/neq; multi_select: contains/in/notIn); exists/notExists on every type.
 *
 * API
 *   validateFilter(filter, objectType, properties, path = 'filters') → FieldIssue[]
 *       Paths look like `filters.conditions[1].value`.
 *   parseFilter(filter, objectType, properties, path) → { issues, node }: the normalized tree
 *       (values normalized as stored, `in` lists de-duplicated) that db/filter-sql.ts compiles.
 *   FILTER_FIELDS[objectType] — the standard fields and their column mapping.
 */
import type { FieldIssue } from '../errors.js';
import { normalizeCnpj } from './cnpj.js';
import { isIsoDate, normalizeIsoDateTime } from './dates.js';
import { normalizeEmail } from './email.js';
import { DomainError } from './errors.js';
import { toCents } from './money.js';
import { normalizePhone } from './phone.js';
import { normalizePropertyValue, type PropertyDef } from './properties.js';
import { normalizeDomain, normalizeWebsite } from './web.js';

export type FilterObjectType = 'contact' | 'company' | 'deal';
export type FilterOperator = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'after' | 'before' | 'contains' | 'in' | 'notIn' | 'exists' | 'notExists';

export interface FilterCondition {
  field: string;
  operator: FilterOperator;
  value?: unknown;
}
export interface FilterGroup {
  operator: 'AND' | 'OR';
  conditions: (FilterCondition | FilterGroup)[];
}

export const OPERATORS: readonly FilterOperator[] = [
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'after',
  'before',
  'contains',
  'in',
  'notIn',
  'exists',
  'notExists',
];
export const MAX_DEPTH = 3;
export const MAX_CONDITIONS = 50;
export const MAX_IN_VALUES = 1000;
/** Bound parameters of one filter stay far below SQLite's 32766 variables. */
export const MAX_TOTAL_VALUES = 10_000;
export const MAX_STRING_VALUE = 1000;
/**
 * Complexity budget of one filter. Every condition costs a pass over the rows examined; a condition on
 * `tags` or on a custom property costs far more than one on a column (a join with record_tags, or a
 * parse of the row's JSON document, per condition). Measured on 100,000 contacts, PostgreSQL 15: 50
 * `tags notIn` conditions 5.1 s, 50 multi_select `contains` 9.7 s, 50 column `contains` 0.85 s.
 * Weights 12 and 1 with a budget of 100 allow the 50 column conditions of the cap, or up to 8 of the costly
 * kind (≈ 0.4 s each at worst there, see bench/filters.ts).
 */
export const COST_BUDGET = 100;
export const COST_EXPENSIVE = 12;
export const COST_COLUMN = 1;
export const BUDGET_MESSAGE = `exceeds the complexity budget of ${COST_BUDGET}: a condition on tags or on a custom property costs ${COST_EXPENSIVE}, any other condition ${COST_COLUMN}`;

/**
 * How a field's values are checked and compared.
 * - id: opaque ids (exact); text: free text; number; money (compared in cents); date (`YYYY-MM-DD`);
 *   datetime (ISO, normalized to UTC ms); boolean (stored 0/1); tags (record_tags).
 */
export type Kind = 'id' | 'text' | 'number' | 'money' | 'date' | 'datetime' | 'boolean' | 'tags';

export interface FieldSpec {
  column: string;
  kind: Kind;
  /** Normalizes a text value the way the column stores it (falls back to the raw value when it does not parse). */
  normalize?: (s: string) => string;
  /** Phones: `contains` compares the needle's digits with the stored E.164 text. */
  phone?: boolean;
  /** A stored column holding exactly this field folded (db/search-text.ts), which `contains` reads instead. */
  folded?: string;
}

const lower = (s: string) => s.trim().toLowerCase();
const soft = (fn: (s: string) => string) => (s: string) => {
  try {
    return fn(s);
  } catch (err) {
    if (err instanceof DomainError) return s;
    throw err;
  }
};
const PHONE: FieldSpec = { column: 'phone', kind: 'text', normalize: soft((s) => normalizePhone(s)), phone: true };
const common = {
  id: { column: 'id', kind: 'id' },
  ownerId: { column: 'owner_id', kind: 'id' },
  createdAt: { column: 'created_at', kind: 'datetime' },
  updatedAt: { column: 'updated_at', kind: 'datetime' },
  tags: { column: 'id', kind: 'tags' },
} satisfies Record<string, FieldSpec>;

/** Standard filterable fields per object type → column and kind. */
export const FILTER_FIELDS: Record<FilterObjectType, Record<string, FieldSpec>> = {
  contact: {
    ...common,
    firstName: { column: 'first_name', kind: 'text' },
    lastName: { column: 'last_name', kind: 'text' },
    email: { column: 'email', kind: 'text', normalize: soft((s) => normalizeEmail(s)) },
    phone: PHONE,
    companyId: { column: 'company_id', kind: 'id' },
    score: { column: 'score', kind: 'number' },
  },
  company: {
    ...common,
    name: { column: 'name', kind: 'text' },
    cnpj: { column: 'cnpj', kind: 'text', normalize: soft((s) => normalizeCnpj(s)) },
    website: { column: 'website', kind: 'text', normalize: soft((s) => normalizeWebsite(s)) },
    domain: { column: 'domain', kind: 'text', normalize: soft((s) => normalizeDomain(s)) },
    phone: PHONE,
    industry: { column: 'industry', kind: 'text' },
  },
  deal: {
    ...common,
    title: { column: 'title', kind: 'text', folded: 'search_text' },
    pipelineId: { column: 'pipeline_id', kind: 'id' },
    stageId: { column: 'stage_id', kind: 'id' },
    value: { column: 'value_cents', kind: 'money' },
    currency: { column: 'currency', kind: 'text', normalize: (s) => s.trim().toUpperCase() },
    contactId: { column: 'contact_id', kind: 'id' },
    companyId: { column: 'company_id', kind: 'id' },
    expectedCloseDate: { column: 'expected_close_date', kind: 'date' },
    isWon: { column: 'is_won', kind: 'boolean' },
    isLost: { column: 'is_lost', kind: 'boolean' },
    closedAt: { column: 'closed_at', kind: 'datetime' },
    lossReasonId: { column: 'loss_reason_id', kind: 'id' },
  },
};

const COMPARE: FilterOperator[] = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'];
const PRESENCE: FilterOperator[] = ['exists', 'notExists'];
const KIND_OPS: Record<Kind, FilterOperator[]> = {
  id: ['eq', 'neq', 'in', 'notIn', ...PRESENCE],
  text: ['eq', 'neq', 'contains', 'in', 'notIn', ...PRESENCE],
  number: [...COMPARE, 'in', 'notIn', ...PRESENCE],
  money: [...COMPARE, 'in', 'notIn', ...PRESENCE],
  date: [...COMPARE, 'after', 'before', ...PRESENCE],
  datetime: [...COMPARE, 'after', 'before', ...PRESENCE],
  boolean: ['eq', 'neq', ...PRESENCE],
  tags: ['contains', 'in', 'notIn', ...PRESENCE],
};

/** Custom property type → the kind used to compare its JSON value. */
export type PropKind = 'jtext' | 'jnumber' | 'jdate' | 'jdatetime' | 'jboolean' | 'jmulti';
const PROP_KIND: Record<string, PropKind> = {
  text: 'jtext',
  textarea: 'jtext',
  email: 'jtext',
  phone: 'jtext',
  url: 'jtext',
  select: 'jtext',
  number: 'jnumber',
  date: 'jdate',
  datetime: 'jdatetime',
  boolean: 'jboolean',
  multi_select: 'jmulti',
};
const PROP_OPS: Record<PropKind, FilterOperator[]> = {
  jtext: KIND_OPS.text,
  jnumber: KIND_OPS.number,
  jdate: KIND_OPS.date,
  jdatetime: KIND_OPS.datetime,
  jboolean: KIND_OPS.boolean,
  jmulti: ['contains', 'in', 'notIn', ...PRESENCE],
};

// ---------------------------------------------------------------------------------------------
// Validation → a normalized tree ready to compile.

export type FilterTarget = { type: 'column'; spec: FieldSpec; name: string } | { type: 'prop'; def: PropertyDef; kind: PropKind; name: string };

/** A validated filter: `value` is normalized as stored (cents, UTC date-times…); `in`/`notIn` values are distinct. */
export type FilterNode =
  { type: 'group'; operator: 'AND' | 'OR'; children: FilterNode[] } | { type: 'cond'; target: FilterTarget; operator: FilterOperator; value: unknown };

const MAX_ISSUES = 20;

interface State {
  issues: FieldIssue[];
  conditions: number;
  values: number;
  cost: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a filter and returns the problems, each naming the path of the bad value (empty when valid). */
export function validateFilter(filter: unknown, objectType: FilterObjectType, properties: Map<string, PropertyDef>, path = 'filters'): FieldIssue[] {
  return parseFilter(filter, objectType, properties, path).issues;
}

/** Validates a filter and returns its normalized tree (null when there are issues). */
export function parseFilter(
  filter: unknown,
  objectType: FilterObjectType,
  properties: Map<string, PropertyDef>,
  path: string,
): { issues: FieldIssue[]; node: FilterNode | null } {
  const st: State = { issues: [], conditions: 0, values: 0, cost: 0 };
  if (!FILTER_FIELDS[objectType]) return { issues: [{ field: path, message: 'unknown object type' }], node: null };
  if (!isObject(filter) || !('conditions' in filter)) {
    return { issues: [{ field: path, message: 'must be a group { operator: "AND" | "OR", conditions: [...] }' }], node: null };
  }
  const node = parseGroup(filter, 1, path, objectType, properties, st);
  if (st.conditions > MAX_CONDITIONS) {
    st.issues.unshift({ field: path, message: `must have at most ${MAX_CONDITIONS} conditions in total (has ${st.conditions})` });
  }
  if (st.values > MAX_TOTAL_VALUES) {
    st.issues.unshift({ field: path, message: `must have at most ${MAX_TOTAL_VALUES} values in total` });
  }
  if (st.cost > COST_BUDGET && st.conditions <= MAX_CONDITIONS) {
    st.issues.unshift({ field: path, message: `${BUDGET_MESSAGE} (this one costs ${st.cost})` });
  }
  const issues = st.issues.slice(0, MAX_ISSUES);
  return { issues, node: issues.length ? null : node };
}

function issue(st: State, field: string, message: string): void {
  if (st.issues.length <= MAX_ISSUES) st.issues.push({ field, message });
}

function parseGroup(
  g: Record<string, unknown>,
  depth: number,
  path: string,
  objectType: FilterObjectType,
  properties: Map<string, PropertyDef>,
  st: State,
): FilterNode | null {
  if (depth > MAX_DEPTH) {
    issue(st, path, `groups may nest at most ${MAX_DEPTH} levels deep`);
    return null;
  }
  for (const k of Object.keys(g)) if (k !== 'operator' && k !== 'conditions') issue(st, `${path}.${k}`, 'is not a known field');
  const operator = g.operator;
  if (operator === undefined) issue(st, `${path}.operator`, 'is required');
  else if (operator !== 'AND' && operator !== 'OR') issue(st, `${path}.operator`, 'must be one of AND, OR');
  const conditions = g.conditions;
  if (!Array.isArray(conditions)) {
    issue(st, `${path}.conditions`, 'must be an array');
    return null;
  }
  if (conditions.length === 0) issue(st, `${path}.conditions`, 'must not be empty');
  const children: FilterNode[] = [];
  conditions.forEach((c, i) => {
    if (st.issues.length > MAX_ISSUES) return;
    const at = `${path}.conditions[${i}]`;
    if (!isObject(c)) {
      st.conditions++;
      issue(st, at, 'must be a condition { field, operator, value } or a group { operator, conditions }');
      return;
    }
    const child = 'conditions' in c ? parseGroup(c, depth + 1, at, objectType, properties, st) : parseCondition(c, at, objectType, properties, st);
    if (child) children.push(child);
  });
  return { type: 'group', operator: operator === 'OR' ? 'OR' : 'AND', children };
}

function resolveField(field: string, objectType: FilterObjectType, properties: Map<string, PropertyDef>): FilterTarget | string {
  if (field.startsWith('customProperties.')) {
    const id = field.slice('customProperties.'.length);
    const def = properties.get(id);
    if (!def) return `unknown custom property "${id}" for ${objectType}s`;
    const kind = PROP_KIND[def.type];
    if (!kind) return `custom property "${id}" has an unsupported type`;
    return { type: 'prop', def, kind, name: field };
  }
  const spec = Object.hasOwn(FILTER_FIELDS[objectType], field) ? FILTER_FIELDS[objectType][field] : undefined;
  if (!spec) {
    return `unknown field for ${objectType}s; use one of ${Object.keys(FILTER_FIELDS[objectType]).join(', ')} or customProperties.<propertyId>`;
  }
  return { type: 'column', spec, name: field };
}

function parseCondition(
  c: Record<string, unknown>,
  path: string,
  objectType: FilterObjectType,
  properties: Map<string, PropertyDef>,
  st: State,
): FilterNode | null {
  st.conditions++;
  for (const k of Object.keys(c)) if (k !== 'field' && k !== 'operator' && k !== 'value') issue(st, `${path}.${k}`, 'is not a known field');
  const before = st.issues.length;
  let target: FilterTarget | null = null;
  if (c.field === undefined) issue(st, `${path}.field`, 'is required');
  else if (typeof c.field !== 'string') issue(st, `${path}.field`, 'must be a string');
  else {
    const t = resolveField(c.field, objectType, properties);
    if (typeof t === 'string') issue(st, `${path}.field`, t);
    else target = t;
    if (target) st.cost += target.type === 'prop' || target.spec.kind === 'tags' ? COST_EXPENSIVE : COST_COLUMN;
  }
  const op = c.operator;
  if (op === undefined) issue(st, `${path}.operator`, 'is required');
  else if (typeof op !== 'string' || !(OPERATORS as readonly string[]).includes(op)) {
    issue(st, `${path}.operator`, `must be one of ${OPERATORS.join(', ')}`);
  }
  if (st.issues.length > before || !target) return null;
  const operator = op as FilterOperator;
  const allowed = target.type === 'column' ? KIND_OPS[target.spec.kind] : PROP_OPS[target.kind];
  if (!allowed.includes(operator)) {
    const what = target.type === 'column' ? target.spec.kind : `${target.def.type} property`;
    issue(st, `${path}.operator`, `"${operator}" does not apply to ${target.name} (${what}); use one of ${allowed.join(', ')}`);
    return null;
  }
  const hasValue = 'value' in c && c.value !== undefined;
  if (operator === 'exists' || operator === 'notExists') {
    if (hasValue) {
      issue(st, `${path}.value`, `must be omitted with ${operator}`);
      return null;
    }
    return { type: 'cond', target, operator, value: undefined };
  }
  if (!hasValue) {
    issue(st, `${path}.value`, 'is required');
    return null;
  }
  const value = parseValue(target, operator, c.value, `${path}.value`, st);
  return value === INVALID ? null : { type: 'cond', target, operator, value };
}

const INVALID = Symbol('invalid');

function parseValue(target: FilterTarget, operator: FilterOperator, raw: unknown, path: string, st: State): unknown {
  if (operator === 'in' || operator === 'notIn') {
    if (!Array.isArray(raw)) return fail(st, path, 'must be an array');
    if (raw.length === 0) return fail(st, path, 'must not be empty');
    if (raw.length > MAX_IN_VALUES) return fail(st, path, `must have at most ${MAX_IN_VALUES} values`);
    st.values += raw.length;
    const out: unknown[] = [];
    for (let i = 0; i < raw.length; i++) {
      const v = scalar(target, operator, raw[i], `${path}[${i}]`, st);
      if (v === INVALID) return INVALID;
      out.push(v);
    }
    return [...new Set(out)];
  }
  st.values++;
  return scalar(target, operator, raw, path, st);
}

function fail(st: State, path: string, message: string): typeof INVALID {
  issue(st, path, message);
  return INVALID;
}

function scalar(target: FilterTarget, operator: FilterOperator, v: unknown, path: string, st: State): unknown {
  if (v === null) return fail(st, path, 'must not be null (use exists / notExists)');
  const kind: Kind | PropKind = target.type === 'column' ? target.spec.kind : target.kind;
  const str = (): string | typeof INVALID => {
    if (typeof v !== 'string') return fail(st, path, 'must be a string');
    if (v.length > MAX_STRING_VALUE) return fail(st, path, `must be at most ${MAX_STRING_VALUE} characters`);
    return v;
  };
  switch (kind) {
    case 'id':
    case 'tags':
    case 'jmulti':
      return str();
    case 'text':
    case 'jtext': {
      const s = str();
      if (s === INVALID) return s;
      if (operator === 'contains') {
        if (s.trim() === '') return fail(st, path, 'must not be blank');
        const phone = target.type === 'column' ? target.spec.phone : target.def.type === 'phone';
        if (phone && /\d/.test(s)) return s.replace(/\D/g, '');
        return s;
      }
      if (target.type === 'column') return target.spec.normalize ? target.spec.normalize(s) : s;
      return softProperty(target.def, s);
    }
    case 'number':
    case 'jnumber':
      if (typeof v !== 'number' || !Number.isFinite(v)) return fail(st, path, 'must be a number');
      return v;
    case 'money':
      if (typeof v !== 'number' || !Number.isFinite(v)) return fail(st, path, 'must be a number');
      try {
        return toCents(v);
      } catch (err) {
        if (err instanceof DomainError) return fail(st, path, err.message);
        throw err;
      }
    case 'date':
    case 'jdate':
      if (typeof v !== 'string' || !isIsoDate(v)) return fail(st, path, 'must be a date in YYYY-MM-DD format');
      return v;
    case 'datetime':
    case 'jdatetime':
      try {
        return normalizeIsoDateTime(v as string);
      } catch (err) {
        if (err instanceof DomainError) return fail(st, path, 'must be an ISO 8601 date-time (e.g. 2026-11-22T10:00:00Z)');
        throw err;
      }
    case 'boolean':
    case 'jboolean':
      if (typeof v !== 'boolean') return fail(st, path, 'must be true or false');
      return v;
  }
}

/** A text-like property value normalized as stored (lower-cased e-mail, E.164 phone…), else as given. */
function softProperty(def: PropertyDef, s: string): string {
  if (def.type === 'select' || def.type === 'text' || def.type === 'textarea') return s;
  try {
    const n = normalizePropertyValue(def, s);
    return typeof n === 'string' ? n : s;
  } catch (err) {
    if (err instanceof DomainError) return s;
    throw err;
  }
}
