import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { contextFor, ctxOf, requestSignal } from '../../http/context.js';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../../http/schemas.js';
import * as service from './events.service.js';
import { EventListQuery, EventPage } from './events.schema.js';

const EVENTS_DOC = [
  "The tenant's events, oldest first: every change an integrator syncs (the catalog of `GET /webhooks/event-types`), each with the same `data` a webhook delivery of it carries. " +
    'Needs the `events:read` scope (`*` covers it).',
  '**Following the log.** Keep the `id` of the last event you processed and ask for `after=<that id>`: you get every later event exactly once, in the order of the log, ' +
    'including events of changes that started earlier but committed later (events take their place in the log when their change commits, so none is ever skipped). ' +
    'Within one response, `pagination.nextCursor` continues the same query (same `types` and `after`); `after` alone is enough to follow the log.',
  '**Long-polling.** With `wait=<seconds>` (at most 30) and no matching event yet, the request is held until one is committed (answered within milliseconds, on any server process) ' +
    'or the wait ends (200 with an empty `data`). Loop on it to get changes without a public HTTPS endpoint. ' +
    'At most 10 waiting requests per API key and 1000 per server process (by default): beyond, 429 `too_many_waiting_requests` with `Retry-After`. ' +
    'When the server shuts down, waiting requests are answered at once with what they have.',
  '**Retention.** Events are kept for the retention period (30 days by default) and then deleted; an `after` id removed by retention, like any id that is no event of the tenant, matches nothing (200 with an empty `data`, at once even with `wait`): start again without `after`. ' +
    'An event is never deleted while one of its webhook deliveries is still pending or scheduled for a retry.',
  '`pagination.total` is always `null` (a count would cost what reading the log costs); `page`, `totalPages` and `hasPrev` are `null` too.',
].join('\n\n');

const serializedPages = new WeakMap<object, string>();

/** CONTRACT C.4: the event log. */
export const eventsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/events',
    {
      config: { scopes: ['events:read'] },
      schema: {
        tags: ['Events'],
        operationId: 'listEvents',
        summary: 'List events (pull, with long-polling)',
        description: EVENTS_DOC,
        querystring: EventListQuery,
        response: {
          200: EventPage,
          ...errorResponses(400),
          429: Type.Ref('Error', {
            description:
              '`too_many_waiting_requests` (waiting requests of the key or the server at their bound), `rate_limit_exceeded` or `too_many_concurrent_queries`',
          }),
        },
      },
    },
    async (req, reply) => {
      const signal = requestSignal(req);
      // A long-poll's reads may be shared with the key's other waiting requests: one client going away must
      // not abandon them (its own wait ends through `signal`; the reads are short and bounded).
      const ctx = req.query.wait ? contextFor(req.server.database, req.server.config, req.principal.tenantId, req.principal.userId) : ctxOf(req);
      const page = await service.listEvents(ctx, req.query, req.principal.keyId, { waiters: req.server.eventWaiters, signal });
      // Long-polls woken by one commit often answer the very same page object (service.listEvents): it is
      // serialized once for all of them.
      let body = req.query.wait ? serializedPages.get(page) : undefined;
      if (body === undefined) {
        body = service.eventPageJson(page);
        if (req.query.wait) serializedPages.set(page, body);
      }
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
};
