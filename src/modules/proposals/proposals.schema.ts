import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CursorParam, DeletedAt, Envelope, Nullable, PageSizeParams, SortOrder, SyncQuery, Timestamp } from '../../http/schemas.js';
import { Company } from '../companies/companies.schema.js';
import { Contact } from '../contacts/contacts.schema.js';
import { Deal } from '../deals/deals.schema.js';

export const PROPOSAL_STATUSES = ['draft', 'sent', 'accepted', 'declined', 'expired'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/**
 * A copy of a shared schema without its `$id`: `Deal` already nests `Contact` and `Company` by `$id`, and a
 * serializer schema may hold each `$id` only once, so the proposal's own `contact`/`company` are inlined.
 */
function inlined(schema: TSchema): TSchema {
  const { $id: _id, ...rest } = schema as TSchema & { $id?: string };
  return rest as TSchema;
}

const StatusDoc = `One of \`${PROPOSAL_STATUSES.join('`, `')}\`; any other value is 400 \`invalid_status\`.`;

const ITEM_EXAMPLE = {
  id: 'pit_2Lm8qR4tW9xN1pK7vB3Z',
  order: 0,
  name: 'CRM license',
  description: 'Annual, per seat',
  qty: 3,
  unit: 'Unidade',
  rate: 19.99,
  discountPct: 10,
  taxPct: 5,
  total: 56.67,
};

export const ProposalItem = Type.Object(
  {
    id: Type.String(),
    order: Type.Integer({ description: '0-based position in `items`' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    qty: Type.Number(),
    unit: Type.String(),
    rate: Type.Number({ description: 'Unit price, at most 2 decimals' }),
    discountPct: Type.Number({ description: 'Percent taken off qty × rate' }),
    taxPct: Type.Number({ description: 'Percent added to the discounted amount' }),
    total: Type.Number({ description: 'qty × rate − discountPct % + taxPct % of the discounted amount, rounded half-up to 2 decimals' }),
  },
  { title: 'ProposalItem', examples: [ITEM_EXAMPLE] },
);

const EXAMPLE = {
  id: 'prp_9Kd2mQ7pX1vB4nT8sR3L',
  number: 'PR-2026-0042',
  subject: 'CRM licenses for Acme',
  status: 'draft',
  sentAt: null,
  dealId: null,
  deal: null,
  contactId: null,
  contact: null,
  clientId: null,
  company: null,
  recipientName: null,
  recipientEmail: 'buyer@acme.com.br',
  items: [ITEM_EXAMPLE],
  discount: 6.67,
  adjustment: 0,
  subtotal: 56.67,
  total: 50,
  notes: null,
  ownerId: 'usr_9dK2mQ7pX1vB4nT8sR3L',
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

/**
 * A proposal as every read returns it (spec 2.7, CONTRACT B.8): nested items, computed totals, and the
 * deal, contact and client company expanded as their single reads return them (`null` when unset or
 * soft-deleted).
 */
export const Proposal = Type.Object(
  {
    id: Type.String(),
    number: Type.String({ description: '`PR-<year>-<seq>`: per tenant and year, 4 digits or more, never reused' }),
    subject: Type.String(),
    status: Type.Unsafe<ProposalStatus>({ type: 'string', enum: [...PROPOSAL_STATUSES] }),
    sentAt: Nullable(Timestamp),
    dealId: Nullable(Type.String()),
    deal: Nullable(Deal as TSchema),
    contactId: Nullable(Type.String()),
    contact: Nullable(inlined(Contact)),
    clientId: Nullable(Type.String({ description: 'Client company id' })),
    company: Nullable(inlined(Company)),
    recipientName: Nullable(Type.String()),
    recipientEmail: Nullable(Type.String()),
    items: Type.Array(ProposalItem),
    discount: Type.Number({ description: 'Absolute discount on the subtotal' }),
    adjustment: Type.Number({ description: 'Extra adjustment; may be negative' }),
    subtotal: Type.Number({ description: 'Σ item totals' }),
    total: Type.Number({ description: 'subtotal − discount + adjustment' }),
    notes: Nullable(Type.String()),
    ownerId: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: DeletedAt,
  },
  { $id: 'Proposal', title: 'Proposal', examples: [EXAMPLE] },
);
export type ProposalT = Omit<Static<typeof Proposal>, 'deal' | 'contact' | 'company'> & {
  deal: Record<string, unknown> | null;
  contact: Record<string, unknown> | null;
  company: Record<string, unknown> | null;
};
export type ProposalItemT = Static<typeof ProposalItem>;

const Money = (description: string) => Type.Number({ description: `${description}; at most 2 decimals` });

export const ProposalItemInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 500, description: 'Required; not blank' }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    qty: Type.Optional(Type.Number({ minimum: 0, maximum: 1e9, description: 'Default 1' })),
    unit: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Default `Unidade`' })),
    rate: Type.Optional(Type.Number({ minimum: 0, description: 'Unit price, at most 2 decimals; default 0' })),
    discountPct: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Default 0' })),
    taxPct: Type.Optional(Type.Number({ minimum: 0, maximum: 1000, description: 'Default 0' })),
  },
  { additionalProperties: false, examples: [{ name: 'CRM license', qty: 3, rate: 19.99, discountPct: 10, taxPct: 5 }] },
);
export type ProposalItemInputT = Static<typeof ProposalItemInput>;

const Ref = (description: string) => Nullable(Type.String({ description }));
const Fields = {
  subject: Type.String({ minLength: 1, maxLength: 500, description: 'Required; not blank' }),
  status: Type.String({ description: StatusDoc }),
  dealId: Ref('At most one live proposal per deal (400 `duplicate_proposal_for_deal`)'),
  contactId: Ref('Recipient contact'),
  clientId: Ref('Client company'),
  recipientName: Nullable(Type.String({ maxLength: 255, description: 'Overrides the name in the PDF' })),
  recipientEmail: Nullable(Type.String({ maxLength: 254, description: 'Overrides the e-mail; trimmed and lower-cased' })),
  items: Type.Array(ProposalItemInput, { maxItems: 500, description: 'On PATCH, replaces the whole list (items get new ids)' }),
  discount: Money('Absolute discount on the subtotal, ≥ 0; default 0'),
  adjustment: Money('Extra adjustment, may be negative; default 0'),
  notes: Nullable(Type.String({ maxLength: 20_000 })),
  ownerId: Ref('A user of the tenant; default: the user of the API key'),
};

// The optional fields shared by create and PATCH.
const OptionalFields = {
  dealId: Type.Optional(Fields.dealId),
  contactId: Type.Optional(Fields.contactId),
  clientId: Type.Optional(Fields.clientId),
  recipientName: Type.Optional(Fields.recipientName),
  recipientEmail: Type.Optional(Fields.recipientEmail),
  items: Type.Optional(Fields.items),
  discount: Type.Optional(Fields.discount),
  adjustment: Type.Optional(Fields.adjustment),
  notes: Type.Optional(Fields.notes),
  ownerId: Type.Optional(Fields.ownerId),
};

export const ProposalCreate = Type.Object(
  {
    subject: Fields.subject,
    status: Type.Optional(
      Type.String({
        description: `Optional; only \`draft\` (the default) is accepted on create: another status of the enum is 422 \`business_rule_violation\`. ${StatusDoc}`,
      }),
    ),
    ...OptionalFields,
  },
  {
    additionalProperties: false,
    examples: [
      {
        subject: 'CRM licenses for Acme',
        recipientEmail: 'buyer@acme.com.br',
        items: [{ name: 'CRM license', qty: 3, rate: 19.99, discountPct: 10, taxPct: 5 }],
        discount: 6.67,
      },
    ],
  },
);
export type ProposalCreateT = Static<typeof ProposalCreate>;

export const ProposalUpdate = Type.Object(
  {
    subject: Type.Optional(Fields.subject),
    status: Type.Optional(
      Type.String({
        description:
          `${StatusDoc} Allowed moves: draft→sent, sent→accepted|declined|expired, declined|expired→draft; accepted is final; ` +
          'any other move is 422 `business_rule_violation`; the current status is a no-op.',
      }),
    ),
    ...OptionalFields,
  },
  { additionalProperties: false, examples: [{ status: 'sent' }] },
);
export type ProposalUpdateT = Static<typeof ProposalUpdate>;

/** B.4: the proposal's scalar fields (the money ones by their value). */
export const PROPOSAL_SORT_KEYS = ['createdAt', 'updatedAt', 'number', 'subject', 'status', 'sentAt', 'subtotal', 'total'] as const;
export type ProposalSortKey = (typeof PROPOSAL_SORT_KEYS)[number];

export const ProposalListQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Unsafe<ProposalStatus>({
        type: 'string',
        enum: [...PROPOSAL_STATUSES],
        description: 'Only proposals in this status (another value: 400 `validation_failed`)',
      }),
    ),
    search: Type.Optional(Type.String({ maxLength: 200, description: 'Substring of the number or the subject, ignoring case and accents' })),
    contactId: Type.Optional(Type.String()),
    clientId: Type.Optional(Type.String()),
    dealId: Type.Optional(Type.String()),
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, 1-based (default 1)' })),
    cursor: CursorParam,
    ...SyncQuery,
    sortKey: Type.Optional(
      Type.Unsafe<ProposalSortKey>({ type: 'string', enum: [...PROPOSAL_SORT_KEYS], description: 'Sort field (default `createdAt`); ties break by `id`' }),
    ),
    sortOrder: SortOrder,
    ...PageSizeParams('limit', 'Page size; `pagination.pageSize` echoes it'),
  },
  { additionalProperties: false },
);
export type ProposalListQueryT = Static<typeof ProposalListQuery>;

export const ProposalPage = Envelope(Proposal, 'ProposalPage');
