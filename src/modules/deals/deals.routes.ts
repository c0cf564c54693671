import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { answer, sendJsonText } from '../../http/replies.js';
import { sendPage } from '../../listing/page.js';
import { errorResponses, IdParams, LISTING_DOC } from '../../http/schemas.js';
import { registerBatchRoutes, type BatchResource } from '../shared/batch.js';
import { registerRestoreRoute } from '../shared/restore.js';
import * as service from './deals.service.js';
import { ContactDeal, Deal, DealCreate, DealListQuery, DealPage, DealUpdate } from './deals.schema.js';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

const tags = ['Deals'];
const read = { scopes: ['deals:read'] };
const write = { scopes: ['deals:write'] };

/** CONTRACT C.2: batches run the single calls' service functions; deals have no natural key to upsert on. */
const batch: BatchResource = {
  path: 'deals',
  tag: 'Deals',
  noun: 'deal',
  schemas: { record: Deal, create: DealCreate, update: DealUpdate },
  valueRules: service.DEAL_VALUE_RULES,
  dataValueRules: service.DEAL_DATA_RULES,
  create: service.createDeal,
  update: service.updateDeal,
  remove: service.deleteDeal,
  byIds: service.dealsByIds,
  upsertKeys: {},
};

/** Spec 4.3, plus `GET /contacts/:id/deals` of spec 4.1 (a contact sub-read: scope contacts:read). */
export const dealsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  readRoutes(app);
  writeRoutes(app);
  contactDealsRoute(app);
  registerBatchRoutes(app, batch);
  registerRestoreRoute(app, {
    path: 'deals',
    type: 'deal',
    tag: 'Deals',
    noun: 'Deal',
    schema: Deal,
    references: [{ column: 'company_id', target: 'companies' }],
    read: service.getDeal,
  });
};

/** The list and one deal. */
function readRoutes(app: App): void {
  app.get(
    '/deals',
    {
      config: read,
      schema: {
        operationId: 'listDeals',
        tags,
        summary: 'List deals',
        description:
          'Requires scope `deals:read`. Paginated (2.12 envelope). Filters combine with AND; `valueMin`/`valueMax` and `closedAtFrom`/`closedAtTo` are inclusive; `updatedAfter` is strict; empty values sort last in both directions. Ids of another tenant match nothing. ' +
          LISTING_DOC,
        querystring: DealListQuery,
        response: { 200: DealPage, ...errorResponses(400) },
      },
    },
    async (req, reply) => sendPage(reply, await service.listDeals(ctxOf(req), req.query, req.principal.keyId)),
  );

  app.get(
    '/deals/:id',
    {
      config: read,
      schema: {
        operationId: 'getDeal',
        tags,
        summary: 'Get a deal with its contact and company expanded',
        params: IdParams,
        response: { 200: Deal, ...errorResponses(404) },
      },
    },
    async (req, reply) => sendJsonText(reply, await service.getDealJson(ctxOf(req), req.params.id)),
  );
}

/** Create, update and delete one deal. */
function writeRoutes(app: App): void {
  app.post(
    '/deals',
    {
      config: { ...write, valueRules: service.DEAL_VALUE_RULES, dataValueRules: service.DEAL_DATA_RULES },
      schema: {
        operationId: 'createDeal',
        tags,
        summary: 'Create a deal',
        description:
          'Requires scope `deals:write`. `stageId` must belong to `pipelineId` (409 `stage_invalid`). A stage with `isWonStage`/`isLostStage` wins/loses the deal. Emits `deal.created` (and `deal.won`/`deal.lost` when created closed).',
        body: DealCreate,
        response: { 201: Deal, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (req, reply) => answer(reply, 201, service.createDeal(ctxOf(req), req.body)),
  );

  app.patch(
    '/deals/:id',
    {
      config: { ...write, valueRules: service.DEAL_VALUE_RULES, dataValueRules: service.DEAL_DATA_RULES },
      schema: {
        operationId: 'updateDeal',
        tags,
        summary: 'Update a deal: edit, move stage or pipeline, win, lose or reopen',
        description:
          'Requires scope `deals:write`. A `stageId` outside the deal’s pipeline is 422; `pipelineId` needs a `stageId` of that pipeline (400 without, 409 `stage_invalid` outside it). Both flags true in the result is 422. Winning sets `closedAt` (given or now); losing sets it to now; a flag set back to false reopens and clears `closedAt`, `lossReasonId`, `lossNotes`. Emits `deal.stage_changed` (with `previousStageId`), `deal.won`, `deal.lost`.',
        params: IdParams,
        body: DealUpdate,
        response: { 200: Deal, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (req) => service.updateDeal(ctxOf(req), req.params.id, req.body),
  );

  app.delete(
    '/deals/:id',
    {
      config: write,
      schema: {
        operationId: 'deleteDeal',
        tags,
        summary: 'Delete a deal (soft delete; linked activities remain)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted; no body' }), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      await service.deleteDeal(ctxOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}

/** GET /contacts/:id/deals. */
function contactDealsRoute(app: App): void {
  app.get(
    '/contacts/:id/deals',
    {
      config: { scopes: ['contacts:read'] },
      schema: {
        operationId: 'listContactDeals',
        tags: ['Contacts'],
        summary: 'Deals of a contact',
        description: 'Requires scope `contacts:read`. Open deals first, then by `updatedAt` descending. 404 when the contact is missing or deleted.',
        params: IdParams,
        response: { 200: Type.Array(ContactDeal), ...errorResponses(404) },
      },
    },
    async (req) => service.contactDeals(ctxOf(req), req.params.id),
  );
}
