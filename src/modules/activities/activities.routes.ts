import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { answer } from '../../http/replies.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import * as service from './activities.service.js';
import { Activity, ActivityCreate, ActivityListQuery, ActivityUpdate, BULK_MAX, BulkAssign, BulkComplete, BulkResult } from './activities.schema.js';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

const tags = ['Activities'];
const read = { scopes: ['activities:read'] };
const write = { scopes: ['activities:write'] };

/** Spec 4.2 (plus `GET /activities/:id`). */
export const activitiesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  readRoutes(app);
  writeRoutes(app);
  bulkRoutes(app);
};

/** GET /activities and GET /activities/:id. */
function readRoutes(app: App): void {
  app.get(
    '/activities',
    {
      config: read,
      schema: {
        operationId: 'listActivities',
        tags,
        summary: 'Activities linked to a contact, company or deal',
        description:
          'Requires scope `activities:read`. Every activity linked to the record, `createdAt` descending (ties by id); not paginated. 404 when `relatedId` is missing or deleted in the tenant.',
        querystring: ActivityListQuery,
        response: { 200: Type.Array(Activity), ...errorResponses(400, 404) },
      },
    },
    async (req) => service.listRelated(ctxOf(req), req.query.relatedType, req.query.relatedId),
  );

  app.get(
    '/activities/:id',
    {
      config: read,
      schema: { operationId: 'getActivity', tags, summary: 'Get an activity', params: IdParams, response: { 200: Activity, ...errorResponses(404) } },
    },
    async (req) => service.getActivity(ctxOf(req), req.params.id),
  );
}

/** Create, update and delete one activity. */
function writeRoutes(app: App): void {
  app.post(
    '/activities',
    {
      config: { ...write, valueRules: service.ACTIVITY_VALUE_RULES },
      schema: {
        operationId: 'createActivity',
        tags,
        summary: 'Create an activity',
        description:
          'Requires scope `activities:write`. `ownerId` defaults to the user of the API key. Linked ids must exist in the tenant (404 naming e.g. `dealIds[1]`). `dueDate`/`completedAt` not ISO 8601 → 400 `invalid_format`.',
        body: ActivityCreate,
        response: { 201: Activity, ...errorResponses(400, 404) },
      },
    },
    async (req, reply) => answer(reply, 201, service.createActivity(ctxOf(req), req.body)),
  );

  app.patch(
    '/activities/:id',
    {
      config: { ...write, valueRules: service.ACTIVITY_VALUE_RULES },
      schema: {
        operationId: 'updateActivity',
        tags,
        summary: 'Update an activity',
        description: 'Requires scope `activities:write`. Any subset of the fields; an id array given replaces that array.',
        params: IdParams,
        body: ActivityUpdate,
        response: { 200: Activity, ...errorResponses(400, 404) },
      },
    },
    async (req) => service.updateActivity(ctxOf(req), req.params.id, req.body),
  );

  app.delete(
    '/activities/:id',
    {
      config: write,
      schema: {
        operationId: 'deleteActivity',
        tags,
        summary: 'Delete an activity (hard delete)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted; no body' }), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      await service.deleteActivity(ctxOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}

/** The bulk operations: complete and assign. */
function bulkRoutes(app: App): void {
  app.post(
    '/activities/bulk/complete',
    {
      config: write,
      schema: {
        operationId: 'completeActivities',
        tags,
        summary: 'Complete or reopen many activities',
        description: `Requires scope \`activities:write\`. 1 to ${BULK_MAX} ids; ids not found in the tenant are skipped. One statement.`,
        body: BulkComplete,
        response: { 200: BulkResult, ...errorResponses(400) },
      },
    },
    async (req) => service.bulkComplete(ctxOf(req), req.body),
  );

  app.post(
    '/activities/bulk/assign',
    {
      config: write,
      schema: {
        operationId: 'assignActivities',
        tags,
        summary: 'Assign or unassign many activities',
        description: `Requires scope \`activities:write\`. 1 to ${BULK_MAX} ids; ids not found in the tenant are skipped; \`assignedToId\` must be a user of the tenant (404), null unassigns. One statement.`,
        body: BulkAssign,
        response: { 200: BulkResult, ...errorResponses(400, 404) },
      },
    },
    async (req) => service.bulkAssign(ctxOf(req), req.body),
  );
}
