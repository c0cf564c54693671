import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import * as service from './webhooks.service.js';
import { DeliveriesQuery, Delivery, EventTypeSchema, TestResult, Webhook, WebhookCreate, WebhookUpdate } from './webhooks.schema.js';

const tags = ['Webhooks'];
const manage = { scopes: ['webhooks:manage'] };

/** Spec 4.11 and CONTRACT B.9. */
export const webhooksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/webhooks/event-types', {
    config: manage,
    schema: { tags, summary: 'List the event types a webhook can subscribe to', response: { 200: Type.Array(EventTypeSchema) } },
  }, async () => service.listEventTypes());

  app.get('/webhooks', {
    config: manage,
    schema: { tags, summary: 'List webhooks (secret shown as a prefix)', response: { 200: Type.Array(Webhook) } },
  }, async (req) => service.listWebhooks(ctxOf(req)));

  app.get('/webhooks/:id', {
    config: manage,
    schema: { tags, summary: 'Get a webhook (secret shown as a prefix)', params: IdParams, response: { 200: Webhook, ...errorResponses(404) } },
  }, async (req) => service.getWebhook(ctxOf(req), req.params.id));

  app.post('/webhooks', {
    config: manage,
    schema: {
      tags,
      summary: 'Create a webhook',
      description:
        'Requires scope `webhooks:manage`. Answers 201 with the webhook and its full `secret`, shown only here and on rotation. ' +
        'A missing `name`/`url`/`events` is 400 `validation_failed`; a non-HTTPS or malformed `url` is 400 `invalid_url`; ' +
        'an unknown event key is 400 `invalid_event`.',
      body: WebhookCreate,
      response: { 201: Webhook, ...errorResponses(400) },
    },
  }, async (req, reply) => reply.code(201).send(await service.createWebhook(ctxOf(req), req.body)));

  app.patch('/webhooks/:id', {
    config: manage,
    schema: {
      tags,
      summary: 'Update a webhook',
      description:
        'Requires scope `webhooks:manage`. Accepts `name`, `url`, `events`, `isActive`, `headers` (replaced as a whole), validated as on create. ' +
        'Deactivating stops the webhook at once: deliveries waiting for an attempt end as `permanent_failure` and are not sent even after reactivation.',
      params: IdParams,
      body: WebhookUpdate,
      response: { 200: Webhook, ...errorResponses(400, 404) },
    },
  }, async (req) => service.updateWebhook(ctxOf(req), req.params.id, req.body));

  app.delete('/webhooks/:id', {
    config: manage,
    schema: {
      tags,
      summary: 'Delete a webhook and its delivery history; nothing more is sent for it',
      params: IdParams,
      response: { 204: Type.Null({ description: 'Deleted; no body' }), ...errorResponses(404) },
    },
  }, async (req, reply) => {
    await service.deleteWebhook(ctxOf(req), req.params.id);
    return reply.code(204).send(null);
  });

  app.post('/webhooks/:id/rotate-secret', {
    config: manage,
    schema: {
      tags,
      summary: 'Replace the signing secret',
      description: 'Requires scope `webhooks:manage`. Answers the webhook with its new full `secret`, shown once; the next attempt of every delivery is signed with it.',
      params: IdParams,
      response: { 200: Webhook, ...errorResponses(404) },
    },
  }, async (req) => service.rotateSecret(ctxOf(req), req.params.id));

  app.post('/webhooks/:id/test', {
    config: { ...manage, idempotencyOutbound: true },
    schema: {
      tags,
      summary: 'Send a `webhook.test` event now',
      description:
        'Requires scope `webhooks:manage`. Makes one attempt now (active or not), waits for it (up to the delivery timeout) and records it ' +
        'in the delivery history as `delivered` or `permanent_failure`; a test is never retried.',
      params: IdParams,
      response: { 200: TestResult, ...errorResponses(404) },
    },
  }, async (req) => service.testWebhook(ctxOf(req), req.params.id));

  app.get('/webhooks/:id/deliveries', {
    config: manage,
    schema: {
      tags,
      summary: 'Delivery history of a webhook, newest first',
      params: IdParams,
      querystring: DeliveriesQuery,
      response: { 200: Type.Array(Delivery), ...errorResponses(400, 404) },
    },
  }, async (req) => service.listDeliveries(ctxOf(req), req.params.id, req.query));
};
