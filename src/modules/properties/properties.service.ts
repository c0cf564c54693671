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
  const rows = await repo.propertyDefRows(db, tenantId, objectType);
  const defs = new Map<string, PropertyDef>();
  for (const r of rows) defs.set(r.id, { id: r.id, type: r.type as PropertyType, options: parsedOptions(r.options) });
  return defs;
}

type Options = { value: string; label: string }[];
/** Options as parsed from their stored text, shared by every read of the same text (they are only read). */
const optionsByText = new Map<string, Options>();
/** Bounds the cache: past it, it starts over (a tenant's definitions are a few dozen texts). */
const OPTIONS_CACHE_MAX = 1000;

/**
 * The parsed `options` of a definition. Every create that gives customProperties reads its type's definitions,
 * whose options rarely change: parsing them again each time (JSON.parse of each select's list) was ~2 % of a create.
 * Keyed by the text itself, so a changed definition is parsed anew.
 */
function parsedOptions(text: string | null): Options | null {
  if (text === null || text === '') return null;
  let options = optionsByText.get(text);
  if (!options) {
    if (optionsByText.size >= OPTIONS_CACHE_MAX) optionsByText.clear();
    options = Object.freeze(parseJson<Options>(text, [])) as Options;
    optionsByText.set(text, options);
  }
  return options;
}
