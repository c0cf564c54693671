import { Type, type Static, type TNull, type TSchema, type TUnion } from '@sinclair/typebox';

/**
 * `T | null`. Scalars become `type: [T, 'null']` rather than `anyOf`: fast-json-stringify serializes a
 * type array directly, while for `anyOf` it runs a validator per value to pick the branch (a measurable
 * share of every response with nullable fields). Objects and references keep `anyOf`.
 */
export const Nullable = <T extends TSchema>(schema: T): TUnion<[T, TNull]> => {
  const t = (schema as { type?: unknown }).type;
  const s = schema as { $id?: string; const?: unknown; enum?: unknown[] };
  if (typeof t === 'string' && t !== 'object' && t !== 'array' && !s.$id && s.const === undefined) {
    const out: Record<string, unknown> = { ...schema, type: [t, 'null'] };
    if (Array.isArray(s.enum)) out.enum = [...s.enum, null];
    return out as unknown as TUnion<[T, TNull]>;
  }
  return Type.Union([schema, Type.Null()]);
};

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Stable machine-readable code' }),
    message: Type.String({ description: 'Human-readable explanation' }),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    field: Type.Optional(Type.String()),
    required: Type.Optional(Type.Array(Type.String())),
    have: Type.Optional(Type.Array(Type.String())),
    existingContactId: Type.Optional(Type.String()),
    ids: Type.Optional(Type.Array(Type.String())),
    limit: Type.Optional(Type.Number()),
    retryAfterSeconds: Type.Optional(Type.Number()),
    requestId: Type.Optional(Type.String()),
  },
  { $id: 'Error', title: 'Error', examples: [{ error: 'not_found', message: 'Contact not found' }] },
);
export const ErrorRef = Type.Ref('Error');

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (validation_failed, invalid_json, invalid_format, …)',
  401: 'Missing or invalid API key',
  403: 'The key lacks a required scope (insufficient_scope)',
  404: 'Not found',
  409: 'Conflict with an existing record',
  413: 'Body over 1 MiB',
  415: 'Body is not JSON',
  422: 'Business rule violated',
  429: 'Rate limit exceeded',
  500: 'Unexpected failure',
};

/** Error responses of a route, by status, all with the shared Error body. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = Type.Ref('Error', { description: ERROR_DESCRIPTIONS[s] ?? 'Error' });
  return out;
}

export const IdParams = Type.Object({ id: Type.String({ description: 'Record id' }) });

export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Page number, 1-based' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Records per page (max 100)' })),
};
export const SortOrder = Type.Optional(
  Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Sort direction' }),
);

export const Pagination = Type.Object({
  page: Type.Integer(),
  pageSize: Type.Integer(),
  total: Type.Integer({ description: 'Records matching the filters' }),
  totalPages: Type.Integer(),
  hasNext: Type.Boolean(),
  hasPrev: Type.Boolean(),
});
export type PaginationT = Static<typeof Pagination>;

export const Envelope = <T extends TSchema>(item: T, title?: string) =>
  Type.Object({ data: Type.Array(item), pagination: Pagination }, title ? { title } : {});

export const CustomProperties = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Custom property values keyed by property id (never by internalName)',
  examples: [{ prop_segment: 'smb' }],
});

/** ISO-8601 timestamp string (validated by the service, which answers the contract's error codes). */
export const Timestamp = Type.String({ description: 'UTC ISO-8601 timestamp with milliseconds', examples: ['2026-11-22T10:00:00.000Z'] });
