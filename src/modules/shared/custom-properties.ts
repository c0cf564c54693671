import { FieldChecks } from '../../errors.js';
import type { Db } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import type { DataValueRules } from '../../http/validation.js';
import { mergeCustomProperties, normalizeCustomProperties, type PropertyDef, type PropertyType } from '../../domain/properties.js';
import { propertyDefsById } from '../properties/properties.service.js';
import { parseJson } from '../../util/json.js';

export type ObjectType = 'contact' | 'company' | 'deal';

/** Property definitions of one object type, by id. */
export function propertyDefs(ctx: Ctx, objectType: ObjectType): Promise<Map<string, PropertyDef>> {
  return tenantPropertyDefs(ctx.db, ctx.tenantId, objectType);
}

/** The same for a tenant outside any request (the dynamic-list worker). */
export function tenantPropertyDefs(db: Db, tenantId: string, objectType: ObjectType): Promise<Map<string, PropertyDef>> {
  return propertyDefsById(db, tenantId, objectType);
}

/**
 * Validates and normalizes the `customProperties` of a write (B.3); every invalid one is recorded in
 * `checks` as `customProperties.<id>`. Undefined when the write does not give them.
 */
export async function checkCustomProperties(
  ctx: Ctx,
  objectType: ObjectType,
  input: Record<string, unknown> | null | undefined,
  checks: FieldChecks,
): Promise<Record<string, unknown> | undefined> {
  return checkCustomPropertiesIn(ctx.db, ctx.tenantId, objectType, input, checks);
}

/**
 * The same, reading the definitions through `db`: a write's transaction passes its own, so that the read is one of
 * its statements (on SQLite a statement outside it would first commit the group it joins: sqlite-fast-driver.ts).
 */
export async function checkCustomPropertiesIn(
  db: Db,
  tenantId: string,
  objectType: ObjectType,
  input: Record<string, unknown> | null | undefined,
  checks: FieldChecks,
): Promise<Record<string, unknown> | undefined> {
  if (input == null) return undefined;
  const { values, issues } = normalizeCustomProperties(input, await tenantPropertyDefs(db, tenantId, objectType));
  for (const issue of issues) checks.add(issue.field, issue.message);
  return values;
}

/** C.5: the rule of `customProperties` on a body whose shape is refused (a route's `dataValueRules`). */
export function customPropertiesRules(objectType: ObjectType): DataValueRules {
  return {
    customProperties: async (value: Record<string, unknown>, ctx: Ctx) => {
      const checks = new FieldChecks();
      await checkCustomProperties(ctx, objectType, value, checks);
      checks.assert();
    },
  };
}

/** The JSON to store: on create the checked values; on PATCH merged key by key into `existingJson` (`null` clears a key). */
export function customPropertiesJson(values: Record<string, unknown> | undefined, existingJson?: string): string {
  const existing = parseJson<Record<string, unknown>>(existingJson, {});
  return JSON.stringify(values === undefined ? existing : mergeCustomProperties(existing, values));
}

export function readCustomProperties(json: string | null | undefined): Record<string, unknown> {
  return parseJson<Record<string, unknown>>(json, {});
}
