import { Type, type Static } from '@sinclair/typebox';
import { CursorParam, Nullable } from '../../http/schemas.js';
import { EVENT_TYPES } from '../../events/catalog.js';

export const MAX_WAIT_SECONDS = 30;
export const MAX_EVENTS_PAGE = 1000;
export const DEFAULT_EVENTS_PAGE = 100;

const keys = EVENT_TYPES.map((e) => e.key);

export const EventListQuery = Type.Object(
  {
    types: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: `Comma-separated event keys to return (default: every type). An unknown key is 400 \`validation_failed\`. Keys: ${keys.map((k) => `\`${k}\``).join(', ')}`,
        examples: ['contact.created,contact.updated,deal.won'],
      }),
    ),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'An event id: only events strictly after it in the log. Pass the `id` of the last event you processed. An id that is not an ' +
          'event of the tenant (or that retention removed) matches nothing, as any filter naming a missing id (200 with an empty `data`, ' +
          'at once even with `wait`): start again without it',
        examples: ['evt_01hx5k2m9v8c3b7n6q4r0s1t2u'],
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_EVENTS_PAGE, description: `Events per page (default ${DEFAULT_EVENTS_PAGE}, max ${MAX_EVENTS_PAGE})` }),
    ),
    pageSize: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_EVENTS_PAGE, description: 'Alias of `limit` (C.5); both given and different: 400 `validation_failed`' }),
    ),
    cursor: CursorParam,
    wait: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_WAIT_SECONDS,
        description:
          `Long-poll, in seconds (0–${MAX_WAIT_SECONDS}): when no event matches yet, hold the request until one is committed or the wait ends ` +
          '(then 200 with an empty `data`). At most 10 waiting requests per API key and 1000 per server process (by default); beyond, 429 `too_many_waiting_requests` with `Retry-After`',
        examples: [30],
      }),
    ),
  },
  { additionalProperties: false },
);
export type EventListQueryT = Static<typeof EventListQuery>;

export const Event = Type.Object(
  {
    id: Type.String({ description: 'Event id; the `webhook-id` header and `eventId` of its webhook deliveries', examples: ['evt_01hx5k2m9v8c3b7n6q4r0s1t2u'] }),
    type: Type.String({ description: 'Event key of the catalog (`GET /webhooks/event-types`)', examples: ['contact.updated'] }),
    occurredAt: Type.String({
      description: 'When the change was made, UTC ISO-8601 (the `timestamp` of the webhook body)',
      examples: ['2026-11-22T10:00:00.000Z'],
    }),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'Exactly the `data` of the webhook delivery body of this event: the record under its object type (`contact`, `deal`, …) and the extra fields of the type',
        examples: [{ contact: { id: 'ct_01hx5k2m9v', firstName: 'Ana', lastName: 'Souza', email: 'ana@example.com' } }],
      },
    ),
  },
  { title: 'Event' },
);
export type EventT = Static<typeof Event>;

export const EventPagination = Type.Object(
  {
    page: Type.Null({ description: 'Always `null`: the log is paged by `after` or `cursor`' }),
    pageSize: Type.Integer(),
    total: Type.Null({ description: 'Always `null`: counting a log of millions of events would cost what reading it costs' }),
    totalPages: Type.Null(),
    hasNext: Type.Boolean({ description: 'More events are readable now' }),
    hasPrev: Type.Null(),
    nextCursor: Nullable(
      Type.String({ description: 'Pass as `cursor` (with the same other parameters) for the next page; `null` when no more events are readable now' }),
    ),
  },
  { description: 'The envelope of C.1 for a log: keyset only, no total' },
);

export const EventPage = Type.Object(
  { data: Type.Array(Event), pagination: EventPagination },
  {
    title: 'EventPage',
    examples: [
      {
        data: [
          {
            id: 'evt_01hx5k2m9v8c3b7n6q4r0s1t2u',
            type: 'contact.created',
            occurredAt: '2026-11-22T10:00:00.000Z',
            data: { contact: { id: 'ct_01hx5k2m9v', firstName: 'Ana', lastName: 'Souza', email: 'ana@example.com' } },
          },
        ],
        pagination: { page: null, pageSize: 100, total: null, totalPages: null, hasNext: false, hasPrev: null, nextCursor: null },
      },
    ],
  },
);
export type EventPageT = { data: EventT[]; pagination: Static<typeof EventPagination> };
