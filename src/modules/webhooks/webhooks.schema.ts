import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PageSizeParams, Timestamp } from '../../http/schemas.js';
import { EVENT_TYPES, TEST_EVENT } from '../../events/catalog.js';

const EXAMPLE_TS = '2026-11-22T10:00:00.000Z';

const Name = Type.String({ minLength: 1, maxLength: 200, description: 'Human reference', examples: ['Deals to the ERP'] });
const Url = Type.String({
  description: 'HTTPS destination (`https://` only; checked against the private-network rule at delivery time)',
  examples: ['https://erp.example.com/hooks/crm'],
});
const Events = Type.Array(Type.String(), {
  minItems: 1,
  maxItems: 100,
  description: 'Event keys from GET /webhooks/event-types (duplicates are dropped)',
  examples: [['deal.won', 'deal.lost']],
});
const Headers = Type.Record(Type.String(), Type.String(), {
  maxProperties: 20,
  description:
    'Custom headers sent with every delivery. Names must be valid HTTP header names; `Content-Type`, `User-Agent`, `Host`, ' +
    '`Content-Length`, hop-by-hop headers (`Connection`, `Keep-Alive`, `Transfer-Encoding`, `Upgrade`, `TE`, `Trailer`, `Expect`), ' +
    '`X-Service-*` and `webhook-*` are reserved. Values are write-only: every read shows them masked as `"••••"`.',
  examples: [{ Authorization: 'Bearer 8c1f…' }],
});

export const Webhook = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    isActive: Type.Boolean(),
    disabledReason: Nullable(
      Type.String({
        description:
          'Why the webhook was deactivated automatically: every attempt failed for 120 hours (by default) since the ' +
          'first failure after the last success (a `webhook.disabled` event is raised then). `null` while active or when deactivated ' +
          'by hand; cleared by PATCH `isActive: true`.',
        examples: ['no successful delivery since 2026-11-17T10:00:00.000Z (120 hours); last error: HTTP 503'],
      }),
    ),
    headers: Type.Record(Type.String(), Type.String(), {
      description:
        'The custom header names, each value masked as `"••••"`: values are write-only after creation (every read, the answers ' +
        'of POST, PATCH and rotate-secret included). Deliveries send the real values. To change one, PATCH `headers` with all of them.',
      examples: [{ Authorization: '••••' }],
    }),
    secret: Type.String({
      description:
        'Signing secret. The full value (`whsec_` + base64 of 24 random bytes) is returned only by POST /webhooks and ' +
        'POST /webhooks/:id/rotate-secret; every other read shows `whsec_` + its first 4 characters.',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  {
    $id: 'Webhook',
    title: 'Webhook',
    examples: [
      {
        id: 'whk_4Jd8sQ1mZpLkV0aN3rTb',
        name: 'Deals to the ERP',
        url: 'https://erp.example.com/hooks/crm',
        events: ['deal.won', 'deal.lost'],
        isActive: true,
        disabledReason: null,
        headers: { Authorization: '••••' },
        secret: 'whsec_q3Zk',
        createdAt: EXAMPLE_TS,
        updatedAt: EXAMPLE_TS,
      },
    ],
  },
);
export type WebhookT = Static<typeof Webhook>;

export const WebhookCreate = Type.Object(
  {
    name: Name,
    url: Url,
    events: Events,
    isActive: Type.Optional(Type.Boolean({ default: true, description: 'Default true' })),
    headers: Type.Optional(Headers),
  },
  { additionalProperties: false, examples: [{ name: 'Deals to the ERP', url: 'https://erp.example.com/hooks/crm', events: ['deal.won', 'deal.lost'] }] },
);
export type WebhookCreateT = Static<typeof WebhookCreate>;

export const WebhookUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    isActive: Type.Optional(Type.Boolean()),
    headers: Type.Optional(Headers),
  },
  { additionalProperties: false, examples: [{ isActive: false }] },
);
export type WebhookUpdateT = Static<typeof WebhookUpdate>;

export const EventTypeSchema = Type.Object(
  { key: Type.String(), label: Type.String(), objectType: Type.String() },
  { title: 'EventType', examples: [{ key: 'deal.won', label: 'Deal won', objectType: 'deal' }] },
);

export const DeliveryStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('retry_scheduled'), Type.Literal('delivered'), Type.Literal('permanent_failure')],
  { description: '`pending` (first attempt due), `retry_scheduled`, `delivered` (a 2xx answer), `permanent_failure` (no further attempts)' },
);

