import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { errorResponses } from '../../http/schemas.js';
import * as service from './reference.service.js';
import { LossReason, User } from './reference.schema.js';

const tags = ['Reference data'];
// No parameters: an unknown one is 400 `validation_failed`, as on every list (README).
const querystring = Type.Object({}, { additionalProperties: false });

/**
 * CONTRACT C.5: read-only reference lists an integrator needs to fill ids. Like GET /pipelines, each
 * answers the whole (small) list as a bare array; both are configured in the CRM UI (A.3), not here.
 */
export const referenceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/users',
    {
      config: { scopes: ['users:read'] },
      schema: {
        tags,
        operationId: 'listUsers',
        summary: "List the tenant's users",
        description: 'Requires scope `users:read`. Every user of the tenant as `{ id, name, email }`, by name (case-insensitive), then id. Not paginated.',
        querystring,
        response: { 200: Type.Array(User), ...errorResponses(400) },
      },
    },
    async (req) => service.listUsers(ctxOf(req)),
  );

  app.get(
    '/loss-reasons',
    {
      config: { scopes: ['deals:read'] },
      schema: {
        tags,
        operationId: 'listLossReasons',
        summary: "List the tenant's loss reasons",
        description: 'Requires scope `deals:read`. Every loss reason of the tenant as `{ id, name }`, by name (case-insensitive), then id. Not paginated.',
        querystring,
        response: { 200: Type.Array(LossReason), ...errorResponses(400) },
      },
    },
    async (req) => service.listLossReasons(ctxOf(req)),
  );
};
