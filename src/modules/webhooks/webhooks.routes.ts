import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { answer } from '../../http/replies.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import * as service from './webhooks.service.js';
import { publicBaseUrl } from '../forms/forms.routes.js';
import {
  DeliveriesQuery,
  Delivery,
  DeliveryParams,
  EventTypeSchema,
  RecoverBody,
  RecoverResult,
  TestResult,
  Webhook,
  WebhookCreate,
  WebhookUpdate,
} from './webhooks.schema.js';

const tags = ['Webhooks'];
const manage = { scopes: ['webhooks:manage'] };

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** Spec 4.11 and CONTRACT B.9 (routes in this order in the reference). */
export const webhooksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  readRoutes(app);
  writeRoutes(app);
  secretAndTestRoutes(app);
  deliveryListRoute(app);
  deliveryRecoveryRoutes(app);
};

/** The event types, the webhooks and one webhook. */
function readRoutes(app: App): void {
  app.get(
    '/webhooks/event-types',
    {
      config: manage,
      schema: {
        operationId: 'listWebhookEventTypes',
        tags,
        summary: 'List the event types a webhook can subscribe to',
        response: { 200: Type.Array(EventTypeSchema) },
      },
    },
    async () => service.listEventTypes(),
  );

  app.get(
    '/webhooks',
    {
      config: manage,
      schema: { operationId: 'listWebhooks', tags, summary: 'List webhooks (secret shown as a prefix)', response: { 200: Type.Array(Webhook) } },
    },
    async (req) => service.listWebhooks(ctxOf(req)),
  );

  app.get(
    '/webhooks/:id',
    {
      config: manage,
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'Get a webhook (secret shown as a prefix)',
        params: IdParams,
        response: { 200: Webhook, ...errorResponses(404) },
      },
    },
    async (req) => service.getWebhook(ctxOf(req), req.params.id),
  );
}

/** Create, update, delete. */
function writeRoutes(app: App): void {
  app.post(
    '/webhooks',
    {
      config: { ...manage, valueRules: service.WEBHOOK_VALUE_RULES },
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Create a webhook',
        description:
          'Requires scope `webhooks:manage`. Answers 201 with the webhook and its full `secret`, shown only here and on rotation. ' +
          'A missing `name`/`url`/`events` is 400 `validation_failed`; a non-HTTPS or malformed `url` is 400 `invalid_url`; ' +
          'an unknown event key is 400 `invalid_event`.',
        body: WebhookCreate,
        response: { 201: Webhook, ...errorResponses(400) },
      },
    },
    async (req, reply) => answer(reply, 201, service.createWebhook(ctxOf(req), req.body)),
  );

  app.patch(
    '/webhooks/:id',
    {
      config: { ...manage, valueRules: service.WEBHOOK_VALUE_RULES },
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Update a webhook',
        description:
          'Requires scope `webhooks:manage`. Accepts `name`, `url`, `events`, `isActive`, `headers` (replaced as a whole), validated as on create. ' +
          'Deactivating stops the webhook at once: deliveries waiting for an attempt end as `permanent_failure` and are not sent even after reactivation ' +
          '(POST /webhooks/:id/recover sends them again on request). Activating (`isActive: true`) clears `disabledReason` and starts the ' +
          "endpoint's health count afresh.",
        params: IdParams,
        body: WebhookUpdate,
        response: { 200: Webhook, ...errorResponses(400, 404) },
      },
    },
    async (req) => service.updateWebhook(ctxOf(req), req.params.id, req.body),
  );

  app.delete(
    '/webhooks/:id',
    {
      config: manage,
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a webhook and its delivery history; nothing more is sent for it',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted; no body' }), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      await service.deleteWebhook(ctxOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}

/** A new signing secret; a `webhook.test` sent now. */
function secretAndTestRoutes(app: App): void {
  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: manage,
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: 'Replace the signing secret',
        description:
          'Requires scope `webhooks:manage`. Answers the webhook with its new full `secret`, shown once; the next attempt of every delivery is signed with it.',
        params: IdParams,
        response: { 200: Webhook, ...errorResponses(404) },
      },
    },
    async (req) => service.rotateSecret(ctxOf(req), req.params.id),
  );

  app.post(
    '/webhooks/:id/test',
    {
      config: { ...manage, idempotencyOutbound: true },
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Send a `webhook.test` event now',
        description:
          'Requires scope `webhooks:manage`. Makes one attempt now (active or not), waits for it (up to the delivery timeout) and records it ' +
          'in the delivery history as `delivered` or `permanent_failure`; a test is never retried.',
        params: IdParams,
        response: { 200: TestResult, ...errorResponses(404) },
      },
    },
    async (req) => service.testWebhook(ctxOf(req), req.params.id),
  );
}

