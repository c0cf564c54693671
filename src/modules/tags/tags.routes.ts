import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { answer } from '../../http/replies.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import type { RecordReaders } from '../shared/records.js';
import * as service from './tags.service.js';
import { Tag, TagCreate, TagListQuery, TagUpdate } from './tags.schema.js';

const tags = ['Tags'];
const read = { scopes: ['tags:read'] };
const write = { scopes: ['tags:write'] };

/** Spec 4.5. Deleting a tag reads the records it leaves with `readers`. */
export const tagsRoutes =
  (readers: RecordReaders): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/tags',
      {
        config: read,
        schema: { operationId: 'listTags', tags, summary: 'List tags', querystring: TagListQuery, response: { 200: Type.Array(Tag), ...errorResponses(400) } },
      },
      async (req) => service.listTags(ctxOf(req), req.query.search),
    );

    app.get(
      '/tags/:id',
      {
        config: read,
        schema: { operationId: 'getTag', tags, summary: 'Get a tag', params: IdParams, response: { 200: Tag, ...errorResponses(404) } },
      },
      async (req) => service.getTag(ctxOf(req), req.params.id),
    );

    app.post(
      '/tags',
      {
        config: { ...write, valueRules: service.TAG_VALUE_RULES },
        schema: { operationId: 'createTag', tags, summary: 'Create a tag', body: TagCreate, response: { 201: Tag, ...errorResponses(400, 409) } },
      },
      async (req, reply) => answer(reply, 201, service.createTag(ctxOf(req), req.body)),
    );

    app.patch(
      '/tags/:id',
      {
        config: { ...write, valueRules: service.TAG_VALUE_RULES },
        schema: {
          operationId: 'updateTag',
          tags,
          summary: 'Update a tag',
          params: IdParams,
          body: TagUpdate,
          response: { 200: Tag, ...errorResponses(400, 404, 409) },
        },
      },
      async (req) => service.updateTag(ctxOf(req), req.params.id, req.body),
    );

    app.delete(
      '/tags/:id',
      {
        config: write,
        schema: {
          operationId: 'deleteTag',
          tags,
          summary: 'Delete a tag and its associations',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted; no body' }), ...errorResponses(404) },
        },
      },
      async (req, reply) => {
        await service.deleteTag(ctxOf(req), req.params.id, readers);
        return reply.code(204).send(null);
      },
    );
  };
