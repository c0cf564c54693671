import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../../http/schemas.js';

const StringEnum = <T extends string[]>(values: [...T], description: string) => Type.Unsafe<T[number]>({ type: 'string', enum: values, description });

export const ACTIVITY_TYPES = ['task', 'call', 'email', 'meeting', 'note', 'whatsapp', 'linkedin', 'custom'] as const;
export const PRIORITIES = ['low', 'medium', 'high'] as const;
export const RELATED_TYPES = ['contact', 'company', 'deal'] as const;
export type RelatedType = (typeof RELATED_TYPES)[number];
/** Most ids per bulk call (CONTRACT B.6). */
export const BULK_MAX = 500;

const EXAMPLE = {
  id: 'act_3kT9mQ2xR7pW1nB5zL8V',
  type: 'task',
  title: 'Send the revised quote',
  description: '<p>Include the <strong>annual</strong> plan.</p>',
  dueDate: '2026-11-25T15:00:00.000Z',
  completed: false,
  completedAt: null,
  priority: 'high',
  assignedToId: 'usr_9dK2mQ7pX1vB4nT8sR3L',
  ownerId: 'usr_9dK2mQ7pX1vB4nT8sR3L',
  contactIds: ['con_4hW9sQ2mZ8xK1pLr7TcB'],
  companyIds: [],
  dealIds: ['deal_7Hq3nW2xK9mR4tB1pZ6C'],
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

/** An activity as every read returns it (spec 2.4, CONTRACT B.6). */
export const Activity = Type.Object(
  {
    id: Type.String(),
    type: StringEnum([...ACTIVITY_TYPES], 'Kind of activity'),
    title: Type.String(),
    description: Nullable(Type.String({ description: 'Sanitized HTML, or plain text / markdown as given' })),
    dueDate: Nullable(Timestamp),
    completed: Type.Boolean(),
    completedAt: Nullable(Timestamp),
    priority: Nullable(StringEnum([...PRIORITIES], 'Priority (tasks)')),
    assignedToId: Nullable(Type.String({ description: 'Responsible user' })),
    ownerId: Nullable(Type.String({ description: 'Owning user; defaults to the user of the API key' })),
    contactIds: Type.Array(Type.String(), { description: 'Linked contacts, in the order given' }),
    companyIds: Type.Array(Type.String(), { description: 'Linked companies, in the order given' }),
    dealIds: Type.Array(Type.String(), { description: 'Linked deals, in the order given' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Activity', title: 'Activity', examples: [EXAMPLE] },
);
export type ActivityT = Static<typeof Activity>;

const Title = Type.String({ minLength: 1, maxLength: 500, description: 'Short title; not blank' });
const Description = Type.String({
  maxLength: 100000,
  description:
    'HTML or markdown. HTML is sanitized on write (scripts, event-handler attributes, `javascript:` URLs removed); text without `<` is kept as given.',
});
const Instant = (what: string) =>
  Type.String({
    description: `${what}: ISO 8601 date-time with time zone (a bare YYYY-MM-DD means midnight UTC); returned in UTC with milliseconds. Otherwise 400 \`invalid_format\`.`,
    examples: ['2026-11-25T15:00:00Z'],
  });
const Links = (what: string) =>
  Type.Array(Type.String(), { maxItems: 100, description: `${what} ids of the tenant (404 naming the item otherwise); PATCH replaces the array` });

const fields = {
  description: Type.Optional(Nullable(Description)),
  dueDate: Type.Optional(Nullable(Instant('Due date'))),
  completed: Type.Optional(Type.Boolean({ description: 'true sets completedAt (given, else now); false clears it' })),
  completedAt: Type.Optional(Nullable(Instant('Completion time; only with completed true'))),
  priority: Type.Optional(Nullable(StringEnum([...PRIORITIES], 'Priority'))),
  assignedToId: Type.Optional(Nullable(Type.String({ description: 'A user of the tenant; null unassigns' }))),
  ownerId: Type.Optional(Nullable(Type.String({ description: 'A user of the tenant; default: the user of the API key' }))),
  contactIds: Type.Optional(Links('Contact')),
  companyIds: Type.Optional(Links('Company')),
  dealIds: Type.Optional(Links('Deal')),
};

export const ActivityCreate = Type.Object(
  { type: StringEnum([...ACTIVITY_TYPES], 'Kind of activity'), title: Title, ...fields },
  {
    additionalProperties: false,
    examples: [{ type: 'task', title: 'Send the revised quote', dueDate: '2026-11-25T15:00:00Z', priority: 'high', contactIds: ['con_4hW9sQ2mZ8xK1pLr7TcB'] }],
  },
);
export type ActivityCreateT = Static<typeof ActivityCreate>;

export const ActivityUpdate = Type.Object(
  { type: Type.Optional(StringEnum([...ACTIVITY_TYPES], 'Kind of activity')), title: Type.Optional(Title), ...fields },
  { additionalProperties: false, examples: [{ completed: true }, { assignedToId: null }] },
);
export type ActivityUpdateT = Static<typeof ActivityUpdate>;

export const ActivityListQuery = Type.Object(
  {
    relatedType: StringEnum([...RELATED_TYPES], 'Type of the linked record (required)'),
    relatedId: Type.String({ description: 'Id of the linked record (required; 404 when missing or deleted)' }),
  },
  { additionalProperties: false },
);
export type ActivityListQueryT = Static<typeof ActivityListQuery>;

const Ids = Type.Array(Type.String(), {
  minItems: 1,
  maxItems: BULK_MAX,
  description: `1 to ${BULK_MAX} activity ids; ids not found in the tenant are skipped`,
});

export const BulkComplete = Type.Object(
  { ids: Ids, completed: Type.Boolean({ description: 'true completes (completedAt = now unless already completed); false reopens' }) },
  { additionalProperties: false, examples: [{ ids: ['act_3kT9mQ2xR7pW1nB5zL8V'], completed: true }] },
);
export type BulkCompleteT = Static<typeof BulkComplete>;

export const BulkAssign = Type.Object(
  { ids: Ids, assignedToId: Nullable(Type.String({ description: 'A user of the tenant (404 otherwise); null unassigns' })) },
  { additionalProperties: false, examples: [{ ids: ['act_3kT9mQ2xR7pW1nB5zL8V'], assignedToId: null }] },
);
export type BulkAssignT = Static<typeof BulkAssign>;

export const BulkResult = Type.Object(
  { updated: Type.Integer({ description: 'Activities of the tenant changed by the call' }) },
  { title: 'BulkResult', examples: [{ updated: 2 }] },
);
