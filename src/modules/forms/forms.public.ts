import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError, errors, type FieldIssue } from '../../errors.js';
import { contextFor, requestActor, requestSignal, type Ctx } from '../../http/context.js';
import { holdValueIssues } from '../../http/body-checks.js';
import { errorResponses } from '../../http/schemas.js';
import { pageHeaders, renderFormPage, renderMessage, renderThankYou } from './forms.html.js';
import { textsFor } from './forms.texts.js';
import { IntakeBody, IntakeResult, PublicFormParams } from './forms.schema.js';
import * as service from './forms.service.js';

const tags = ['Public form intake'];
// CONTRACT A.4: 20 submissions a minute per client IP and form.
const SUBMISSION_LIMIT = 20;
const WINDOW_MS = 60_000;
const HEADER_MAX = 2048;

const Html = Type.String({ description: 'HTML page' });
const htmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: Html } } });

function isBrowserPost(req: FastifyRequest): boolean {
  return String(req.headers['content-type'] ?? '')
    .toLowerCase()
    .startsWith('application/x-www-form-urlencoded');
}

function header(req: FastifyRequest, name: string): string | null {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s ? s.slice(0, HEADER_MAX) : null;
}

function sendHtml(reply: FastifyReply, status: number, render: (nonce: string) => string) {
  const nonce = randomBytes(16).toString('base64');
  return reply.code(status).headers(pageHeaders(nonce)).send(render(nonce));
}

/**
 * Public form intake (CONTRACT A.4), outside /api/v1 and without a key: `GET /f/<tenantSlug>/<formSlug>`
 * serves the HTML form, `POST` there takes urlencoded (browsers) or JSON. The urlencoded parser is
 * registered in this plugin's scope only, so /api/v1 keeps answering 415 to anything but JSON.
 */
export const formsPublicRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(formbody);
  // The edge's value rules (no NUL, well-formed strings) for urlencoded bodies too: the validator reports them
  // as it does a JSON body's (a NUL reached PostgreSQL's insert, a 500, before).
  app.addHook('preValidation', (req, _reply, done) => {
    if (req.body !== null && typeof req.body === 'object' && req.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
      holdValueIssues(req.body);
    done();
  });
  /** The form of a request, for the error page that refills it. */
  const formOf: FormOf = new WeakMap();
  app.setErrorHandler(errorPages(formOf));
  formPageRoute(app);
  submitRoute(app, formOf);
};

type App = Parameters<FastifyPluginAsyncTypebox>[0];
type FormOf = WeakMap<FastifyRequest, service.PublicForm>;

/** A submission acts as its form (the audit log's actor `public_form`, D.4). */
const ctxFor = (req: FastifyRequest, form: service.PublicForm): Ctx =>
  contextFor(req.server.database, req.server.config, form.tenantId, null, requestSignal(req), requestActor(req, 'public_form', form.id, form.name));

/** Browsers get pages; JSON clients get the contract's JSON errors from the app's handler. */
function errorPages(formOf: FormOf) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const wantsHtml = req.method === 'GET' || req.method === 'HEAD' || isBrowserPost(req);
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      err = errors.unsupportedMediaType('Send the form as application/x-www-form-urlencoded or application/json') as unknown as FastifyError;
    }
    if (!wantsHtml) throw err;
    const form = formOf.get(req);
    // The tenant's language once its form is known; an unknown address has no tenant, so English.
    const locale = form?.locale;
    const { t } = textsFor(locale);
    const message = (status: number, title: string, text: string) => sendHtml(reply, status, (nonce) => renderMessage(title, text, { nonce, locale }));
    if (err instanceof ApiError) {
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
      if (err.statusCode === 404) return message(404, t.notFoundTitle, t.notFoundBody);
      if (err.statusCode === 400 && form && Array.isArray(err.extra.details)) {
        const entered = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
        return sendHtml(reply, 400, (nonce) =>
          renderFormPage({ formName: form.name, fields: form.fields, entered, issues: err.extra.details as FieldIssue[], nonce, locale }),
        );
      }
      if (err.statusCode === 429) return message(429, t.tooManyTitle, t.tooManyBody);
      if (err.statusCode < 500) return message(err.statusCode, t.notSentTitle, err.message);
    } else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return message(413, t.notSentTitle, t.tooLarge);
    } else if (!(typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500)) {
      req.log.error({ err }, 'unexpected failure');
      return message(500, t.failedTitle, `${t.failedBody} ${String(req.id)}).`);
    }
    return message(400, t.notSentTitle, t.notProcessed);
  };
}