export const Delivery = Type.Object(
  {
    id: Type.String(),
    webhookId: Type.String(),
    eventId: Type.String({ description: 'Stable across attempts; sent as the `webhook-id` header' }),
    event: Type.String({ description: 'Event key' }),
    status: DeliveryStatus,
    statusCode: Nullable(Type.Integer({ description: 'HTTP status of the last attempt; null before any answer' })),
    responseSnippet: Nullable(Type.String({ description: 'First 1 KiB (at most) of the last answer body' })),
    durationMs: Nullable(Type.Integer({ description: 'Duration of the last attempt' })),
    attempts: Type.Integer({
      description:
        'Attempts made so far. Automatic attempts stop at 5 (then `permanent_failure`); a manual retry adds one, and a recovery ' +
        'gives the delivery 5 more automatic attempts, so the count keeps growing across them',
    }),
    lastError: Type.Optional(Type.String({ description: 'Why the last attempt failed' })),
    nextAttemptAt: Nullable(Timestamp),
    deliveredAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  {
    $id: 'WebhookDelivery',
    title: 'WebhookDelivery',
    examples: [
      {
        id: 'dlv_9sD2kLmQ0pZx7VbN1cRt',
        webhookId: 'whk_4Jd8sQ1mZpLkV0aN3rTb',
        eventId: 'evt_Q8s1LmZ0pKx3VbN7cRt2',
        event: 'deal.won',
        status: 'retry_scheduled',
        statusCode: 503,
        responseSnippet: 'Service Unavailable',
        durationMs: 212,
        attempts: 1,
        lastError: 'HTTP 503',
        nextAttemptAt: '2026-11-22T10:01:00.212Z',
        deliveredAt: null,
        createdAt: EXAMPLE_TS,
      },
    ],
  },
);
export type DeliveryT = Static<typeof Delivery>;

const EVENT_FILTER_KEYS: string[] = [...EVENT_TYPES.map((e) => e.key), TEST_EVENT];
const DELIVERY_STATUSES = ['pending', 'retry_scheduled', 'delivered', 'permanent_failure'];
type DeliveryStatusT = Static<typeof DeliveryStatus>;

export const DeliveriesQuery = Type.Object(
  {
    // `enum` rather than a union of literals: a bad value's message then names the allowed ones (C.5).
    status: Type.Optional(
      Type.Unsafe<DeliveryStatusT>(Type.String({ enum: DELIVERY_STATUSES, description: 'Only deliveries in this status', examples: ['permanent_failure'] })),
    ),
    event: Type.Optional(
      Type.String({
        enum: EVENT_FILTER_KEYS,
        description: 'Only deliveries of this event type (a key of GET /webhooks/event-types, or `webhook.test`)',
        examples: ['deal.won'],
      }),
    ),
    ...PageSizeParams('limit', 'Deliveries per page, newest first'),
    cursor: Type.Optional(
      Type.String({
        description:
          'The `cursor` of the `Link: <…>; rel="next"` header of the previous page: continues after its last delivery. Bound to the tenant, ' +
          'the API key, the webhook and the filters (`status`, `event`), which must repeat those of the first page; otherwise, or when ' +
          'malformed or altered, 400 `invalid_cursor`.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DeliveriesQueryT = Static<typeof DeliveriesQuery>;

export const DeliveryParams = Type.Object({
  id: Type.String({ description: 'Webhook id' }),
  deliveryId: Type.String({ description: 'Delivery id (`id` of a record of GET /webhooks/:id/deliveries)' }),
});

export const RecoverBody = Type.Object(
  {
    since: Type.String({
      description: 'ISO 8601 date-time: deliveries created at or after it are scheduled again (non-ISO: 400 `validation_failed`)',
      examples: ['2026-11-21T00:00:00Z'],
    }),
  },
  { additionalProperties: false, examples: [{ since: '2026-11-21T00:00:00Z' }] },
);
export type RecoverBodyT = Static<typeof RecoverBody>;

export const RecoverResult = Type.Object(
  { scheduled: Type.Integer({ description: 'Deliveries in `permanent_failure` scheduled for a fresh attempt now' }) },
  { title: 'WebhookRecoverResult', examples: [{ scheduled: 12 }] },
);

export const TestResult = Type.Object(
  {
    deliveryId: Type.String({ description: 'The delivery record of this test in GET /webhooks/:id/deliveries' }),
    success: Type.Boolean({ description: 'True for a 2xx answer' }),
    statusCode: Nullable(Type.Integer()),
    durationMs: Type.Integer(),
    responseSnippet: Nullable(Type.String()),
    error: Type.Optional(Type.String()),
  },
  { title: 'WebhookTestResult', examples: [{ deliveryId: 'dlv_9sD2kLmQ0pZx7VbN1cRt', success: true, statusCode: 200, durationMs: 84, responseSnippet: 'ok' }] },
);
export type TestResultT = Static<typeof TestResult>;
