/**
 * The bottom of the service: every layer (domain, db, events, modules, plugins) may import this file, and it
 * imports nothing of the service.
 */

/**
 * Raised by every domain normalizer/validator when input is rejected.
 * The message is short and human ("must be a valid e-mail address"); the caller
 * knows the field path and maps it to 400 `validation_failed` (fieldRule, FieldChecks).
 * Defined here, not in domain/, so that this file needs nothing above it; domain/errors.ts re-exports it.
 */
export class DomainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * The one error type of the service. Every failure the client may see is an ApiError, made by one of the
 * named constructors of `errors` below (the catalogue), never by hand elsewhere.
 */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The contract's JSON body of an error (B.2): `{ error, message, …extra }`, with `docUrl` among the extras. */
export function errorBody(err: ApiError): Record<string, unknown> {
  return { error: err.code, message: err.message, ...err.extra, docUrl: errorDocUrl(err.code) };
}

/**
 * Where an error code is explained: the Errors section of the reference page (`/docs`) gives every code of
 * ERROR_CODES a heading of its own (`### <code>`, src/plugins/openapi.ts), which Scalar anchors as
 * `#description/<code>`. The URL is relative on purpose: the service does not know the public base URL it is
 * reached at (a proxy, a tunnel, localhost), and a path resolves against whichever host answered.
 */
export function errorDocUrl(code: string): string {
  return `/docs#description/${code}`;
}

/**
 * Every error code the service answers, with its HTTP status: the codes of the catalogue below (authentication,
 * rate limits, the parsers' and Node's own client errors among them) and the conflicts passed to
 * `errors.conflict`. The reference page's Errors section must have a heading for each (errorDocUrl), and the
 * tests check that each one's body carries `docUrl`.
 */
export const ERROR_CODES: Readonly<Record<string, number>> = {
  validation_failed: 400,
  invalid_json: 400,
  invalid_format: 400,
  invalid_cursor: 400,
  invalid_status: 400,
  invalid_url: 400,
  invalid_event: 400,
  invalid_request: 400,
  bad_request: 400,
  duplicate_proposal_for_deal: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  insufficient_scope: 403,
  forbidden: 403,
  not_found: 404,
  request_timeout: 408,
  duplicate_email: 409,
  duplicate_phone: 409,
  duplicate_cnpj: 409,
  duplicate_domain: 409,
  duplicate_name: 409,
  not_deleted: 409,
  stage_invalid: 409,
  list_kind_mismatch: 409,
  delivery_in_progress: 409,
  webhook_inactive: 409,
  concurrent_update: 409,
  idempotency_key_in_use: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  business_rule_violation: 422,
  idempotency_key_reused: 422,
  rate_limit_exceeded: 429,
  too_many_concurrent_queries: 429,
  too_many_waiting_requests: 429,
  request_header_fields_too_large: 431,
  internal_error: 500,
  query_timeout: 503,
  database_unavailable: 503,
  query_abandoned: 503,
};

export interface FieldIssue {
  field: string;
  message: string;
  /** For an unknown field or value: the known one closest to it (`first_name` → `firstName`). */
  suggestion?: string;
}

