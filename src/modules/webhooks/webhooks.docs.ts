import type { TSchema } from '@sinclair/typebox';
import { dataKeyOf, EVENT_TYPES, TEST_EVENT } from '../../events/catalog.js';
import { Activity } from '../activities/activities.schema.js';
import { Company } from '../companies/companies.schema.js';
import { Contact } from '../contacts/contacts.schema.js';
import { Deal } from '../deals/deals.schema.js';
import { Submission } from '../forms/forms.schema.js';
import { List } from '../lists/lists.schema.js';
import { Proposal } from '../proposals/proposals.schema.js';
import { Tag } from '../tags/tags.schema.js';
import { Webhook } from './webhooks.schema.js';

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event key, describing the request a subscribed
 * destination receives (spec 6.2/6.3, CONTRACT B.9, C.4), with an example payload. Records are the
 * schemas of the single reads.
 */

const RECORDS: Record<string, { schema: TSchema; read: string }> = {
  contact: { schema: Contact, read: 'GET /contacts/:id' },
  company: { schema: Company, read: 'GET /companies/:id' },
  deal: { schema: Deal, read: 'GET /deals/:id' },
  activity: { schema: Activity, read: 'GET /activities/:id' },
  tag: { schema: Tag, read: 'GET /tags/:id' },
  list: { schema: List, read: 'GET /lists/:id (after the change)' },
  proposal: { schema: Proposal, read: 'GET /proposals/:id' },
  submission: { schema: Submission, read: 'GET /forms/:id/submissions' },
  webhook: { schema: Webhook, read: 'GET /webhooks/:id' },
};

const recordRef = (dataKey: string) => {
  const r = RECORDS[dataKey];
  const id = (r.schema as { $id?: string }).$id;
  return { ...(id ? { $ref: `#/components/schemas/${id}` } : r.schema), description: `The ${dataKey} as ${r.read} returns it` };
};

const exampleOf = (dataKey: string) => ((RECORDS[dataKey]?.schema as { examples?: unknown[] }).examples ?? [])[0] ?? {};

const updated = (what: string) =>
  `${what} \`data.changes\` names the fields that changed and \`data.previous\` holds their values before; a write that changes nothing raises no event.`;

