import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { ApiError, errors, FieldChecks, type FieldIssue } from '../errors.js';
import type { Ctx } from './context.js';
import { heldIssues, NOT_FINITE } from './body-checks.js';
import { closestName, didYouMean, typeMessage } from './suggest.js';

/**
 * Request validation, shared by Fastify's validator compiler (app.ts), the error handler and the batch
 * endpoints, which validate each input against the single call's own schema so that a bad input gets
 * exactly the answer the single call would give (CONTRACT C.2).
 */

// Bodies are never coerced and unknown fields are kept so they can be rejected (B.2); query strings
// are parsed into their declared types and get their defaults. `verbose` puts the failing schema and value
// on each error (only when validation fails): the messages name the closest known field or value and the
// type of an array's items.
function makeAjv(part: 'body' | 'other'): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    coerceTypes: part === 'body' ? false : 'array',
    useDefaults: part !== 'body',
    removeAdditional: false,
    verbose: true,
  });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

const bodyAjv = makeAjv('body');
const otherAjv = makeAjv('other');

/**
 * Marks an array of a body schema whose items the handler validates one by one (batch `inputs`): the
 * document shows the item schema, while the request validator checks only that each item is an object,
 * so one bad input does not refuse the others.
 */
export const PER_ITEM = 'x-validated-per-item';

function shallowItems(schema: Record<string, any>): Record<string, any> {
  const props = schema.properties as Record<string, any> | undefined;
  if (!props || !Object.values(props).some((p) => p?.[PER_ITEM])) return schema;
  const out: Record<string, any> = {};
  for (const [k, p] of Object.entries(props)) out[k] = p?.[PER_ITEM] ? { ...p, items: { type: 'object' } } : p;
  return { ...schema, properties: out };
}

/** Fastify's validator compiler (app.ts). */
export function compileRequestSchema(schema: Record<string, any>, httpPart: string | undefined): ValidateFunction {
  if (httpPart === 'body') return withHeldIssues(bodyAjv.compile(shallowItems(schema)));
  const validate = otherAjv.compile(schema);
  return httpPart === 'querystring' ? finiteQuery(validate) : validate;
}

/** The keyword of the issues the JSON parser held for a body (http/body-checks.ts); `params.field` names the field. */
const HELD = 'wellFormed';

/**
 * B.2: the values the JSON parser refused (a NUL, a lone surrogate, a number that is not finite) fail the body's
 * validation, reported with the schema's own failures so that the value rules run on the other fields too and every
 * invalid field is named at once (C.5). One WeakMap lookup per body.
 */
function withHeldIssues(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown) => {
    const valid = validate(data);
    const held = heldIssues(data);
    checked.errors = validate.errors;
    if (held === undefined) return valid;
    const own = held.map((h): ErrorObject => ({ instancePath: '', schemaPath: '#', keyword: HELD, params: { field: h.field }, message: h.message }));
    checked.errors = [...own, ...(validate.errors ?? [])];
    return false;
  }) as ValidateFunction;
  return checked;
}

/**
 * B.2: a number of the query string is finite. Ajv's coercion reads `?page=1e309` as Infinity and lets it
 * through (`integer` and `minimum` hold for it), so the coerced values are looked at once more: a few
 * `typeof` tests per request. (A query value cannot hold a lone surrogate: an escape of one, `%ED%A0%80`, is
 * invalid UTF-8 and stays undecoded, and raw bytes beyond ASCII are refused by Node's HTTP parser.)
 */
function finiteQuery(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown) => {
    if (!validate(data)) {
      checked.errors = validate.errors;
      return false;
    }
    checked.errors = nonFiniteIssues(data);
    return checked.errors === null;
  }) as ValidateFunction;
  return checked;
}

const notFinite = (x: unknown) => typeof x === 'number' && !Number.isFinite(x);

