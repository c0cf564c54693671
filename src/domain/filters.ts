// STUB: replaced by the filter language implementation (contacts search, dynamic lists).
import type { FieldIssue } from '../errors.js';
import type { PropertyDef } from './properties.js';
export function validateFilter(_filter: unknown, _objectType: 'contact' | 'company' | 'deal', _properties: Map<string, PropertyDef>, _path = 'filters'): FieldIssue[] {
  return [];
}
