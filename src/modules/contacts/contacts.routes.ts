import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { afterCommit } from '../../db/index.js';
import { ctxOf } from '../../http/context.js';
import { answer, sendJsonText } from '../../http/replies.js';
import { sendPage } from '../../listing/page.js';
import { errorResponses, IdParams, LISTING_DOC } from '../../http/schemas.js';
import { normalizeEmail } from '../../domain/email.js';
import { normalizePhone } from '../../domain/phone.js';
import { registerBatchRoutes, type BatchResource } from '../shared/batch.js';
import { DUPLICATES_OF, registerDuplicatesRoute } from '../shared/duplicates.js';
import { registerRestoreRoute } from '../shared/restore.js';
import * as service from './contacts.service.js';
import { eraseContact } from './contacts.erase.js';
import { CONTACT_MERGE, mergeContacts } from './contacts.merge.js';
import { registerMergeRoute } from '../shared/merge.js';
import { Contact, ContactCreate, ContactListQuery, ContactPage, ContactSearchBody, ContactUpdate } from './contacts.schema.js';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

const tags = ['Contacts'];
const read = { scopes: ['contacts:read'] };
const write = { scopes: ['contacts:write'] };

/** CONTRACT C.2: batches run the single calls' service functions. */
const batch: BatchResource = {
  path: 'contacts',
  tag: 'Contacts',
  noun: 'contact',
  schemas: { record: Contact, create: ContactCreate, update: ContactUpdate },
  valueRules: service.CONTACT_VALUE_RULES,
  dataValueRules: service.CONTACT_DATA_RULES,
  create: service.createContact,
  update: service.updateContact,
  remove: service.deleteContact,
  byIds: service.contactsByIds,
  upsertKeys: {
    email: { normalize: normalizeEmail, find: (ctx, v) => service.contactIdByUnique(ctx, 'email', v) },
    phone: { normalize: (v) => normalizePhone(v), find: (ctx, v) => service.contactIdByUnique(ctx, 'phone', v) },
  },
};

/** Spec 4.1 (GET /contacts/:id/deals lives in the deals module), and the batch operations of C.2. */
export const contactsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  readRoutes(app);
  writeRoutes(app);
  registerBatchRoutes(app, batch);
  registerRestoreRoute(app, {
    path: 'contacts',
    type: 'contact',
    tag: 'Contacts',
    noun: 'Contact',
    schema: Contact,
    unique: ['email', 'phone'],
    references: [{ column: 'company_id', target: 'companies' }],
    read: service.getContact,
  });
  registerDuplicatesRoute(app, DUPLICATES_OF.contacts);
  registerMergeRoute(app, CONTACT_MERGE, mergeContacts);
  eraseRoute(app);
};

/** CONTRACT D.5: erasure on request of the person. */
function eraseRoute(app: App): void {
  app.post(
    '/contacts/:id/erase',
    {
      config: { scopes: ['contacts:erase'] },
      schema: {
        operationId: 'eraseContact',
        tags,
        summary: 'Erase a contact for good (the person’s right to erasure)',
        description:
          'Requires scope `contacts:erase` (`*` covers it; `contacts:write` does not). Erases a live or deleted contact for good, for a request under the LGPD (art. 18) or the GDPR (art. 17): 204, and afterwards its id is 404 everywhere, `includeDeleted` and restore included. ' +
          'Gone with it: its fields and custom property values; its values inside every stored event (`GET /events`, and the webhook deliveries of those events, pending ones included: they are sent without them) and what receivers answered to them; ' +
          'its form submissions’ `values` and `metadata` (`null`; the submission stays, with `contactId` `null`); the address and agent of the audit entries its form submissions made; stored idempotent answers that held it (a replay answers 404). ' +
          'Deals, proposals, activities and lists that named it stay, without it. What remains is one `contact.erased` event (`data: { id }`) and audit entries of ids and field names. Cannot be undone.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Erased; no body' }), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      const ctx = ctxOf(req);
      await eraseContact(ctx, req.params.id);
      // The files too: SQLite's write-ahead log still holds the pages as they were (Database.forgetErasedBytes), once
      // the erasure has committed. An idempotent request's transaction commits after this handler: then right after.
      const forget = () => req.server.database.forgetErasedBytes();
      if (ctx.db.isTransaction)
        afterCommit(ctx.db, 'forget-erased-bytes', () => void forget().catch((err: unknown) => req.log.warn({ err }, 'WAL not truncated after an erasure')));
      else await forget();
      return reply.code(204).send(null);
    },
  );
}

