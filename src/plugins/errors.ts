import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientErrorOf } from '../db/errors.js';
import { QueryAbandoned } from '../db/reads.js';
import { ApiError, errorBody, errors } from '../errors.js';
import { ctxOf } from '../http/context.js';
import { validationError, validationErrorWithData } from '../http/validation.js';

function send(reply: FastifyReply, err: ApiError) {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply.code(err.statusCode).send(errorBody(err));
}

/** The one place where failures become the contract's `{ error, message, …extra }` (CONTRACT B.2). */
export const errorsPlugin = fp(
  async (app) => {
    app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply) => {
      if (err instanceof ApiError) return send(reply, err);
      if (err instanceof QueryAbandoned) {
        // The client went away and its query was stopped: nobody reads this answer, and it is no failure.
        req.log.debug('query stopped: the client closed the connection');
        return send(reply, errors.queryAbandoned());
      }
      if (err.validation) {
        const { valueRules, dataValueRules } = req.routeOptions.config;
        if (dataValueRules && err.validationContext === 'body' && req.principal) {
          return validationErrorWithData(err.validation, 'body', req.body, valueRules, dataValueRules, ctxOf(req)).then((e) => send(reply, e));
        }
        return send(reply, validationError(err.validation, err.validationContext, req.body, valueRules));
      }
      switch (err.code) {
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
          return send(reply, errors.unsupportedMediaType());
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
          return send(reply, errors.payloadTooLarge());
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        case 'FST_ERR_CTP_INVALID_JSON_BODY':
          return send(reply, errors.invalidJson());
        case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
          return send(reply, errors.contentLengthMismatch());
      }
      const refused = clientErrorOf(err);
      if (refused) return send(reply, refused);
      if (err instanceof SyntaxError && (err as FastifyError).statusCode === 400) {
        return send(reply, errors.invalidJson());
      }
      if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
        // A client error raised by Fastify itself (malformed request line, bad header…): no internals leak.
        return send(reply, errors.badRequest(err.statusCode));
      }
      req.log.error({ err }, 'unexpected failure');
      return send(reply, errors.internal(String(req.id)));
    });

    app.setNotFoundHandler((req, reply) => send(reply, errors.notFound(`No route ${req.method} ${req.url.split('?')[0]}`)));
  },
  { name: 'errors' },
);

/**
 * Errors Fastify raises while routing, before any hook runs (so the `X-Request-Id` hook has not run
 * either): an undecodable URL (FST_ERR_BAD_URL) or a path parameter past maxParamLength. Both are a
 * path no route serves, so the answer is the contract's 404, like any unknown route or odd id (B.2).
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', req.id);
  // Fastify ignores what this handler returns: the reply (a thenable) is sent, not awaited.
  if (err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void send(reply, errors.notFound('No resource at this path'));
    return;
  }
  void send(reply, errors.badRequest());
}

/** Node's client errors with an answer of their own: the reason phrase of the status line, and the error. */
const CLIENT_ERRORS: Record<string, [string, () => ApiError]> = {
  HPE_HEADER_OVERFLOW: ['Request Header Fields Too Large', errors.headerFieldsTooLarge],
  ERR_HTTP_REQUEST_TIMEOUT: ['Request Timeout', errors.requestTimeout],
};

/**
 * Node's `clientError`: the request never parsed (malformed request or header line, headers over the
 * limit, timeout), so no Fastify request exists and only the raw socket can answer. Written by hand
 * because this is the one place Fastify leaves to the application; it mirrors Node's own default
 * (no answer on a reset or when a response is already under way) with the contract's JSON body.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [reason, refusal] = CLIENT_ERRORS[err.code ?? ''] ?? ['Bad Request', () => errors.badRequest(400, 'The request could not be parsed')];
  const requestId = randomUUID();
  this.log.debug({ code: err.code, requestId }, 'client error');
  const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inProgress?.headersSent) {
    const answer = refusal();
    const status = answer.statusCode;
    const body = JSON.stringify(errorBody(answer));
    // end(), as Node's documentation does, rather than destroy(): closing at once with request bytes
    // still unread makes the kernel send a reset, and the client would lose the answer.
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
    setTimeout(() => socket.destroy(), 1_000).unref();
    return;
  }
  socket.destroy(err);
}
