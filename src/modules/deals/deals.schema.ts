import { Type, type Static } from '@sinclair/typebox';
import { CustomProperties, DeletedAt, Envelope, Nullable, PageQuery, SortOrder, SyncQuery, Timestamp } from '../../http/schemas.js';
import { Company } from '../companies/companies.schema.js';
import { Contact } from '../contacts/contacts.schema.js';

const StringEnum = <T extends string[]>(values: [...T], description: string) => Type.Unsafe<T[number]>({ type: 'string', enum: values, description });

export const DEAL_SORT_KEYS = ['updatedAt', 'createdAt', 'title', 'value', 'expectedCloseDate', 'closedAt'] as const;
export type DealSortKey = (typeof DEAL_SORT_KEYS)[number];

const EXAMPLE = {
  id: 'deal_7Hq3nW2xK9mR4tB1pZ6C',
  title: 'Acme — 50 licenses',
  pipelineId: 'pip_2mK8qR5tW1xN7pL3vB9Z',
  stageId: 'stg_5tR1wQ8mK3xB7nP2zL9V',
  value: 12500.5,
  currency: 'BRL',
  contactId: null,
  contact: null,
  companyId: null,
  company: null,
  ownerId: 'usr_9dK2mQ7pX1vB4nT8sR3L',
  expectedCloseDate: '2026-12-15',
  customProperties: {},
  tags: [],
  isWon: false,
  isLost: false,
  closedAt: null,
  lossReasonId: null,
  lossNotes: null,
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

/**
 * A deal as every read returns it (spec 2.3, CONTRACT B.5): `contact` and `company` are the single-read
 * shapes of those resources, `null` when unset or soft-deleted.
 */
export const Deal = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    pipelineId: Type.String(),
    stageId: Type.String(),
    value: Nullable(Type.Number({ description: 'Amount with at most 2 decimals, exact' })),
    currency: Type.String({ description: 'ISO 4217 code' }),
    contactId: Nullable(Type.String()),
    contact: Nullable(Contact),
    companyId: Nullable(Type.String()),
    company: Nullable(Company),
    ownerId: Nullable(Type.String()),
    expectedCloseDate: Nullable(Type.String({ description: 'YYYY-MM-DD' })),
    customProperties: CustomProperties,
    tags: Type.Array(Type.String(), { description: 'Tag ids' }),
    isWon: Type.Boolean(),
    isLost: Type.Boolean(),
    closedAt: Nullable(Timestamp),
    lossReasonId: Nullable(Type.String()),
    lossNotes: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: DeletedAt,
  },
  { $id: 'Deal', title: 'Deal', examples: [EXAMPLE] },
);
export type DealT = Static<typeof Deal>;

/** The deal summary of `GET /contacts/:id/deals` (spec 4.1). */
export const ContactDeal = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    stageId: Type.String(),
    pipelineId: Type.String(),
    value: Nullable(Type.Number()),
    currency: Type.String(),
    isWon: Type.Boolean(),
    isLost: Type.Boolean(),
    updatedAt: Timestamp,
  },
  {
    title: 'ContactDeal',
    examples: [
      (({ id, title, stageId, pipelineId, value, currency, isWon, isLost, updatedAt }) => ({
        id,
        title,
        stageId,
        pipelineId,
        value,
        currency,
        isWon,
        isLost,
        updatedAt,
      }))(EXAMPLE),
    ],
  },
);
export type ContactDealT = Static<typeof ContactDeal>;

const Title = Type.String({ minLength: 1, maxLength: 500, description: 'Required; not blank' });
const Id = (description: string) => Type.String({ description });
const Value = Type.Number({
  minimum: 0,
  description: 'Amount (≥ 0) with at most 2 decimals; stored exactly in minor units',
  examples: [19.99],
});
const Currency = Type.String({
  minLength: 1,
  maxLength: 8,
  description: 'ISO 4217 code (case-insensitive on input, returned upper-case); default BRL',
  examples: ['BRL'],
});
const ExpectedCloseDate = Type.String({ description: 'YYYY-MM-DD', examples: ['2026-12-15'] });
const ClosedAt = Type.String({ description: 'ISO 8601 date-time; only for a won deal (default: now)', examples: ['2026-11-22T10:00:00Z'] });
const LossNotes = Type.String({ maxLength: 10000, description: 'Only for a lost deal' });
const Tags = Type.Array(Type.String(), { maxItems: 100, description: 'Tag ids; replaces the whole set on PATCH' });

// C.5: a deal's flags and stage never disagree, so reopening in a won or lost stage needs a stage move.
const REOPEN_RULE =
  ' A deal that sits in a won or lost stage is reopened only together with a `stageId` of a stage that is neither (422 `business_rule_violation` otherwise).';