// The catalogue of the contract (spec section 7, CONTRACT B.2): the one place an ApiError is made. Status codes
// never come from message text.
export const errors = {
  validation: (details: FieldIssue[], message?: string) => new ApiError(400, 'validation_failed', message ?? summarize(details), { details }),
  field: (field: string, message: string) => errors.validation([{ field, message }]),
  invalidFormat: (field: string, message: string) => new ApiError(400, 'invalid_format', `${field}: ${message}`, { details: [{ field, message }] }),
  /** Several `invalid_format` issues at once (FieldChecks, when only dates were refused). */
  invalidFormats: (details: FieldIssue[]) => new ApiError(400, 'invalid_format', summarize(details), { details }),
  /**
   * The same error with its `details` renamed (an atomic batch's `inputs[i].` prefix, a form's field names):
   * status, code, message, other extras and headers unchanged.
   */
  withDetails: (err: ApiError, details: FieldIssue[]) => new ApiError(err.statusCode, err.code, err.message, { ...err.extra, details }, err.headers),
  /** B.2: a malformed JSON body (or an empty one where a body is required). */
  invalidJson: () => new ApiError(400, 'invalid_json', 'The body is not valid JSON'),
  contentLengthMismatch: () => new ApiError(400, 'invalid_request', 'Content-Length does not match the body'),
  /** A client error raised by Fastify or Node itself (malformed request line, bad header…): no internals leak. */
  badRequest: (status = 400, message = 'The request could not be processed') => new ApiError(status, 'bad_request', message),
  /** B.2: a body sent with a Content-Type the route does not take. */
  unsupportedMediaType: (message = 'Send the body as application/json') => new ApiError(415, 'unsupported_media_type', message),
  payloadTooLarge: () => new ApiError(413, 'payload_too_large', 'The body is larger than 1 MiB'),
  /** Node's own client errors, answered on the raw socket (plugins/errors.ts clientErrorHandler). */
  requestTimeout: () => new ApiError(408, 'request_timeout', 'The request was not received in time'),
  headerFieldsTooLarge: () => new ApiError(431, 'request_header_fields_too_large', 'The request line or headers are too large'),
  /** B.2: no stack, no SQL; the request id lets an operator find the log line. */
  internal: (requestId: string) => new ApiError(500, 'internal_error', 'An unexpected error occurred', { requestId }),
  /** B.1: authentication. Messages never echo the key. */
  missingApiKey: () => new ApiError(401, 'missing_api_key', 'The X-API-Key header is required'),
  invalidApiKey: () => new ApiError(401, 'invalid_api_key', 'The API key is invalid, revoked or expired'),
  /** Spec 5.3: the missing scope named, with `required` and `have`. */
  insufficientScope: (required: readonly string[], have: readonly string[], missing: readonly string[]) =>
    new ApiError(403, 'insufficient_scope', `This call requires the scope ${missing.join(', ')}`, { required, have }),
  /** B.3: every 429 of a rate limit carries `limit`, `retryAfterSeconds` and `Retry-After`. */
  rateLimited: (message: string, limit: number, retryAfterSeconds: number) =>
    new ApiError(429, 'rate_limit_exceeded', message, { limit, retryAfterSeconds }, { 'retry-after': String(retryAfterSeconds) }),
  /** Webhooks (spec 4.12): a present but non-HTTPS or malformed `url`. */
  invalidUrl: (message: string) => new ApiError(400, 'invalid_url', `url ${message}`, { field: 'url' }),
  /** Webhooks (spec 4.12): an item of `events` that is not in the catalog. */
  invalidEvent: (index: number, key: string) =>
    new ApiError(400, 'invalid_event', `events[${index}]: "${key}" is not an event type (see GET /webhooks/event-types)`, {
      field: `events[${index}]`,
    }),
  invalidStatus: (message: string) => new ApiError(400, 'invalid_status', message),
  notFound: (what: string) => new ApiError(404, 'not_found', what),
  /** D.2: a record a merge folded into another: 404 naming the one it lives on in. */
  mergedAway: (what: string, mergedIntoId: string) => new ApiError(404, 'not_found', `${what} (merged into ${mergedIntoId})`, { mergedIntoId }),
  /** Static lists: members to add that are not in the tenant (all of them named in `ids`; nothing is added). */
  missingMembers: (type: string, missing: string[]) => {
    const shown =
      missing
        .slice(0, 5)
        .map((m) => `"${m}"`)
        .join(', ') + (missing.length > 5 ? ` and ${missing.length - 5} more` : '');
    return new ApiError(404, 'not_found', `objectIds: no ${type} ${shown} in this tenant; nothing was added`, { field: 'objectIds', ids: missing });
  },
  refNotFound: (field: string, id?: string) =>
    new ApiError(404, 'not_found', id === undefined ? `${field} does not exist` : `${field} "${id}" does not exist`, {
      field,
    }),
  conflict: (code: string, message: string, extra: Record<string, unknown> = {}) => new ApiError(409, code, message, extra),
  /** D.1: restoring a record that is not deleted. */
  notDeleted: (noun: string) => new ApiError(409, 'not_deleted', `This ${noun} is not deleted; only a deleted ${noun} can be restored`),
  /** NOTE: B.8 — the spec answers 400 (not 409) for a second live proposal of one deal. */
  duplicateProposalForDeal: (existingProposalId?: string) =>
    new ApiError(400, 'duplicate_proposal_for_deal', 'This deal already has a proposal (at most one per deal)', {
      field: 'dealId',
      ...(existingProposalId ? { existingProposalId } : {}),
    }),
  concurrentUpdate: (message = 'Another request changed the same records at the same time; retry') =>
    new ApiError(409, 'concurrent_update', message, {}, { 'retry-after': '1' }),
  businessRule: (message: string) => new ApiError(422, 'business_rule_violation', message),
  idempotencyKeyReused: () =>
    new ApiError(422, 'idempotency_key_reused', 'This Idempotency-Key was already used with a different method, path or body; use a new key for a new request'),
  idempotencyKeyInUse: () =>
    new ApiError(409, 'idempotency_key_in_use', 'A request with this Idempotency-Key is still running; retry after it finishes', {}, { 'retry-after': '1' }),
  invalidCursor: (message: string) => new ApiError(400, 'invalid_cursor', message),
  queryTimeout: (ms: number) =>
    new ApiError(
      503,
      'query_timeout',
      `The query did not finish within ${ms} ms and was stopped; narrow the filter or the page and try again`,
      {},
      { 'retry-after': '1' },
    ),
  /** The per-tenant share of request bodies (plugins/body-share.ts) had no room within its deadline. */
  noRoomForBodies: (ms: number) =>
    new ApiError(
      503,
      'query_timeout',
      `This tenant's earlier large requests left no room within ${ms} ms; send fewer at once and try again`,
      {},
      { 'retry-after': '1' },
    ),
  tooManyQueries: (limit: number) =>
    new ApiError(
      429,
      'too_many_concurrent_queries',
      `This tenant already has ${limit} queries waiting; wait for them to finish and try again`,
      { limit, retryAfterSeconds: 1 },
      { 'retry-after': '1' },
    ),
  /** C.4: long-polls of `GET /events?wait=` are bounded per API key and per server process. */
  tooManyWaiting: (scope: 'key' | 'server', limit: number) =>
    new ApiError(
      429,
      'too_many_waiting_requests',
      scope === 'key'
        ? `This API key already has ${limit} event-log requests waiting (wait=); let one return before starting another`
        : `This server already holds ${limit} waiting event-log requests; retry shortly or poll without wait`,
      { limit, retryAfterSeconds: 1 },
      { 'retry-after': '1' },
    ),
  /**
   * B.2: the database (or a lock, a replica it needs) is down or did not answer within the request's
   * deadline: never a hang, never a 500.
   */
  databaseUnavailable: (message = 'The database did not answer in time; retry shortly') =>
    new ApiError(503, 'database_unavailable', message, {}, { 'retry-after': '1' }),
  /** Nobody reads this answer: the client closed its connection and its query was stopped. */
  queryAbandoned: () => new ApiError(503, 'query_abandoned', 'The client closed the connection; the query was stopped'),
  forbidden: (message = 'This endpoint is not available to API keys') => new ApiError(403, 'forbidden', message),
} as const;

