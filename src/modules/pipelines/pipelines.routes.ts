import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import * as service from './pipelines.service.js';
import { Pipeline } from './pipelines.schema.js';

const tags = ['Pipelines'];
const read = { scopes: ['pipelines:read'] };

/** Spec 4.9: pipelines and stages are configured in the CRM UI and read-only here. */
export const pipelinesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/pipelines',
    {
      config: read,
      schema: {
        operationId: 'listPipelines',
        tags,
        summary: 'List pipelines with their stages',
        description: 'Ordered by displayOrder; stages too. Requires scope `pipelines:read`.',
        response: { 200: Type.Array(Pipeline) },
      },
    },
    async (req) => service.listPipelines(ctxOf(req)),
  );

  app.get(
    '/pipelines/:id',
    {
      config: read,
      schema: {
        operationId: 'getPipeline',
        tags,
        summary: 'Get a pipeline with its stages',
        params: IdParams,
        response: { 200: Pipeline, ...errorResponses(404) },
      },
    },
    async (req) => service.getPipeline(ctxOf(req), req.params.id),
  );
};
