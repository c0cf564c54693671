import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { answer } from '../../http/replies.js';
import { errorResponses, IdParams, LISTING_DOC } from '../../http/schemas.js';
import { registerRestoreRoute } from '../shared/restore.js';
import * as service from './lists.service.js';
import { List, ListCreate, ListQuery, ListUpdate, MemberPage, MemberParams, MembersAdd, MembersAdded, MembersQuery } from './lists.schema.js';

const tags = ['Lists'];
const read = { scopes: ['lists:read'] };
const write = { scopes: ['lists:write'] };
const NoContent = Type.Null({ description: 'Done; no body' });

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** Spec 4.6 with CONTRACT B.7 (routes in this order in the reference). */
export const listsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  readAndCreateRoutes(app);
  changeRoutes(app);
  memberRoutes(app);
  registerRestoreRoute(app, { path: 'lists', type: 'list', tag: 'Lists', noun: 'List', schema: List, read: service.getList });
};

/** The lists, one list, a new static list. */
function readAndCreateRoutes(app: App): void {
  app.get(
    '/lists',
    {
      config: read,
      schema: {
        operationId: 'listLists',
        tags,
        summary: 'List lists (static and dynamic)',
        description: 'Requires scope `lists:read`. Ordered by `createdAt`, then `id`. Not paginated.',
        querystring: ListQuery,
        response: { 200: Type.Array(List), ...errorResponses(400) },
      },
    },
    async (req) => service.listLists(ctxOf(req), req.query),
  );

  app.get(
    '/lists/:id',
    {
      config: read,
      schema: { operationId: 'getList', tags, summary: 'Get a list', params: IdParams, response: { 200: List, ...errorResponses(404) } },
    },
    async (req) => service.getList(ctxOf(req), req.params.id),
  );

  app.post(
    '/lists',
    {
      config: { ...write, valueRules: service.LIST_VALUE_RULES },
      schema: {
        operationId: 'createList',
        tags,
        summary: 'Create a static list',
        description: 'Requires scope `lists:write`. `kind` must be `static` (dynamic lists are created only in the CRM UI: 400 `validation_failed`).',
        body: ListCreate,
        response: { 201: List, ...errorResponses(400) },
      },
    },
    async (req, reply) => answer(reply, 201, service.createList(ctxOf(req), req.body)),
  );
}

/** A static list renamed, described or deleted. */
function changeRoutes(app: App): void {
  app.patch(
    '/lists/:id',
    {
      config: { ...write, valueRules: service.LIST_VALUE_RULES },
      // `kind`/`objectType` in the body are named as immutable, before the generic unknown-field check.
      preValidation: async (req) => service.assertImmutableFieldsAbsent(req.body),
      schema: {
        operationId: 'updateList',
        tags,
        summary: 'Rename or describe a static list',
        description:
          'Requires scope `lists:write`. Only `name` and `description` change; `kind` or `objectType` in the body is 400 ' +
          '`validation_failed`. Dynamic lists are read-only through the API: 409 `list_kind_mismatch`.',
        params: IdParams,
        body: ListUpdate,
        response: { 200: List, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => service.updateList(ctxOf(req), req.params.id, req.body),
  );

  app.delete(
    '/lists/:id',
    {
      config: write,
      schema: {
        operationId: 'deleteList',
        tags,
        summary: 'Delete a static list (soft delete)',
        description: 'Requires scope `lists:write`. Members are left untouched. Dynamic lists are read-only through the API: 409 `list_kind_mismatch`.',
        params: IdParams,
        response: { 204: NoContent, ...errorResponses(404, 409) },
      },
    },
    async (req, reply) => {
      await service.deleteList(ctxOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}

/** A list's members: read, added, removed. */
function memberRoutes(app: App): void {
  app.get(
    '/lists/:id/members',
    {
      config: read,
      schema: {
        operationId: 'listListMembers',
        tags,
        summary: 'List the members of a list',
        description:
          "Requires scope `lists:read`. `data[]` holds the member records (contacts, companies or deals, by the list's " +
          '`objectType`) exactly as their single read returns them; `data[].id` is the record id. Ordered by when each ' +
          'record joined the list, then by id. Soft-deleted records are never members. ' +
          LISTING_DOC,
        params: IdParams,
        querystring: MembersQuery,
        response: { 200: MemberPage, ...errorResponses(400, 404) },
      },
    },
    async (req) => service.listMembers(ctxOf(req), req.params.id, req.query, req.principal.keyId),
  );

  app.post(
    '/lists/:id/members',
    {
      config: write,
      schema: {
        operationId: 'addListMembers',
        tags,
        summary: 'Add members to a static list',
        description:
          'Requires scope `lists:write`. All-or-nothing: if any id is missing, soft-deleted or of another object type, the ' +
          'answer is 404 `not_found` with `ids` (the offending ids) and nothing is added. Ids already members are ignored. ' +
          'Dynamic lists: 409 `list_kind_mismatch`.',
        params: IdParams,
        body: MembersAdd,
        response: { 200: MembersAdded, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => service.addMembers(ctxOf(req), req.params.id, req.body),
  );

  app.delete(
    '/lists/:id/members/:objectId',
    {
      config: write,
      schema: {
        operationId: 'removeListMember',
        tags,
        summary: 'Remove a member from a static list',
        description: 'Requires scope `lists:write`. 404 when the record is not a member. Dynamic lists: 409 `list_kind_mismatch`.',
        params: MemberParams,
        response: { 204: NoContent, ...errorResponses(404, 409) },
      },
    },
    async (req, reply) => {
      await service.removeMember(ctxOf(req), req.params.id, req.params.objectId);
      return reply.code(204).send(null);
    },
  );
}