const writable = {
  value: Type.Optional(Nullable(Value)),
  currency: Type.Optional(Currency),
  contactId: Type.Optional(Nullable(Id('A contact of the tenant'))),
  companyId: Type.Optional(Nullable(Id('A company of the tenant'))),
  ownerId: Type.Optional(Nullable(Id('A user of the tenant'))),
  expectedCloseDate: Type.Optional(Nullable(ExpectedCloseDate)),
  customProperties: Type.Optional(CustomProperties),
  tags: Type.Optional(Tags),
  isWon: Type.Optional(Type.Boolean({ description: 'Closing flag; true wins the deal (sets closedAt), false reopens it.' + REOPEN_RULE })),
  isLost: Type.Optional(Type.Boolean({ description: 'Closing flag; true loses the deal (closedAt = now), false reopens it.' + REOPEN_RULE })),
  closedAt: Type.Optional(Nullable(ClosedAt)),
  lossReasonId: Type.Optional(Nullable(Id('A loss reason of the tenant; only for a lost deal'))),
  lossNotes: Type.Optional(Nullable(LossNotes)),
};

export const DealCreate = Type.Object(
  {
    title: Title,
    pipelineId: Id('A pipeline of the tenant'),
    stageId: Id('A stage of `pipelineId` (409 stage_invalid otherwise)'),
    ...writable,
  },
  {
    additionalProperties: false,
    examples: [
      {
        title: 'Acme — 50 licenses',
        pipelineId: 'pip_2mK8qR5tW1xN7pL3vB9Z',
        stageId: 'stg_5tR1wQ8mK3xB7nP2zL9V',
        value: 12500.5,
        currency: 'BRL',
        expectedCloseDate: '2026-12-15',
      },
    ],
  },
);
export type DealCreateT = Static<typeof DealCreate>;

/**
 * Any subset of the create fields (CONTRACT B.5): `stageId` alone moves within the deal's pipeline;
 * `pipelineId` needs a `stageId` of that pipeline; flags close and reopen the deal.
 */
export const DealUpdate = Type.Object(
  {
    title: Type.Optional(Title),
    pipelineId: Type.Optional(Id('Moves the deal to another pipeline; requires `stageId` of that pipeline')),
    stageId: Type.Optional(Id('A stage of the deal’s pipeline (or of `pipelineId` when given)')),
    ...writable,
  },
  {
    additionalProperties: false,
    examples: [
      { stageId: 'stg_5tR1wQ8mK3xB7nP2zL9V' },
      { isWon: true, closedAt: '2026-11-22T10:00:00Z' },
      { isLost: true, lossReasonId: 'lr_3kT9…', lossNotes: 'Went with a competitor' },
      { isWon: false, stageId: 'stg_5tR1wQ8mK3xB7nP2zL9V' },
    ],
  },
);
export type DealUpdateT = Static<typeof DealUpdate>;

export const DealListQuery = Type.Object(
  {
    ...PageQuery,
    pipelineId: Type.Optional(Type.String({ description: 'Only deals of this pipeline' })),
    stageId: Type.Optional(Type.String({ description: 'Only deals in this stage' })),
    ownerId: Type.Optional(Type.String({ description: 'Only deals of this owner' })),
    contactId: Type.Optional(Type.String({ description: 'Only deals of this contact' })),
    companyId: Type.Optional(Type.String({ description: 'Only deals of this company' })),
    isWon: Type.Optional(Type.Boolean({ description: '`true` or `false`' })),
    isLost: Type.Optional(Type.Boolean({ description: '`true` or `false`' })),
    valueMin: Type.Optional(Type.Number({ description: 'Inclusive lower bound of `value`' })),
    valueMax: Type.Optional(Type.Number({ description: 'Inclusive upper bound of `value`' })),
    closedAtFrom: Type.Optional(Type.String({ description: 'ISO 8601 date-time; inclusive lower bound of `closedAt`', examples: ['2026-11-01T00:00:00Z'] })),
    closedAtTo: Type.Optional(Type.String({ description: 'ISO 8601 date-time; inclusive upper bound of `closedAt`', examples: ['2026-11-30T23:59:59Z'] })),
    search: Type.Optional(Type.String({ maxLength: 200, description: 'Substring of the title, ignoring case and accents (`expansao` finds "Expansão")' })),
    ...SyncQuery,
    sortKey: Type.Optional(StringEnum([...DEAL_SORT_KEYS], 'Sort field (default `updatedAt`); empty values sort last in both directions; ties break by id')),
    sortOrder: SortOrder,
  },
  { additionalProperties: false },
);
export type DealListQueryT = Static<typeof DealListQuery>;

export const DealPage = Envelope(Deal, 'DealPage');
