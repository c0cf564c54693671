import { Type, type Static } from '@sinclair/typebox';
import {
  CursorParam,
  CustomProperties,
  DeletedAt,
  Envelope,
  Nullable,
  PageQuery,
  PageSizeParams,
  SortOrder,
  SyncQuery,
  Timestamp,
} from '../../http/schemas.js';

const NAME_MAX = 200;

const example = {
  id: 'con_3kT9xQ2mL8vB1nR7pW4z',
  firstName: 'Maria',
  lastName: 'Silva',
  email: 'maria@acme.com.br',
  phone: '+5511987654321',
  companyId: 'com_8Fq2kL0pX9wR3tY6uI1o',
  ownerId: 'usr_Aa1Bb2Cc3Dd4Ee5Ff6Gg',
  tags: ['tag_8Fq2kL0pX9wR3tY6uI1o'],
  customProperties: { prop_7hG5fD3sA1qW9eR7tY5u: 'smb' },
  score: 72,
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

/** The contact as every read returns it (single read = list item = event payload). */
export const Contact = Type.Object(
  {
    id: Type.String(),
    firstName: Type.String(),
    lastName: Nullable(Type.String()),
    email: Nullable(Type.String({ description: 'Trimmed and lower-cased; unique per tenant' })),
    phone: Nullable(Type.String({ description: 'E.164 (`+5511987654321`); unique per tenant' })),
    companyId: Nullable(Type.String({ description: 'Associated company' })),
    ownerId: Nullable(Type.String({ description: 'Owning user' })),
    tags: Type.Array(Type.String(), { description: 'Tag ids' }),
    customProperties: CustomProperties,
    score: Nullable(Type.Number()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: DeletedAt,
  },
  { $id: 'Contact', title: 'Contact', examples: [example] },
);
export type ContactT = Static<typeof Contact>;

const Id = (description: string) => Type.String({ description });
const fields = {
  lastName: Type.Optional(Nullable(Type.String({ maxLength: NAME_MAX }))),
  email: Type.Optional(Nullable(Type.String({ maxLength: 254, description: 'Validated, trimmed and lower-cased; unique per tenant (409 duplicate_email)' }))),
  phone: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 64,
        description: 'Normalized to E.164; numbers without `+` are read as Brazilian; unique per tenant (409 duplicate_phone)',
      }),
    ),
  ),
  companyId: Type.Optional(
    Nullable(
      Id(
        'Company id (404 when missing). When omitted and the contact has no company, the company whose `domain` equals the e-mail domain is associated (if exactly one)',
      ),
    ),
  ),
  ownerId: Type.Optional(Nullable(Id('Owning user id (404 when missing); no default: unset unless given'))),
  tags: Type.Optional(Type.Array(Type.String(), { maxItems: 100, description: 'Tag ids; on PATCH the array replaces the whole set' })),
  customProperties: Type.Optional(CustomProperties),
  score: Type.Optional(Nullable(Type.Number())),
};

export const ContactCreate = Type.Object(
  { firstName: Type.String({ minLength: 1, maxLength: NAME_MAX }), ...fields },
  {
    additionalProperties: false,
    examples: [{ firstName: 'Maria', lastName: 'Silva', email: 'Maria@Acme.com.br', phone: '(11) 98765-4321', tags: [], score: 72 }],
  },
);
export type ContactCreateT = Static<typeof ContactCreate>;

export const ContactUpdate = Type.Object(
  { firstName: Type.Optional(Type.String({ minLength: 1, maxLength: NAME_MAX })), ...fields },
  {
    additionalProperties: false,
    description: 'Any subset of the create fields; `null` clears an optional field; `customProperties` merges key by key (`null` clears a key)',
    examples: [{ score: 90, tags: ['tag_8Fq2kL0pX9wR3tY6uI1o'] }, { phone: null }],
  },
);
export type ContactUpdateT = Static<typeof ContactUpdate>;

export const SORT_KEYS = ['createdAt', 'updatedAt', 'firstName', 'lastName', 'email', 'score'] as const;
export type ContactSortKey = (typeof SORT_KEYS)[number];
const SortKey = Type.Optional(
  Type.Union(
    SORT_KEYS.map((k) => Type.Literal(k)),
    { description: 'Sort field (default `createdAt`); ties break by `id`; empty values sort last' },
  ),
);

