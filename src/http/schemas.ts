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
    details: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String(),
          message: Type.String(),
          suggestion: Type.Optional(Type.String({ description: 'For an unknown field or value: the known one it most likely meant' })),
        }),
      ),
    ),
    field: Type.Optional(Type.String()),
    required: Type.Optional(Type.Array(Type.String())),
    have: Type.Optional(Type.Array(Type.String())),
    existingContactId: Type.Optional(Type.String({ description: 'On a duplicate e-mail or phone: the contact holding it' })),
    existingCompanyId: Type.Optional(Type.String({ description: 'On a duplicate CNPJ or domain: the company holding it' })),
    existingTagId: Type.Optional(Type.String({ description: 'On a duplicate tag name: the tag holding it' })),
    existingProposalId: Type.Optional(Type.String({ description: "On `duplicate_proposal_for_deal`: the deal's live proposal" })),
    mergedIntoId: Type.Optional(Type.String({ description: 'On `not_found` for a contact or company a merge folded into another: the one it lives on in' })),
    ids: Type.Optional(Type.Array(Type.String())),
    limit: Type.Optional(Type.Number()),
    retryAfterSeconds: Type.Optional(Type.Number()),
    requestId: Type.Optional(Type.String()),
    docUrl: Type.Optional(
      Type.String({ description: 'Where the reference explains this error (a path of this server)', examples: ['/docs#description/not_found'] }),
    ),
  },
  { $id: 'Error', title: 'Error', examples: [{ error: 'not_found', message: 'Contact not found' }] },
);
export const ErrorRef = Type.Ref('Error');

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (validation_failed, invalid_json, invalid_format, invalid_cursor, …)',
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

/** An opaque continuation token (CONTRACT C.1); garbage is 400 `invalid_cursor`, never a 5xx. */
export const CursorParam = Type.Optional(
  Type.String({
    // No minLength or maxLength: an empty or overlong cursor is malformed, 400 `invalid_cursor` (listing/cursor.ts decodeCursor).
    description:
      'Opaque `pagination.nextCursor` of the previous page: continues after its last record (keyset, not offset). Instead of `page` ' +
      '(both: 400 `validation_failed`). Bound to the tenant, the API key, the endpoint, the sort and the other query parameters, ' +
      'which must repeat those of the first page; otherwise, or when malformed or altered, 400 `invalid_cursor`.',
  }),
);

/**
 * The page size as both `pageSize` and `limit` (CONTRACT C.5: each is accepted wherever the spec names
 * the other; both given and different is 400). `canonical` is the spec's name on that endpoint. Read
 * the size with `pageSizeOf` (http/pagination.ts).
 * NOTE: no schema default on either: a default would make every request look as if it gave both.
 */
export function PageSizeParams(canonical: 'pageSize' | 'limit', what = 'Records per page') {
  const alias = canonical === 'pageSize' ? 'limit' : 'pageSize';
  const doc = (name: string) =>
    name === canonical
      ? `${what} (default 50, max 100); \`${alias}\` is an alias`
      : `Alias of \`${canonical}\` (same range); both given with different values: 400 \`validation_failed\``;
  return {
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: doc('pageSize') })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: doc('limit') })),
  };
}

// NOTE: `page` has no schema default: a default would make every request look as if it named a page,
// and `cursor` with `page` must be refused (C.1).
export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, 1-based (default 1)' })),
  ...PageSizeParams('pageSize'),
  cursor: CursorParam,
};

/** `updatedAfter` and `includeDeleted`, for the incremental sync of C.1. */
export const SyncQuery = {
  updatedAfter: Type.Optional(
    Type.String({
      description:
        'ISO 8601 date-time; only records modified strictly after it (non-ISO: 400 `validation_failed`). With `sortKey=updatedAt&sortOrder=asc` and `cursor`, the incremental sync of a whole table',
      examples: ['2026-11-22T10:00:00Z'],
    }),
  ),
  includeDeleted: Type.Optional(
    Type.Boolean({
      description:
        '`true` also returns soft-deleted records, each with a non-null `deletedAt` (a delete moves `updatedAt`, so an `updatedAfter` sync sees it); `total` counts them too. Default `false`: deleted records stay invisible',
    }),
  ),
};
export const SortOrder = Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Sort direction' }));

export const Pagination = Type.Object(
  {
    page: Nullable(Type.Integer({ description: 'Page number; `null` when the request used `cursor`' })),
    pageSize: Type.Integer(),
    total: Type.Integer({ description: 'Records matching the filters' }),
    totalPages: Nullable(Type.Integer({ description: '`null` when the request used `cursor`' })),
    hasNext: Type.Boolean(),
    hasPrev: Nullable(Type.Boolean({ description: '`null` when the request used `cursor`' })),
    nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` to get the page after this one (same sort and filters); `null` on the last page' })),
  },
  { description: 'A page of records, with `nextCursor` to continue after it' },
);
export type PaginationT = Static<typeof Pagination>;

export const Envelope = <T extends TSchema>(item: T, title?: string) => Type.Object({ data: Type.Array(item), pagination: Pagination }, title ? { title } : {});

export const CustomProperties = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Custom property values keyed by property id (never by internalName)',
  examples: [{ prop_segment: 'smb' }],
});

/** ISO-8601 timestamp string (validated by the service, which answers the contract's error codes). */
export const Timestamp = Type.String({ description: 'UTC ISO-8601 timestamp with milliseconds', examples: ['2026-11-22T10:00:00.000Z'] });

/** Present only in listings with `includeDeleted=true` (C.1): when the record was soft-deleted, else null. */
export const DeletedAt = Type.Optional(
  Nullable(Type.String({ description: 'Only with `includeDeleted=true`: when the record was soft-deleted (UTC ISO-8601), `null` while live' })),
);

/** The paging rules every list endpoint shares, for its OpenAPI description (C.1). */
export const LISTING_DOC =
  'Every answer carries `pagination.nextCursor` (`null` on the last page). Send it back as `cursor` (instead of `page`; both: 400 ' +
  '`validation_failed`) with the same other parameters to get the next page by keyset: each record that exists and does not change ' +
  'during the walk is returned exactly once, however deep. With `cursor`, `page`, `totalPages` and `hasPrev` are `null`. A malformed or ' +
  'altered cursor, or one from another tenant, API key, endpoint, sort or set of filters, is 400 `invalid_cursor`.';
