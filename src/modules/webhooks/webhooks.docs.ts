import { EVENT_TYPES, TEST_EVENT } from '../../events/catalog.js';

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event key, describing the request a subscribed
 * destination receives (spec 6.2/6.3, CONTRACT B.9). Records are the schemas of the single reads.
 */

const RECORD_SCHEMA: Record<string, { $ref: string; description: string }> = {
  contact: { $ref: '#/components/schemas/Contact', description: 'The contact as GET /contacts/:id returns it' },
  deal: { $ref: '#/components/schemas/Deal', description: 'The deal as GET /deals/:id returns it' },
  proposal: { $ref: '#/components/schemas/Proposal', description: 'The proposal as GET /proposals/:id returns it' },
};

const WHEN: Record<string, string> = {
  'contact.created': 'A contact was created (POST /contacts, or a form submission that created one).',
  'contact.updated': 'A contact was changed (PATCH /contacts/:id including its tags, or a form submission that updated one).',
  'deal.created': 'A deal was created (POST /deals).',
  'deal.stage_changed': 'A deal moved to another stage; `data.previousStageId` is the stage it left.',
  'deal.won': 'A deal was won (`isWon: true`, or a move to a stage with `isWonStage`).',
  'deal.lost': 'A deal was lost (`isLost: true`, or a move to a stage with `isLostStage`).',
  'proposal.sent': 'A proposal moved to `sent`.',
  'proposal.accepted': 'A proposal moved to `accepted`.',
  'proposal.declined': 'A proposal moved to `declined`.',
  'proposal.expired': 'A proposal moved to `expired`.',
  [TEST_EVENT]: 'Sent only by POST /webhooks/:id/test, to check a destination; `data.webhook` describes the webhook.',
};

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

const HEADERS = [
  header('Content-Type', 'Always `application/json`', 'application/json'),
  header('User-Agent', 'Always `Service-Webhook/1.0`', 'Service-Webhook/1.0'),
  header('X-Service-Event', 'The event key', 'deal.won'),
  header(
    'X-Service-Signature',
    '`sha256=` + lower-case hex HMAC-SHA256 of the raw body keyed with the full webhook secret (`whsec_…` as a string), like GitHub\'s `X-Hub-Signature-256`. Compare in constant time.',
    'sha256=5d1c…',
  ),
  header('X-Service-Delivery', 'A new UUID for every attempt', '1b4e28ba-2fa1-11d2-883f-0016d3cca427'),
  header('webhook-id', 'Standard Webhooks id: the event id, the same on every attempt and for every webhook (deduplicate with it)', 'evt_Q8s1LmZ0pKx3VbN7cRt2'),
  header('webhook-timestamp', 'Standard Webhooks timestamp: Unix seconds of this attempt (reject old ones to block replays)', '1795341600'),
  header(
    'webhook-signature',
    'Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64-decoded part of the secret after `whsec_`. Verifiable with any Standard Webhooks library.',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
];

function payloadSchema(key: string, objectType: string) {
  const record =
    objectType === 'webhook'
      ? {
          type: 'object',
          description: 'The webhook being tested',
          properties: { id: { type: 'string' }, name: { type: 'string' }, url: { type: 'string' }, events: { type: 'array', items: { type: 'string' } }, isActive: { type: 'boolean' } },
        }
      : RECORD_SCHEMA[objectType];
  const dataProps: Record<string, unknown> = { [objectType]: record };
  if (key === 'deal.stage_changed') dataProps.previousStageId = { type: 'string', description: 'The stage the deal left' };
  if (objectType === 'proposal') dataProps.previousStatus = { type: 'string', description: 'The status the proposal left' };
  return {
    type: 'object',
    required: ['event', 'tenantId', 'timestamp', 'data'],
    properties: {
      event: { type: 'string', const: key, description: 'The event key' },
      tenantId: { type: 'string' },
      timestamp: { type: 'string', format: 'date-time', description: 'When the event happened (UTC, milliseconds); the same on every attempt' },
      data: { type: 'object', required: [objectType], properties: dataProps, description: `The record under \`${objectType}\`` },
    },
  };
}

function entry(key: string, label: string, objectType: string) {
  return {
    post: {
      summary: label,
      description:
        `${WHEN[key] ?? ''}\n\nSent to every active webhook subscribed to \`${key}\` when the event happens (events raised while a ` +
        'webhook is inactive are never sent to it). Delivery is at least once, in no guaranteed order. Any 2xx answer is success; ' +
        'any other answer (redirects are not followed), a connection error or no answer within 10 s is a failed attempt, retried after ' +
        '1 min, 5 min, 30 min and 2 h; the fifth failure ends the delivery as `permanent_failure`. See GET /webhooks/:id/deliveries.',
      operationId: `event_${key.replace('.', '_')}`,
      tags: ['Webhook events'],
      parameters: HEADERS.map((h) => (h.name === 'X-Service-Event' ? { ...h, example: key } : h)),
      requestBody: { required: true, content: { 'application/json': { schema: payloadSchema(key, objectType) } } },
      responses: {
        '2XX': { description: 'Received. The body is kept (first 1 KiB) in the delivery record.' },
        default: { description: 'Anything else is a failed attempt and is retried.' },
      },
    },
  };
}

export const WEBHOOK_DOCS: Record<string, unknown> = Object.fromEntries([
  ...EVENT_TYPES.map((e) => [e.key, entry(e.key, e.label, e.objectType)]),
  [TEST_EVENT, entry(TEST_EVENT, 'Test delivery', 'webhook')],
]);