export const ContactListQuery = Type.Object(
  {
    ...PageQuery,
    search: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'Substring of first name, last name, full name or e-mail, ignoring case and accents (`joao` finds "João", `ZOË` finds "zoë"); also of the phone digits when the term looks like a phone (only digits, `+ ( ) - .` and spaces, at least 3 digits): `(11) 9876` matches phones, `sort1a2b3` does not',
        examples: ['maria', '(11) 98765'],
      }),
    ),
    ownerId: Type.Optional(Type.String({ description: 'Only contacts of this owner' })),
    ...SyncQuery,
    sortKey: SortKey,
    sortOrder: SortOrder,
  },
  { additionalProperties: false },
);
export type ContactListQueryT = Static<typeof ContactListQuery>;

const FILTER_DESCRIPTION = `Filter group: \`{ operator: "AND" | "OR", conditions: [Condition | Group] }\`; a condition is
\`{ field, operator, value? }\`. Groups nest up to 3 levels (the root is level 1); at most 50 conditions and 10,000
values in total. Complexity budget: 100, where a condition on \`tags\` or on a custom property costs 12 and any other
condition 1 (each of those reads record_tags or every row's custom properties again), so at most 8 of them; over budget
is 400 \`validation_failed\` on \`filters\`.

Operators: \`eq\`, \`neq\`, \`gt\`, \`gte\`, \`lt\`, \`lte\`, \`after\`, \`before\`, \`contains\`, \`in\`, \`notIn\`, \`exists\`, \`notExists\`.
\`gt\`/\`lt\`/\`after\`/\`before\` are strict, \`gte\`/\`lte\` inclusive; \`contains\` is a substring ignoring case and accents in every script; \`eq\`/\`in\`
on text are exact after the field's normalization (e-mails lower-cased, phones to E.164); \`neq\`/\`notIn\` also match
records where the field is empty; \`in\`/\`notIn\` take a non-empty array (≤ 1000); \`exists\`/\`notExists\` take no \`value\`.

Contact fields: \`id\`, \`firstName\`, \`lastName\`, \`email\`, \`phone\`, \`ownerId\`, \`companyId\`, \`score\` (number),
\`createdAt\`, \`updatedAt\` (ISO 8601 date-times, compared in UTC), \`tags\` (\`contains\` one tag id, \`in\` any of the ids,
\`notIn\` none of them, \`exists\`, \`notExists\`) and \`customProperties.<propertyId>\` (operators by property type: number →
comparisons; text, textarea, email, phone, url, select → eq/neq/contains/in/notIn; date, datetime → comparisons and
after/before; boolean → eq/neq; multi_select → contains/in/notIn; every type → exists/notExists).`;

/** Root group of the filter language; nested conditions are checked by src/domain/filters.ts. */
export const FilterGroupSchema = Type.Object(
  {
    operator: Type.Union([Type.Literal('AND'), Type.Literal('OR')]),
    conditions: Type.Array(Type.Unknown(), { description: 'Conditions `{ field, operator, value? }` or nested groups' }),
  },
  {
    additionalProperties: false,
    description: FILTER_DESCRIPTION,
    examples: [
      {
        operator: 'AND',
        conditions: [
          { field: 'ownerId', operator: 'eq', value: 'usr_Aa1Bb2Cc3Dd4Ee5Ff6Gg' },
          { field: 'score', operator: 'gte', value: 80 },
          {
            operator: 'OR',
            conditions: [
              { field: 'createdAt', operator: 'after', value: '2026-01-01T00:00:00Z' },
              { field: 'tags', operator: 'contains', value: 'tag_8Fq2kL0pX9wR3tY6uI1o' },
            ],
          },
        ],
      },
    ],
  },
);

export const ContactSearchBody = Type.Object(
  {
    filters: Type.Optional(FilterGroupSchema),
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, 1-based (default 1)' })),
    ...PageSizeParams('pageSize'),
    cursor: CursorParam,
    sortKey: SortKey,
    sortOrder: SortOrder,
  },
  {
    additionalProperties: false,
    examples: [
      {
        filters: { operator: 'AND', conditions: [{ field: 'score', operator: 'gte', value: 80 }] },
        page: 1,
        pageSize: 50,
        sortKey: 'score',
        sortOrder: 'desc',
      },
    ],
  },
);
export type ContactSearchBodyT = Static<typeof ContactSearchBody>;

export const ContactPage = Envelope(Contact, 'ContactPage');
