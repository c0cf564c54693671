import { Type, type Static } from '@sinclair/typebox';
import { CustomProperties, DeletedAt, Envelope, Nullable, PageQuery, SortOrder, SyncQuery, Timestamp } from '../../http/schemas.js';

const StringEnum = <T extends string[]>(values: [...T], description: string) => Type.Unsafe<T[number]>({ type: 'string', enum: values, description });

export const COMPANY_SORT_KEYS = ['createdAt', 'updatedAt', 'name', 'domain', 'cnpj', 'industry'] as const;
export type CompanySortKey = (typeof COMPANY_SORT_KEYS)[number];

const EXAMPLE = {
  id: 'com_4hW9sQ2mZ8xK1pLr7TcB',
  name: 'Acme Ltda',
  cnpj: '11222333000181',
  website: 'https://www.acme.com.br',
  domain: 'acme.com.br',
  phone: '+551133334444',
  industry: 'Manufacturing',
  ownerId: 'usr_9dK2mQ7pX1vB4nT8sR3L',
  tags: ['tag_8Fq2nR5tK1mW3pZ7xC9V'],
  customProperties: { prop_2kLm9QxR4tV8wB1nC5Zs: 'ent' },
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

/** A company as every read returns it (spec 2.2); unset optional scalars are null. */
export const Company = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    cnpj: Nullable(Type.String({ description: '14 characters, punctuation stripped (digits only for a numeric CNPJ)' })),
    website: Nullable(Type.String({ description: 'Full http(s) URL' })),
    domain: Nullable(Type.String({ description: 'Bare lower-case host name; matches contacts by e-mail domain' })),
    phone: Nullable(Type.String({ description: 'E.164' })),
    industry: Nullable(Type.String()),
    ownerId: Nullable(Type.String()),
    tags: Type.Array(Type.String(), { description: 'Tag ids' }),
    customProperties: CustomProperties,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: DeletedAt,
  },
  { $id: 'Company', title: 'Company', examples: [EXAMPLE] },
);
export type CompanyT = Static<typeof Company>;

const Name = Type.String({ minLength: 1, maxLength: 255, description: 'Required; not blank' });
const Cnpj = Type.String({
  maxLength: 32,
  description: 'Punctuation is stripped and letters upper-cased; both check digits are verified (numeric or alphanumeric CNPJ). Unique per tenant.',
  examples: ['11.222.333/0001-81'],
});
const Website = Type.String({ maxLength: 2048, description: 'Full http(s) URL', examples: ['https://www.acme.com.br'] });
const Domain = Type.String({
  maxLength: 2048,
  description: 'Host name; a scheme, `www.`, port or path given is stripped and it is lower-cased. Unique per tenant.',
  examples: ['acme.com.br'],
});
const Phone = Type.String({ maxLength: 64, description: 'Normalized to E.164 (Brazil is the default region); not unique' });
const Industry = Type.String({ maxLength: 255 });
const OwnerId = Type.String({ description: 'A user of the tenant' });
const Tags = Type.Array(Type.String(), { maxItems: 100, description: 'Tag ids; replaces the whole set on PATCH' });

export const CompanyCreate = Type.Object(
  {
    name: Name,
    cnpj: Type.Optional(Nullable(Cnpj)),
    website: Type.Optional(Nullable(Website)),
    domain: Type.Optional(Nullable(Domain)),
    phone: Type.Optional(Nullable(Phone)),
    industry: Type.Optional(Nullable(Industry)),
    ownerId: Type.Optional(Nullable(OwnerId)),
    tags: Type.Optional(Tags),
    customProperties: Type.Optional(CustomProperties),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Acme Ltda', cnpj: '11.222.333/0001-81', website: 'https://www.acme.com.br', domain: 'acme.com.br', industry: 'Manufacturing' }],
  },
);
export type CompanyCreateT = Static<typeof CompanyCreate>;

/** Any subset of the create fields; `null` clears an optional field (`name` cannot be cleared). */
export const CompanyUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    cnpj: Type.Optional(Nullable(Cnpj)),
    website: Type.Optional(Nullable(Website)),
    domain: Type.Optional(Nullable(Domain)),
    phone: Type.Optional(Nullable(Phone)),
    industry: Type.Optional(Nullable(Industry)),
    ownerId: Type.Optional(Nullable(OwnerId)),
    tags: Type.Optional(Tags),
    customProperties: Type.Optional(CustomProperties),
  },
  { additionalProperties: false, examples: [{ industry: 'Retail', website: null }] },
);
export type CompanyUpdateT = Static<typeof CompanyUpdate>;

export const CompanyListQuery = Type.Object(
  {
    ...PageQuery,
    search: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'Substring of name, CNPJ (with or without punctuation), website or domain, ignoring case and accents (`acai` finds "Açaí")',
      }),
    ),
    ownerId: Type.Optional(Type.String({ description: 'Only companies of this owner' })),
    ...SyncQuery,
    sortKey: Type.Optional(StringEnum([...COMPANY_SORT_KEYS], 'Sort field (default `createdAt`); empty values sort last in both directions; ties break by id')),
    sortOrder: SortOrder,
  },
  { additionalProperties: false },
);
export type CompanyListQueryT = Static<typeof CompanyListQuery>;

export const CompanyPage = Envelope(Company, 'CompanyPage');
