import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';

export const OBJECT_TYPES = ['contact', 'company', 'deal'] as const;
export type ListObjectType = (typeof OBJECT_TYPES)[number];
export const LIST_KINDS = ['static', 'dynamic'] as const;
export type ListKind = (typeof LIST_KINDS)[number];

const StringEnum = <T extends string[]>(values: [...T], description: string) => Type.Unsafe<T[number]>({ type: 'string', enum: values, description });

const ObjectType = StringEnum([...OBJECT_TYPES], 'Type of the member records; immutable');
const Kind = StringEnum([...LIST_KINDS], '`static` (members managed through the API) or `dynamic` (members follow `filters`); immutable');

const EXAMPLE = {
  id: 'lst_7Hc2pQ9mX4vK1nB8sT3L',
  name: 'Event attendees',
  objectType: 'contact',
  kind: 'static',
  description: 'People met at the 2026 fair',
  filters: null,
  memberCount: 42,
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

/** A list as every read returns it (spec 2.6). */
export const List = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    objectType: ObjectType,
    kind: Kind,
    description: Nullable(Type.String()),
    filters: Type.Unknown({
      description:
        'Read-only. For a dynamic list, the filter that defines its members (`{ operator, conditions }`, the language of ' +
        '`POST /contacts/search`); `null` for a static list.',
    }),
    memberCount: Type.Integer({ description: 'Members that are not soft-deleted records' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'List', title: 'List', examples: [EXAMPLE] },
);
export type ListT = Static<typeof List>;

const Name = Type.String({ minLength: 1, maxLength: 255, description: 'Required; not blank' });
const Description = Type.String({ maxLength: 5000 });

export const ListCreate = Type.Object(
  {
    name: Name,
    objectType: ObjectType,
    kind: Type.String({ description: 'Must be `static`: dynamic lists are created only in the CRM UI (400 otherwise)', examples: ['static'] }),
    description: Type.Optional(Nullable(Description)),
  },
  { additionalProperties: false, examples: [{ name: 'Event attendees', objectType: 'contact', kind: 'static', description: 'People met at the 2026 fair' }] },
);
export type ListCreateT = Static<typeof ListCreate>;

export const ListUpdate = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Nullable(Description)) },
  {
    additionalProperties: false,
    description: '`objectType` and `kind` never change (400 `validation_failed`).',
    examples: [{ name: 'Fair 2026 attendees' }],
  },
);
export type ListUpdateT = Static<typeof ListUpdate>;

export const ListQuery = Type.Object({ objectType: Type.Optional(ObjectType) }, { additionalProperties: false });
export type ListQueryT = Static<typeof ListQuery>;

export const MembersQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export type MembersQueryT = Static<typeof MembersQuery>;

export const MemberParams = Type.Object({ id: Type.String({ description: 'List id' }), objectId: Type.String({ description: 'Id of the member record' }) });

export const MAX_MEMBERS_PER_CALL = 1000;

export const MembersAdd = Type.Object(
  {
    objectIds: Type.Array(Type.String(), {
      minItems: 1,
      maxItems: MAX_MEMBERS_PER_CALL,
      description: `Ids of records of the list's objectType (1 to ${MAX_MEMBERS_PER_CALL}). All-or-nothing: any missing, deleted or other-type id is a 404 naming the ids, and nothing is added. Ids already members are ignored.`,
    }),
  },
  { additionalProperties: false, examples: [{ objectIds: ['con_3kT9mQ2pX7vB1nR8sW4L'] }] },
);
export type MembersAddT = Static<typeof MembersAdd>;

export const MembersAdded = Type.Object(
  {
    added: Type.Integer({ description: 'Records that were not members before this call' }),
    memberCount: Type.Integer({ description: 'Members of the list after this call' }),
  },
  { examples: [{ added: 2, memberCount: 44 }] },
);

/** A member record in the shape of its own single read (contact, company or deal). */
export const Member = Type.Object(
  { id: Type.String({ description: 'Id of the contact, company or deal (not of the membership)' }) },
  {
    additionalProperties: true,
    title: 'ListMember',
    examples: [{ id: 'con_3kT9xQ2mL8vB1nR7pW4z', firstName: 'Maria', lastName: 'Silva', email: 'maria@acme.com.br' }],
    description: "The member record exactly as `GET /contacts/:id`, `/companies/:id` or `/deals/:id` returns it, by the list's objectType.",
  },
);
export const MemberPage = Envelope(Member, 'ListMemberPage');