function summarize(details: FieldIssue[]): string {
  if (details.length === 0) return 'The request is invalid';
  const first = details[0];
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return `${first.field ? first.field + ': ' : ''}${first.message}${more}`;
}

/**
 * C.5: every invalid field of a body is reported, not only the first. A write runs the rule of each field
 * through `check`, which records a refusal (a DomainError, or a 400 naming fields) and goes on; `assert()`
 * then throws one 400 naming them all, before the write reads or changes anything else. A value returned
 * by a refused `check` is `undefined` and must not be used before `assert()`.
 */
export class FieldChecks {
  private readonly issues: FieldIssue[] = [];
  /** The spec's `invalid_format` (dates of activities) stays the code when it is the only kind refused. */
  private onlyFormat = true;

  check<T>(field: string, rule: () => T): T {
    try {
      return rule();
    } catch (err) {
      this.record(field, err);
      return undefined as T;
    }
  }

  async checkAsync<T>(field: string, rule: () => Promise<T>): Promise<T> {
    try {
      return await rule();
    } catch (err) {
      this.record(field, err);
      return undefined as T;
    }
  }

  /** A refusal found outside a rule (a combination of fields). */
  add(field: string, message: string): void {
    this.issues.push({ field, message });
    this.onlyFormat = false;
  }

  /** The refusals recorded so far. */
  list(): FieldIssue[] {
    return [...this.issues];
  }

  assert(): void {
    if (this.issues.length === 0) return;
    const details = [...this.issues];
    throw this.onlyFormat ? errors.invalidFormats(details) : errors.validation(details);
  }

  private record(field: string, err: unknown): void {
    if (err instanceof DomainError) return this.add(field, err.message);
    if (err instanceof ApiError && (err.code === 'validation_failed' || err.code === 'invalid_format') && Array.isArray(err.extra.details)) {
      this.issues.push(...(err.extra.details as FieldIssue[]));
      if (err.code !== 'invalid_format') this.onlyFormat = false;
      return;
    }
    throw err;
  }
}

/** Runs a domain rule for one field: its DomainError becomes the 400 `validation_failed` naming the field. */
export function fieldRule<T>(field: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof DomainError) throw errors.field(field, err.message);
    throw err;
  }
}
