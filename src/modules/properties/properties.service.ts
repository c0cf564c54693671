import type { Db } from '../../db/index.js';
import type { PropertyDef, PropertyType } from '../../domain/properties.js';
import type { Ctx } from '../../http/context.js';
import { parseJson } from '../../util/json.js';
import * as repo from './properties.repo.js';
import type { PropertyT } from './properties.schema.js';

export function toProperty(r: repo.PropertyRow): PropertyT {
  const out: PropertyT = {
    id: r.id,
    objectType: r.object_type as PropertyT['objectType'],
    internalName: r.internal_name,
    label: r.label,
    type: r.type as PropertyT['type'],
    group: r.group_name,
    displayOrder: r.display_order,
    isDefaultInForm: r.is_default_in_form === 1,
  };
  if (r.type === 'select' || r.type === 'multi_select') out.options = parseJson<{ value: string; label: string }[]>(r.options, []);
  return out;
}

/** Property definitions of one object type, by displayOrder (spec 4.8). */
export async function listProperties(ctx: Ctx, objectType: PropertyT['objectType']): Promise<PropertyT[]> {
  return (await repo.listProperties(ctx.db, ctx.tenantId, objectType)).map(toProperty);
}

/** A tenant's property definitions of one object type, by id, as values are checked against them (also outside a request). */
export async function propertyDefsById(db: Db, tenantId: string, objectType: PropertyT['objectType']): Promise<Map<string, PropertyDef>> {
  const rows = await repo.listProperties(db, tenantId, objectType);
  return new Map(rows.map((r) => [r.id, { id: r.id, type: r.type as PropertyType, options: parseJson(r.options, null) }]));
}