/** The list, the search and one contact. */
function readRoutes(app: App): void {
  app.get(
    '/contacts',
    {
      config: read,
      schema: {
        operationId: 'listContacts',
        tags,
        summary: 'List contacts',
        description:
          'Requires scope `contacts:read`. Paginated (default 50, max 100). `search` matches first name, last name, full name, e-mail and phone digits (a substring ignoring case and accents in every script: `joao` finds "João"); `updatedAfter` is strict; ties in the sort break by `id`; empty values sort last in both directions. ' +
          LISTING_DOC,
        querystring: ContactListQuery,
        response: { 200: ContactPage, ...errorResponses(400) },
      },
    },
    async (req, reply) => sendPage(reply, await service.listContacts(ctxOf(req), req.query, req.principal.keyId)),
  );

  app.post(
    '/contacts/search',
    {
      config: read,
      schema: {
        operationId: 'searchContacts',
        tags,
        summary: 'Search contacts with filters',
        description:
          'Requires scope `contacts:read`. Filters combine conditions with AND/OR groups (see the `filters` schema); answers the same paginated envelope as the list; `cursor` goes in the body and is bound to the same `filters` and sort (else 400 `invalid_cursor`). Invalid filters are 400 `validation_failed` with `details[].field` naming the path (e.g. `filters.conditions[1].value`). Limits: groups nest at most 3 deep; at most 50 conditions, 1,000 values in an `in`/`notIn` and 10,000 values in a filter; and a complexity budget of 100, where a condition on `tags` or on a `customProperties.<id>` costs 12 and any other condition 1 (so at most 8 of those; over budget is 400 `validation_failed` on `filters`).',
        body: ContactSearchBody,
        response: { 200: ContactPage, ...errorResponses(400) },
      },
    },
    async (req, reply) => sendPage(reply, await service.searchContacts(ctxOf(req), req.body, req.principal.keyId)),
  );

  app.get(
    '/contacts/:id',
    {
      config: read,
      schema: { operationId: 'getContact', tags, summary: 'Get a contact', params: IdParams, response: { 200: Contact, ...errorResponses(404) } },
    },
    async (req, reply) => sendJsonText(reply, await service.getContactJson(ctxOf(req), req.params.id)),
  );
}

/** Create, update and delete one contact. */
function writeRoutes(app: App): void {
  app.post(
    '/contacts',
    {
      config: { ...write, valueRules: service.CONTACT_VALUE_RULES, dataValueRules: service.CONTACT_DATA_RULES },
      schema: {
        operationId: 'createContact',
        tags,
        summary: 'Create a contact',
        body: ContactCreate,
        response: { 201: Contact, ...errorResponses(400, 404, 409) },
      },
    },
    async (req, reply) => answer(reply, 201, service.createContact(ctxOf(req), req.body)),
  );

  app.patch(
    '/contacts/:id',
    {
      config: { ...write, valueRules: service.CONTACT_VALUE_RULES, dataValueRules: service.CONTACT_DATA_RULES },
      schema: {
        operationId: 'updateContact',
        tags,
        summary: 'Update a contact',
        params: IdParams,
        body: ContactUpdate,
        response: { 200: Contact, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => service.updateContact(ctxOf(req), req.params.id, req.body),
  );

  app.delete(
    '/contacts/:id',
    {
      config: write,
      schema: {
        operationId: 'deleteContact',
        tags,
        summary: 'Delete a contact (soft delete)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted; no body' }), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      await service.deleteContact(ctxOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}
