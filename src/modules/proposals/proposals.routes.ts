import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { answer } from '../../http/replies.js';
import { errorResponses, IdParams, LISTING_DOC } from '../../http/schemas.js';
import { registerRestoreRoute } from '../shared/restore.js';
import * as service from './proposals.service.js';
import { Proposal, ProposalCreate, ProposalListQuery, ProposalPage, ProposalUpdate } from './proposals.schema.js';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

const tags = ['Proposals'];
const read = { scopes: ['proposals:read'] };
const write = { scopes: ['proposals:write'] };

/** Spec 4.7 with CONTRACT B.8. */
export const proposalsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  readRoutes(app);
  writeRoutes(app);
  registerRestoreRoute(app, {
    path: 'proposals',
    type: 'proposal',
    tag: 'Proposals',
    noun: 'Proposal',
    schema: Proposal,
    unique: ['deal_id'],
    read: service.getProposal,
  });
};

/** The list and one proposal. */
function readRoutes(app: App): void {
  app.get(
    '/proposals',
    {
      config: read,
      schema: {
        operationId: 'listProposals',
        tags,
        summary: 'List proposals',
        description:
          'Requires scope `proposals:read`. Paginated envelope; `limit` is the page size (default 50, max 100). ' +
          'Newest first by default (`createdAt` descending, then `id`; `sortKey`/`sortOrder` change it). Each proposal has the full single-read shape. An unknown ' +
          '`status` value is 400 `validation_failed`; id filters of another tenant simply match nothing; `updatedAfter` is strict. ' +
          LISTING_DOC,
        querystring: ProposalListQuery,
        response: { 200: ProposalPage, ...errorResponses(400) },
      },
    },
    async (req) => service.listProposals(ctxOf(req), req.query, req.principal.keyId),
  );

  app.get(
    '/proposals/:id',
    {
      config: read,
      schema: {
        operationId: 'getProposal',
        tags,
        summary: 'Get a proposal with items, totals and expanded deal, contact and company',
        params: IdParams,
        response: { 200: Proposal, ...errorResponses(404) },
      },
    },
    async (req) => service.getProposal(ctxOf(req), req.params.id),
  );
}

/** Create, update and delete one proposal. */
function writeRoutes(app: App): void {
  app.post(
    '/proposals',
    {
      config: { ...write, valueRules: service.PROPOSAL_VALUE_RULES },
      schema: {
        operationId: 'createProposal',
        tags,
        summary: 'Create a proposal',
        description:
          'Requires scope `proposals:write`. `number` is generated (`PR-<year>-<seq>`). The proposal starts as `draft`. ' +
          'Item totals, `subtotal` and `total` are computed exactly. A `dealId` that already has a live proposal is 400 ' +
          '`duplicate_proposal_for_deal`; a reference that does not exist in the tenant is 404 naming the field.',
        body: ProposalCreate,
        response: { 201: Proposal, ...errorResponses(400, 404, 422) },
      },
    },
    async (req, reply) => answer(reply, 201, service.createProposal(ctxOf(req), req.body)),
  );

  app.patch(
    '/proposals/:id',
    {
      config: { ...write, valueRules: service.PROPOSAL_VALUE_RULES },
      schema: {
        operationId: 'updateProposal',
        tags,
        summary: 'Update a proposal or move its status',
        description:
          'Requires scope `proposals:write`. Partial update; `items` replaces the whole list. `status` outside the enum is ' +
          '400 `invalid_status`; allowed moves are draft→sent, sent→accepted|declined|expired and declined|expired→draft ' +
          '(accepted is final; any other move is 422 `business_rule_violation`). Moving to `sent` sets `sentAt`. Each move ' +
          'raises `proposal.<status>` (none for a move back to draft); sending the current status changes nothing.',
        params: IdParams,
        body: ProposalUpdate,
        response: { 200: Proposal, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (req) => service.updateProposal(ctxOf(req), req.params.id, req.body),
  );

  app.delete(
    '/proposals/:id',
    {
      config: write,
      schema: {
        operationId: 'deleteProposal',
        tags,
        summary: 'Delete a proposal (soft delete)',
        description: 'Requires scope `proposals:write`. The linked deal is untouched and may get a new proposal.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted; no body' }), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      await service.deleteProposal(ctxOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}
