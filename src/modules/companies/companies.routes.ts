import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { answer, sendJsonText } from '../../http/replies.js';
import { sendPage } from '../../listing/page.js';
import { errorResponses, IdParams, LISTING_DOC } from '../../http/schemas.js';
import { normalizeCnpj } from '../../domain/cnpj.js';
import { normalizeDomain } from '../../domain/web.js';
import { registerBatchRoutes, type BatchResource } from '../shared/batch.js';
import { DUPLICATES_OF, registerDuplicatesRoute } from '../shared/duplicates.js';
import { registerRestoreRoute } from '../shared/restore.js';
import type { RecordReaders } from '../shared/records.js';
import * as service from './companies.service.js';
import { COMPANY_MERGE, mergeCompanies } from './companies.merge.js';
import { registerMergeRoute } from '../shared/merge.js';
import { Company, CompanyCreate, CompanyListQuery, CompanyPage, CompanyUpdate } from './companies.schema.js';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

const tags = ['Companies'];
const read = { scopes: ['companies:read'] };
const write = { scopes: ['companies:write'] };

/** CONTRACT C.2: batches run the single calls' service functions. */
const batchOf = (readers: RecordReaders): BatchResource => ({
  path: 'companies',
  tag: 'Companies',
  noun: 'company',
  schemas: { record: Company, create: CompanyCreate, update: CompanyUpdate },
  valueRules: service.COMPANY_VALUE_RULES,
  dataValueRules: service.COMPANY_DATA_RULES,
  create: service.createCompany,
  update: service.updateCompany,
  remove: (ctx, id) => service.deleteCompany(ctx, id, readers),
  byIds: service.companiesByIds,
  upsertKeys: {
    cnpj: { normalize: normalizeCnpj, find: (ctx, v) => service.companyIdByUnique(ctx, 'cnpj', v) },
    domain: { normalize: normalizeDomain, find: (ctx, v) => service.companyIdByUnique(ctx, 'domain', v) },
  },
});

/** Spec 4.4, and the batch operations of C.2. Deleting a company reads the records it leaves with `readers`. */
export const companiesRoutes =
  (readers: RecordReaders): FastifyPluginAsyncTypebox =>
  async (app) => {
    readRoutes(app);
    writeRoutes(app, readers);
    registerBatchRoutes(app, batchOf(readers));
    registerRestoreRoute(app, {
      path: 'companies',
      type: 'company',
      tag: 'Companies',
      noun: 'Company',
      schema: Company,
      unique: ['cnpj', 'domain'],
      read: service.getCompany,
    });
    registerDuplicatesRoute(app, DUPLICATES_OF.companies);
    registerMergeRoute(app, COMPANY_MERGE, mergeCompanies);
  };

/** The list and one company. */
function readRoutes(app: App): void {
  app.get(
    '/companies',
    {
      config: read,
      schema: {
        operationId: 'listCompanies',
        tags,
        summary: 'List companies',
        description:
          'Paginated; `search` matches name, CNPJ (with or without punctuation), website and domain; empty values sort last in both directions. Requires scope `companies:read`. ' +
          LISTING_DOC,
        querystring: CompanyListQuery,
        response: { 200: CompanyPage, ...errorResponses(400) },
      },
    },
    async (req, reply) => sendPage(reply, await service.listCompanies(ctxOf(req), req.query, req.principal.keyId)),
  );

  app.get(
    '/companies/:id',
    {
      config: read,
      schema: { operationId: 'getCompany', tags, summary: 'Get a company', params: IdParams, response: { 200: Company, ...errorResponses(404) } },
    },
    async (req, reply) => sendJsonText(reply, await service.getCompanyJson(ctxOf(req), req.params.id)),
  );
}

/** Create, update and delete one company. */
function writeRoutes(app: App, readers: RecordReaders): void {
  app.post(
    '/companies',
    {
      config: { ...write, valueRules: service.COMPANY_VALUE_RULES, dataValueRules: service.COMPANY_DATA_RULES },
      schema: {
        operationId: 'createCompany',
        tags,
        summary: 'Create a company',
        description:
          'CNPJ and domain are unique per tenant among live companies (409 `duplicate_cnpj` / `duplicate_domain`). Requires scope `companies:write`.',
        body: CompanyCreate,
        response: { 201: Company, ...errorResponses(400, 404, 409) },
      },
    },
    async (req, reply) => answer(reply, 201, service.createCompany(ctxOf(req), req.body)),
  );

  app.patch(
    '/companies/:id',
    {
      config: { ...write, valueRules: service.COMPANY_VALUE_RULES, dataValueRules: service.COMPANY_DATA_RULES },
      schema: {
        operationId: 'updateCompany',
        tags,
        summary: 'Update a company',
        description:
          'Any subset of the create fields; `null` clears an optional field; `tags` replaces the whole set; `customProperties` merges key by key. Requires scope `companies:write`.',
        params: IdParams,
        body: CompanyUpdate,
        response: { 200: Company, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => service.updateCompany(ctxOf(req), req.params.id, req.body),
  );

  app.delete(
    '/companies/:id',
    {
      config: write,
      schema: {
        operationId: 'deleteCompany',
        tags,
        summary: 'Delete a company (soft delete)',
        description:
          'Its contacts and deals stay and lose the reference (`companyId` becomes null, their `updatedAt` moves). Requires scope `companies:write`.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted; no body' }), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      await service.deleteCompany(ctxOf(req), req.params.id, readers);
      return reply.code(204).send(null);
    },
  );
}