/** The public HTML form. */
function formPageRoute(app: App): void {
  app.get(
    '/f/:tenantSlug/:slug',
    {
      schema: {
        operationId: 'getPublicForm',
        tags,
        summary: 'The public HTML form',
        description: 'A self-contained, accessible HTML page that posts back to the same URL. No API key. Unknown tenant or form: 404 HTML page.',
        security: [],
        params: PublicFormParams,
        response: { 200: htmlResponse('The form page'), 404: htmlResponse('No such form') },
      },
    },
    async (req, reply) => {
      const form = await service.findPublicForm(req.server.database.db, req.params.tenantSlug, req.params.slug);
      return sendHtml(reply, 200, (nonce) => renderFormPage({ formName: form.name, fields: form.fields, nonce, locale: form.locale }));
    },
  );
}

/** A submission: JSON answers 201, a browser's post a thank-you page. */
function submitRoute(app: App, formOf: FormOf): void {
  app.post(
    '/f/:tenantSlug/:slug',
    {
      schema: {
        operationId: 'submitPublicForm',
        tags,
        summary: 'Submit a form',
        description:
          "No API key. Validates the values against the form's fields, records the submission (with the client IP, User-Agent and Referer), " +
          'creates or updates the contact matched by e-mail, else phone (firing `contact.created` / `contact.updated`), applies the field mappings and ' +
          'increments `submissionsCount`, all in one transaction. A JSON post answers 201; a urlencoded post (a browser) answers 200 with a thank-you page, ' +
          'and validation errors as the form again with the errors (400). At most 20 submissions a minute per client IP and form (429 with `Retry-After`).',
        security: [],
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        params: PublicFormParams,
        body: IntakeBody,
        response: {
          201: IntakeResult,
          200: htmlResponse('Thank-you page (urlencoded post)'),
          ...errorResponses(400, 404, 413, 415, 429),
        },
      },
    },
    async (req, reply) => {
      const form = await service.findPublicForm(req.server.database.db, req.params.tenantSlug, req.params.slug);
      formOf.set(req, form);
      await limitSubmissions(req, form);
      const browser = isBrowserPost(req);
      const metadata = { ipAddress: req.ip ?? null, userAgent: header(req, 'user-agent'), referrer: header(req, 'referer') ?? header(req, 'referrer') };
      const result = await service.submitForm(ctxFor(req, form), form, req.body, browser ? 'form' : 'json', metadata, req.log);
      if (browser) return sendHtml(reply, 200, (nonce) => renderThankYou(form.name, { nonce, locale: form.locale }));
      return reply.code(201).send(result);
    },
  );
}

/** CONTRACT A.4's limit per client IP and form, counted by the app's store (one Redis connection and breaker a process). */
async function limitSubmissions(req: FastifyRequest, form: service.PublicForm): Promise<void> {
  const hit = await req.server.rateLimitStore.hit(`form:${form.tenantId}:${form.id}:${req.ip}`, WINDOW_MS);
  if (hit.count > SUBMISSION_LIMIT) {
    const retry = Math.max(1, Math.ceil((hit.resetAtMs - Date.now()) / 1000));
    throw errors.rateLimited(`At most ${SUBMISSION_LIMIT} submissions a minute per client and form; retry in ${retry} s`, SUBMISSION_LIMIT, retry);
  }
}
