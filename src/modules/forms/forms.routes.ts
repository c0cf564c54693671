import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { errorResponses, IdParams, LISTING_DOC } from '../../http/schemas.js';
import * as service from './forms.service.js';
import { Form, FormDetail, SubmissionPage, SubmissionsQuery } from './forms.schema.js';

const tags = ['Forms'];

/**
 * Base of `embedUrl`: PUBLIC_BASE_URL when set (behind a proxy or on another host name), else the
 * protocol and Host of the request itself.
 */
export function publicBaseUrl(req: FastifyRequest): string {
  return req.server.config.publicBaseUrl ?? `${req.protocol}://${req.host}`;
}

/** Spec 4.10 (read-only; forms are made in the CRM UI, here by the setup file). */
export const formsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/forms',
    {
      config: { scopes: ['forms:read'] },
      schema: { operationId: 'listForms', tags, summary: 'List forms', response: { 200: Type.Array(Form) } },
    },
    async (req) => service.listForms(ctxOf(req), publicBaseUrl(req)),
  );

  app.get(
    '/forms/:id',
    {
      config: { scopes: ['forms:read'] },
      schema: {
        operationId: 'getForm',
        tags,
        summary: 'Get a form with its full field structure',
        params: IdParams,
        response: { 200: FormDetail, ...errorResponses(404) },
      },
    },
    async (req) => service.getForm(ctxOf(req), req.params.id, publicBaseUrl(req)),
  );

  app.get(
    '/forms/:id/submissions',
    {
      config: { scopes: ['forms:submissions:read'] },
      schema: {
        operationId: 'listFormSubmissions',
        tags,
        summary: "List a form's submissions, newest first",
        description: 'Requires scope `forms:submissions:read`. Newest first, then by id; `limit` is the page size. ' + LISTING_DOC,
        params: IdParams,
        querystring: SubmissionsQuery,
        response: { 200: SubmissionPage, ...errorResponses(400, 404) },
      },
    },
    async (req) => service.listSubmissions(ctxOf(req), req.params.id, req.query, req.principal.keyId),
  );
};
