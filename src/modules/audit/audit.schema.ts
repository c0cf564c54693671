import { Type, type Static } from '@sinclair/typebox';
import { CursorParam, Nullable } from '../../http/schemas.js';

export const MAX_AUDIT_PAGE = 100;
export const DEFAULT_AUDIT_PAGE = 50;

const timeParam = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 64, description, examples: ['2026-12-01T00:00:00Z'] }));

export const AuditListQuery = Type.Object(
  {
    objectType: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Only changes of this object type (`contact`, `webhook`, `api_key`, …)' }),
    ),
    objectId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only changes of this record: its history' })),
    actorId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Only changes made by this actor (an API key's id, a form's id)" })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only this action (`contact.updated`, `webhook.secret_rotated`, …)' })),
    since: timeParam('Only changes at or after this time (ISO 8601; 400 `validation_failed` when it is not one)'),
    until: timeParam('Only changes at or before this time (ISO 8601)'),
    pageSize: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_AUDIT_PAGE, description: `Entries per page (default ${DEFAULT_AUDIT_PAGE}, max ${MAX_AUDIT_PAGE})` }),
    ),
    cursor: CursorParam,
  },
  { additionalProperties: false },
);
export type AuditListQueryT = Static<typeof AuditListQuery>;

export const AuditActor = Type.Object(
  {
    type: Type.Union([Type.Literal('api_key'), Type.Literal('public_form'), Type.Literal('operator'), Type.Literal('system')], {
      description:
        '`api_key`: a call of the API; `public_form`: a submission of a public form; `operator`: the operator’s command line; `system`: the service itself (its workers)',
    }),
    id: Nullable(Type.String({ description: "The API key's or the form's id; `null` for `operator` and `system`" })),
    name: Nullable(Type.String({ description: "The API key's or the form's name" })),
  },
  { additionalProperties: false },
);

export const AuditEntry = Type.Object(
  {
    id: Type.String({ examples: ['aud_0VccnSB3O9eKOg10dC8W'] }),
    occurredAt: Type.String({ description: 'When the change was made, UTC ISO 8601', examples: ['2026-12-01T10:00:00.000Z'] }),
    action: Type.String({
      description: 'The event type of the change (`contact.updated`), or its own name when it raises no event (`webhook.secret_rotated`, `api_key.created`)',
      examples: ['contact.updated'],
    }),
    objectType: Type.String({ examples: ['contact'] }),
    objectId: Nullable(Type.String({ examples: ['con_0VccnSB3O9eKOg10dC8W'] })),
    actor: AuditActor,
    requestId: Nullable(Type.String({ description: 'The `X-Request-Id` of the request that made the change' })),
    ip: Nullable(Type.String({ description: "The caller's address" })),
    userAgent: Nullable(Type.String()),
    changes: Type.Array(Type.String(), {
      description: 'The names of the fields the change set or changed; never their values (the event of the change carries those)',
      examples: [['lastName', 'customProperties']],
    }),
  },
  { title: 'AuditEntry', additionalProperties: false },
);
export type AuditEntryT = Static<typeof AuditEntry>;

export const AuditPage = Type.Object(
  {
    data: Type.Array(AuditEntry),
    pagination: Type.Object({
      page: Type.Null(),
      pageSize: Type.Integer(),
      total: Type.Null({ description: 'Always `null`: the log is paged by cursor' }),
      totalPages: Type.Null(),
      hasNext: Type.Boolean(),
      hasPrev: Type.Null(),
      nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` (with the same filters) for the next, older entries' })),
    }),
  },
  {
    title: 'AuditPage',
    examples: [
      {
        data: [
          {
            id: 'aud_0VccnSB3O9eKOg10dC8W',
            occurredAt: '2026-12-01T10:00:00.000Z',
            action: 'contact.updated',
            objectType: 'contact',
            objectId: 'con_0VccnSAVDmZWFujKHPMG',
            actor: { type: 'api_key', id: 'key_0VccnSAV4yWYCPxEuZDa', name: 'Integration' },
            requestId: '5b0f1c2e-8d4a-4f7e-9c3b-2a1d6e8f0b94',
            ip: '203.0.113.7',
            userAgent: 'crm-sdk/1.0 node/20',
            changes: ['lastName', 'customProperties'],
          },
        ],
        pagination: { page: null, pageSize: 50, total: null, totalPages: null, hasNext: false, hasPrev: null, nextCursor: null },
      },
    ],
  },
);
export type AuditPageT = Static<typeof AuditPage>;
