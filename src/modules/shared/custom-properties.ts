import { errors } from '../../errors.js';
import type { Db } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { mergeCustomProperties, normalizeCustomProperties, type PropertyDef, type PropertyType } from '../../domain/properties.js';
import { listProperties } from '../properties/properties.repo.js';
import { parseJson } from '../../util/json.js';

export type ObjectType = 'contact' | 'company' | 'deal';

/** Property definitions of one object type, by id. */
export function propertyDefs(ctx: Ctx, objectType: ObjectType): Promise<Map<string, PropertyDef>> {
  return tenantPropertyDefs(ctx.db, ctx.tenantId, objectType);
}

/** The same for a tenant outside any request (the dynamic-list worker). */
export async function tenantPropertyDefs(db: Db, tenantId: string, objectType: ObjectType): Promise<Map<string, PropertyDef>> {
  const rows = await listProperties(db, tenantId, objectType);
  return new Map(rows.map((r) => [r.id, { id: r.id, type: r.type as PropertyType, options: parseJson(r.options, null) }]));
}

/**
 * Validates and normalizes `customProperties` of a write (B.3) and returns the JSON to store: on
 * create the given values; on PATCH merged key by key into `existingJson`; `null` clears a key.
 * Throws 400 validation_failed naming `customProperties.<id>`.
 */
export async function prepareCustomProperties(
  ctx: Ctx,
  objectType: ObjectType,
  input: Record<string, unknown> | undefined,
  existingJson?: string,
): Promise<string> {
  const existing = parseJson<Record<string, unknown>>(existingJson, {});
  if (input === undefined) return JSON.stringify(existing);
  const { values, issues } = normalizeCustomProperties(input, await propertyDefs(ctx, objectType));
  if (issues.length) throw errors.validation(issues);
  return JSON.stringify(mergeCustomProperties(existing, values));
}

export function readCustomProperties(json: string | null | undefined): Record<string, unknown> {
  return parseJson<Record<string, unknown>>(json, {});
}
