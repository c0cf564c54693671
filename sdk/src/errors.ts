import type { components } from './schema.js';

/** The contract's error body (CONTRACT B.2): `{ error, message, …extra }`. */
export type ErrorBody = components['schemas']['Error'];
/** One entry of a `validation_failed` body: the path of the bad value and why. */
export type ErrorDetail = NonNullable<ErrorBody['details']>[number];

/**
 * A non-2xx answer of the API, thrown by every call of the client (after the retries it allows).
 * `code` is the body's `error` (`validation_failed`, `not_found`, `duplicate_email`, …); `body` holds
 * the whole body with its extras (`existingContactId`, `required`, `retryAfterSeconds`, …).
 */
export class CrmApiError extends Error {
  override readonly name = 'CrmApiError';
  /** HTTP status. */
  readonly status: number;
  /** The body's `error` code. */
  readonly code: string;
  /** `details` of a `validation_failed` body (`[{ field, message, suggestion? }]`), else empty. */
  readonly details: ErrorDetail[];
  /** The whole error body; for an answer that is not the contract's JSON (a proxy's page) `{ error: 'http_<status>', message: <text> }`. */
  readonly body: ErrorBody;
  /**
   * Where the reference explains this error: the body's `docUrl`, a path of the server (`/docs#description/not_found`),
   * made absolute against the URL of the request; undefined for an answer that is not the contract's JSON.
   */
  readonly docUrl: string | undefined;
  /** The answer's `X-Request-Id` (the id to quote to support); also in the body of a 500. */
  readonly requestId: string | undefined;
  /** The answer's `Retry-After`, in seconds, when it sent one as a number of seconds. */
  readonly retryAfterSeconds: number | undefined;
  /** Method and URL of the request that failed. */
  readonly method: string;
  readonly url: string;

  constructor(init: { status: number; body: ErrorBody; requestId?: string; retryAfterSeconds?: number; method: string; url: string }) {
    super(init.body.message);
    this.status = init.status;
    this.code = init.body.error;
    this.details = init.body.details ?? [];
    this.body = init.body;
    this.docUrl = absoluteUrl(init.body.docUrl, init.url);
    this.requestId = init.requestId ?? init.body.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.method = init.method;
    this.url = init.url;
  }

  /** Reads the error from an answer (its body is consumed). */
  static async fromResponse(request: Request, response: Response): Promise<CrmApiError> {
    const text = await response.text().catch(() => '');
    let body: ErrorBody;
    try {
      const parsed = JSON.parse(text) as Partial<ErrorBody>;
      if (typeof parsed?.error !== 'string') throw new Error('not an error body');
      body = { ...parsed, error: parsed.error, message: typeof parsed.message === 'string' ? parsed.message : parsed.error };
    } catch {
      body = { error: `http_${response.status}`, message: text.slice(0, 500) || response.statusText || `HTTP ${response.status}` };
    }
    return new CrmApiError({
      status: response.status,
      body,
      requestId: response.headers.get('x-request-id') ?? undefined,
      retryAfterSeconds: retryAfterSeconds(response.headers.get('retry-after')),
      method: request.method,
      url: request.url,
    });
  }
}

/** `path` resolved against `base`, or undefined when either is missing or unreadable. */
function absoluteUrl(path: unknown, base: string): string | undefined {
  if (typeof path !== 'string') return undefined;
  try {
    return new URL(path, base).href;
  } catch {
    return undefined;
  }
}

/** `Retry-After` as seconds (RFC 9110: delay-seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