/** Ajv-shaped issues (ajvIssues names the parameter) of the query's values that are not finite numbers; else null. */
function nonFiniteIssues(query: unknown): ErrorObject[] | null {
  if (!query || typeof query !== 'object') return null;
  let out: ErrorObject[] | null = null;
  for (const k in query) {
    const v = (query as Record<string, unknown>)[k];
    if (!(notFinite(v) || (Array.isArray(v) && v.some(notFinite)))) continue;
    (out ??= []).push({ instancePath: `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, schemaPath: '#', keyword: 'finite', params: {}, message: NOT_FINITE });
  }
  return out;
}

/** A body validator for one item of a batch, compiled as the single call's route compiles it. */
export function compileBodySchema(schema: TSchema): ValidateFunction {
  return bodyAjv.compile(schema);
}

// Read-only fields get their own message (B.2): they are rejected like unknown ones.
const READ_ONLY = new Set(['id', 'createdAt', 'updatedAt', 'deletedAt', 'number', 'subtotal', 'total', 'memberCount', 'sentAt']);

/** `/items/2/qty` → `items[2].qty`. */
export function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

type AjvIssue = Pick<ErrorObject, 'instancePath' | 'keyword' | 'message' | 'params'> & Partial<Pick<ErrorObject, 'parentSchema' | 'data'>>;

/** The properties an object schema declares (what an unknown field may have meant). */
const declared = (schema: unknown): string[] => Object.keys((schema as { properties?: object } | undefined)?.properties ?? {});

export function ajvIssues(issues: AjvIssue[]): FieldIssue[] {
  const seen = new Set<string>();
  const out: FieldIssue[] = [];
  // A union of literals (`'asc' | 'desc'`) fails with one `const` error per branch: one message naming
  // every allowed value says more (C.5).
  const allowed = new Map<string, unknown[]>();
  for (const i of issues) {
    if (i.keyword === 'const') allowed.set(i.instancePath, [...(allowed.get(i.instancePath) ?? []), (i.params as { allowedValue?: unknown }).allowedValue]);
  }
  for (const i of issues) {
    let field: string;
    let message: string;
    let suggestion: string | undefined;
    const params = i.params as Record<string, unknown>;
    if (i.keyword === 'additionalProperties') {
      const name = String(params.additionalProperty);
      field = fieldPath(i.instancePath, name);
      if (READ_ONLY.has(name) && !i.instancePath) message = 'is read-only';
      else {
        suggestion = closestName(name, declared(i.parentSchema));
        message = 'is not a known field' + (suggestion === undefined ? '' : didYouMean(suggestion));
      }
    } else if (i.keyword === 'required') {
      field = fieldPath(i.instancePath, String(params.missingProperty));
      message = 'is required';
    } else if (i.keyword === HELD) {
      field = String(params.field);
      message = i.message!;
    } else if (i.keyword === 'anyOf' || i.keyword === 'oneOf') {
      continue; // the branches' own errors say more; a bare "must match a schema in anyOf" helps no one
    } else {
      field = fieldPath(i.instancePath);
      message = i.message ?? 'is invalid';
      if (i.keyword === 'type') message = typeMessage(params.type, i.parentSchema);
      let values: unknown[] | undefined;
      if (i.keyword === 'enum' && Array.isArray(params.allowedValues)) {
        values = params.allowedValues;
        message = `must be one of ${values.join(', ')}`;
      }
      if (i.keyword === 'const') {
        values = allowed.get(i.instancePath)!;
        message = values.length > 1 ? `must be one of ${values.join(', ')}` : `must be ${JSON.stringify(values[0])}`;
      }
      if (values) {
        // A misspelt value of a list of names (`sortKey=first_name`) gets the closest one.
        if (typeof i.data === 'string')
          suggestion = closestName(
            i.data,
            values.filter((v): v is string => typeof v === 'string'),
          );
        if (suggestion !== undefined) message += didYouMean(suggestion);
      }
    }
    // A key with a lone surrogate is named with U+FFFD in its place: the answer itself stays well-formed (B.2).
    field = field.toWellFormed();
    const k = field + '\0' + message;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(suggestion === undefined ? { field, message } : { field, message, suggestion });
  }
  if (out.length === 0 && issues.length > 0) {
    out.push({ field: fieldPath(issues[0].instancePath), message: issues[0].message ?? 'is invalid' });
  }
  return out;
}

const WHERE: Record<string, string> = { querystring: 'query parameter ', params: 'path parameter ', headers: 'header ' };

/**
 * The value rules of a write body (field → the service's own rule, which throws a DomainError or a 400
 * naming the field): what the schema cannot say (blank names, e-mail, phone, CNPJ, dates…). A route
 * names them in its config, a batch resource beside its schemas.
 */
export type ValueRules = Readonly<Record<string, (value: never) => unknown>>;

/**
 * Value rules that read the tenant's data (a record's `customProperties` against the tenant's property
 * definitions): run like ValueRules on a body whose shape is refused, with the request's context.
 */
export type DataValueRules = Readonly<Record<string, (value: never, ctx: Ctx) => Promise<unknown>>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** C.5: rules of body values, run on a body whose shape is refused too. */
    valueRules?: ValueRules;
    /** C.5: the same for rules that read the tenant's data. */
    dataValueRules?: DataValueRules;
  }
}

/**
 * C.5: every invalid field is reported at once. A body whose shape is refused never reaches the service,
 * so its fields that the schema did not already refuse (strings, numbers, and the lists and objects that
 * passed it: a proposal's items, a webhook's headers) go through the service's value rules here:
 * `{ firstName: 1, email: "bad" }` names both fields. `null` (a field cleared) is left to the service.
 */
function valueIssues(body: unknown, rules: ValueRules, refused: FieldIssue[]): FieldIssue[] {
  const checks = new FieldChecks();
  for (const [field, value] of judged(body, rules, refused)) {
    try {
      checks.check(field, () => rules[field](value as never));
    } catch {
      // A rule that cannot judge a value of this type leaves it to the schema's answer.
    }
  }
  return checks.list();
}

/** The fields of `body` that have a rule and that the schema did not refuse, with their values (see valueIssues). */
function judged(body: unknown, rules: object, refused: FieldIssue[]): [string, unknown][] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [];
  const named = new Set(refused.map((d) => d.field.split(/[.[]/)[0]));
  const out: [string, unknown][] = [];
  for (const field of Object.keys(rules)) {
    const value = (body as Record<string, unknown>)[field];
    if (named.has(field) || (typeof value !== 'string' && typeof value !== 'number' && (typeof value !== 'object' || value === null))) continue;
    out.push([field, value]);
  }
  return out;
}

/**
 * The 400 `validation_failed` of a schema's failures (B.2); `context` is Fastify's validation context.
 * With the body and its value rules, the refused values of its other fields are named too (C.5).
 */
export function validationError(issues: AjvIssue[], context = 'body', body?: unknown, rules?: ValueRules): ApiError {
  return errorOf(bodyIssues(issues, context, body, rules), context);
}

/**
 * validationError, with the rules that read the tenant's data run too (their own failure leaves the answer
 * as validationError gives it). `issues` must be read before any await: Ajv keeps them on its function.
 */
export async function validationErrorWithData(
  issues: AjvIssue[],
  context: string,
  body: unknown,
  rules: ValueRules | undefined,
  dataRules: DataValueRules,
  ctx: Ctx,
): Promise<ApiError> {
  const details = bodyIssues(issues, context, body, rules);
  if (context === 'body') {
    const checks = new FieldChecks();
    for (const [field, value] of judged(body, dataRules, details)) {
      try {
        await checks.checkAsync(field, () => dataRules[field](value as never, ctx));
      } catch {
        // As valueIssues: a rule that cannot judge this value, or cannot read what it needs, says nothing.
      }
    }
    details.push(...checks.list());
  }
  return errorOf(details, context);
}

function bodyIssues(issues: AjvIssue[], context: string, body: unknown, rules: ValueRules | undefined): FieldIssue[] {
  const details = ajvIssues(issues);
  if (context === 'body' && rules) details.push(...valueIssues(body, rules, details));
  return details;
}

function errorOf(found: FieldIssue[], context: string): ApiError {
  let details = found;
  // Headers are named as clients write them (`Idempotency-Key`), not as Node lower-cases them.
  if (context === 'headers')
    details = details.map((d) => ({ ...d, field: d.field.replace(/(^|-)([a-z])/g, (_m, p: string, c: string) => p + c.toUpperCase()) }));
  const first = details[0];
  const message = first ? `${WHERE[context] ?? ''}${first.field ? first.field + ' ' : ''}${first.message}`.trim() : 'The request is invalid';
  return errors.validation(details, message);
}