const WHEN: Record<string, string> = {
  'contact.created': 'A contact was created (POST /contacts, a batch input, or a form submission that created one).',
  'contact.updated': updated(
    'A contact was changed (PATCH /contacts/:id, a batch input, its tags, a form submission that updated it, or the deletion of its company or of one of its tags).',
  ),
  'contact.deleted': 'A contact was deleted; `data.contact` is the contact as it was last read.',
  'contact.restored': 'A deleted contact was restored (POST /contacts/:id/restore); `data.contact` is the contact as GET /contacts/:id answers it afterwards.',
  'contact.erased':
    'A contact was erased for good (POST /contacts/:id/erase): its fields are gone from the service, this event and the earlier ones included; `data` holds its `id` alone.',
  'contact.merged':
    'Two contacts were merged (POST /contacts/merge): `data.contact` is the primary after the merge, `data.mergedId` the contact folded into it (now deleted, with `mergedIntoId`), `data.merged` that contact as it was, and `data.changes` / `data.previous` what the merge changed on the primary.',
  'company.merged':
    'Two companies were merged (POST /companies/merge): `data.company` is the primary after the merge, `data.mergedId` the company folded into it, `data.merged` that company as it was, and `data.changes` / `data.previous` what the merge changed on the primary.',
  'company.created': 'A company was created (POST /companies or a batch input).',
  'company.updated': updated('A company was changed (PATCH, a batch input, or the deletion of one of its tags).'),
  'company.deleted': 'A company was deleted; its contacts and deals lose the reference and raise their own `*.updated`.',
  'company.restored':
    'A deleted company was restored (POST /companies/:id/restore); `data.company` is the company as GET /companies/:id answers it afterwards.',
  'deal.created': 'A deal was created (POST /deals or a batch input).',
  'deal.updated': updated(
    'A deal was changed in any way (also raised beside `deal.stage_changed`, `deal.won` and `deal.lost`, and when its company or one of its tags is deleted); the expanded `contact` and `company` follow their ids.',
  ),
  'deal.stage_changed': 'A deal moved to another stage; `data.previousStageId` is the stage it left.',
  'deal.won': 'A deal was won (`isWon: true`, or a move to a stage with `isWonStage`).',
  'deal.lost': 'A deal was lost (`isLost: true`, or a move to a stage with `isLostStage`).',
  'deal.deleted': 'A deal was deleted; `data.deal` is the deal as it was last read.',
  'deal.restored': 'A deleted deal was restored (POST /deals/:id/restore); `data.deal` is the deal as GET /deals/:id answers it afterwards.',
  'activity.created': 'An activity was created.',
  'activity.updated': updated('An activity was changed (PATCH, or a bulk complete/assign that changed it).'),
  'activity.deleted': 'An activity was deleted; `data.activity` is the activity as it was last read.',
  'tag.created': 'A tag was created.',
  'tag.updated': updated('A tag was renamed or recoloured.'),
  'tag.deleted': 'A tag was deleted; the records that carried it raise their own `*.updated`.',
  'list.member_added': 'A record joined a static list; `data.list` is the list after the change, `data.objectId` the record (one event per record added).',
  'list.member_removed': 'A record left a static list; `data.list` is the list after the change, `data.objectId` the record.',
  'list.restored': 'A deleted list was restored (POST /lists/:id/restore); `data.list` is the list as GET /lists/:id answers it afterwards.',
  'proposal.sent': 'A proposal moved to `sent`.',
  'proposal.accepted': 'A proposal moved to `accepted`.',
  'proposal.declined': 'A proposal moved to `declined`.',
  'proposal.expired': 'A proposal moved to `expired`.',
  'proposal.restored':
    'A deleted proposal was restored (POST /proposals/:id/restore); `data.proposal` is the proposal as GET /proposals/:id answers it afterwards.',
  'form.submitted': 'A public form was submitted; `data.submission` is the submission as the submissions list returns it.',
  'webhook.disabled':
    "A webhook was deactivated after failing for 120 hours (by default) without a success; `data.webhook` carries `disabledReason`. Sent to the tenant's other webhooks subscribed to it.",
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
    "`sha256=` + lower-case hex HMAC-SHA256 of the raw body keyed with the full webhook secret (`whsec_…` as a string), like GitHub's `X-Hub-Signature-256`. Compare in constant time.",
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

function dataSchema(key: string, dataKey: string) {
  if (dataKey === '') {
    return { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The id of the record, all that is left of it' } } };
  }
  const record =
    key === TEST_EVENT
      ? {
          type: 'object',
          description: 'The webhook being tested',
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            url: { type: 'string' },
            events: { type: 'array', items: { type: 'string' } },
            isActive: { type: 'boolean' },
          },
        }
      : recordRef(dataKey);
  const props: Record<string, unknown> = { [dataKey]: record };
  if (key === 'deal.stage_changed') props.previousStageId = { type: 'string', description: 'The stage the deal left' };
  if (key.startsWith('list.member_')) props.objectId = { type: 'string', description: 'The record that joined or left the list' };
  if (key.endsWith('.merged')) {
    props.mergedId = { type: 'string', description: 'The record folded into the primary (now deleted, with `mergedIntoId`)' };
    props.merged = { ...recordRef(dataKey), description: 'The merged record as it was before the merge' };
  }
  if (key.endsWith('.updated') || key.endsWith('.merged')) {
    props.changes = { type: 'array', items: { type: 'string' }, description: 'Names of the fields that changed (never `updatedAt` alone)' };
    props.previous = { type: 'object', description: 'The values of those fields before the change' };
  }
  return { type: 'object', required: Object.keys(props), properties: props, description: `The record under \`${dataKey}\`` };
}

const EXAMPLE_CHANGE: Record<string, [string, unknown]> = {
  contact: ['lastName', 'Souza'],
  company: ['industry', 'Retail'],
  deal: ['value', 10000],
  activity: ['title', 'Call Maria'],
  tag: ['color', '#1e88e5'],
};

function exampleData(key: string, dataKey: string): Record<string, unknown> {
  if (dataKey === '') return { id: 'con_3kT9xW2mQ8rL5vN1pB7z' };
  const record = exampleOf(dataKey) as Record<string, unknown>;
  const data: Record<string, unknown> = { [dataKey]: record };
  if (key === 'deal.stage_changed') data.previousStageId = 'stg_2bN8kQ1wR5tY7uI3oP9a';
  if (key.startsWith('list.member_')) data.objectId = 'con_3kT9xW2mQ8rL5vN1pB7z';
  if (key.endsWith('.merged')) {
    data.mergedId = dataKey === 'contact' ? 'con_9xQ2mW7kT3rL8vN1pB5z' : 'com_9xQ2mW7kT3rL8vN1pB5z';
    data.merged = { ...record, id: data.mergedId };
  }
  if (key.endsWith('.updated') || key.endsWith('.merged')) {
    const [field, before] = EXAMPLE_CHANGE[dataKey] ?? ['name', 'Earlier name'];
    data.changes = [field];
    data.previous = { [field]: before };
  }
  return data;
}

function payloadSchema(key: string, dataKey: string) {
  return {
    type: 'object',
    required: ['event', 'tenantId', 'timestamp', 'data'],
    properties: {
      event: { type: 'string', const: key, description: 'The event key' },
      tenantId: { type: 'string' },
      timestamp: { type: 'string', format: 'date-time', description: 'When the event happened (UTC, milliseconds); the same on every attempt' },
      data: dataSchema(key, dataKey),
    },
  };
}

/** A complete example body of an event (the README and the document show one per type). */
export function examplePayload(key: string): Record<string, unknown> {
  const dataKey = key === TEST_EVENT ? 'webhook' : dataKeyOf(key);
  return { event: key, tenantId: 'ten_7Hq2mK9xL4pR8vN3bT6w', timestamp: '2026-11-24T10:00:00.000Z', data: exampleData(key, dataKey) };
}

function entry(key: string, label: string) {
  const dataKey = key === TEST_EVENT ? 'webhook' : dataKeyOf(key);
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
      requestBody: {
        required: true,
        content: { 'application/json': { schema: payloadSchema(key, dataKey), ...(key === TEST_EVENT ? {} : { example: examplePayload(key) }) } },
      },
      responses: {
        '2XX': { description: 'Received. The body is kept (first 1 KiB) in the delivery record.' },
        default: { description: 'Anything else is a failed attempt and is retried.' },
      },
    },
  };
}

export const WEBHOOK_DOCS: Record<string, unknown> = Object.fromEntries([
  ...EVENT_TYPES.map((e) => [e.key, entry(e.key, e.label)]),
  [TEST_EVENT, entry(TEST_EVENT, 'Test delivery')],
]);
