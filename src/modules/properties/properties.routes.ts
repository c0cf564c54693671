import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { errorResponses } from '../../http/schemas.js';
import * as service from './properties.service.js';
import { Property, PropertyListQuery } from './properties.schema.js';

const tags = ['Properties'];

/** Spec 4.8: custom property definitions are made in the CRM UI and read-only here. */
export const propertiesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/properties',
    {
      config: { scopes: ['properties:read'] },
      schema: {
        operationId: 'listProperties',
        tags,
        summary: 'List custom property definitions of an object type',
        description: '`objectType` is required (400 `validation_failed` when missing or invalid). Ordered by displayOrder. Requires scope `properties:read`.',
        querystring: PropertyListQuery,
        response: { 200: Type.Array(Property), ...errorResponses(400) },
      },
    },
    async (req) => service.listProperties(ctxOf(req), req.query.objectType),
  );
};