/** The delivery history, paged by a `Link` header. */
function deliveryListRoute(app: App): void {
  app.get(
    '/webhooks/:id/deliveries',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Delivery history of a webhook, newest first',
        operationId: 'listWebhookDeliveries',
        description:
          "Requires scope `webhooks:manage`. The spec's bare array, newest first (`limit`, alias `pageSize`: default 50, max 100), " +
          'filtered by `status` and `event`. When more deliveries follow, the answer carries a `Link: <…?cursor=…>; rel="next"` header ' +
          '(as GitHub does) whose URL repeats the other query parameters; it is absent on the last page. The cursor pages by keyset ' +
          '(created, id): a delivery made while you walk never shifts a page.',
        params: IdParams,
        querystring: DeliveriesQuery,
        response: {
          200: {
            ...Type.Array(Delivery, { description: 'One page of deliveries, newest first' }),
            // Documentation only (@fastify/swagger): one schema per response header.
            headers: {
              Link: Type.String({
                description: 'The next page: `<https://…/api/v1/webhooks/{id}/deliveries?limit=50&cursor=…>; rel="next"`; absent on the last page',
              }),
            },
          },
          ...errorResponses(400, 404),
        },
      },
    },
    async (req, reply) => {
      const page = await service.listDeliveries(ctxOf(req), req.params.id, req.query, req.principal.keyId);
      if (page.nextCursor) reply.header('link', `<${nextPageUrl(req, page.nextCursor)}>; rel="next"`);
      return page.data;
    },
  );
}

/** One delivery attempted again now; failed deliveries scheduled again. */
function deliveryRecoveryRoutes(app: App): void {
  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      // The attempt waits on the destination: an Idempotency-Key is claimed first and answered after (plugins/idempotency.ts).
      config: { ...manage, idempotencyOutbound: true },
      schema: {
        tags,
        summary: 'Attempt one delivery again, now',
        operationId: 'retryWebhookDelivery',
        description:
          'Requires scope `webhooks:manage`. Makes one more attempt of the delivery now, whatever its status (after `permanent_failure`, ' +
          'and also for a `delivered` one, to send it again), waits for it (up to the delivery timeout) and answers 200 with the delivery ' +
          'as it is after the attempt: the result is appended to the same delivery (`attempts` grows, `statusCode`, `responseSnippet`, ' +
          '`lastError` describe this attempt). This attempt is extra: a delivery waiting for a retry keeps its automatic attempts; an ended ' +
          'one that fails again stays `permanent_failure`. The same `webhook-id` (the event id) is sent, so receivers can deduplicate. ' +
          '404 for a delivery of another webhook or tenant; 409 `webhook_inactive` when the webhook is inactive (activate it first); ' +
          '409 `delivery_in_progress` when an attempt of it is being made right now.',
        params: DeliveryParams,
        response: { 200: Delivery, ...errorResponses(404, 409) },
      },
    },
    async (req) => service.retryDelivery(ctxOf(req), req.params.id, req.params.deliveryId),
  );

  app.post(
    '/webhooks/:id/recover',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Schedule failed deliveries again (after an outage)',
        operationId: 'recoverWebhookDeliveries',
        description:
          'Requires scope `webhooks:manage`. Every `permanent_failure` delivery of this webhook created at or after `since` becomes due ' +
          'now (status `retry_scheduled`) with a fresh cycle of 5 automatic attempts (the retry delays start again from the first); ' +
          '`attempts` keeps counting. Webhook tests (`webhook.test`) are not included. Answers `{ scheduled }`, the number of deliveries ' +
          'scheduled; the worker makes the attempts. A non-ISO `since` is 400 `validation_failed`; an inactive webhook is 409 ' +
          '`webhook_inactive` (deliveries that ended because it was deactivated can be recovered once it is active again).',
        params: IdParams,
        body: RecoverBody,
        response: { 200: RecoverResult, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => service.recoverDeliveries(ctxOf(req), req.params.id, req.body),
  );
}

/** The URL of the next page: this request's path and query parameters, with `cursor` set. */
function nextPageUrl(req: FastifyRequest, cursor: string): string {
  const url = new URL(req.url, publicBaseUrl(req));
  url.searchParams.set('cursor', cursor);
  return url.toString();
}
