import { randomUUID } from 'node:crypto';
import { retryAfterSeconds } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 2); 0 turns retrying off. */
  retries?: number;
  /**
   * Longest `Retry-After` waited for, in seconds (default 60, the rate limit's window). An answer asking
   * for longer is not retried: it is thrown at once, with `retryAfterSeconds`, for the caller to schedule.
   */
  maxRetryAfterSeconds?: number;
  /** Backoff when the answer gives no `Retry-After`: `baseDelayMs`·2ⁿ, capped at `maxDelayMs`, with full jitter (defaults 500 and 10,000). */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export type FetchLike = (request: Request, init?: RequestInit) => Promise<Response>;

/** Methods whose repeat changes nothing more than the first call (a POST joins them through its Idempotency-Key). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** The service honours Idempotency-Key on the POSTs of the API (C.3), not on the public form intake (`/f/…`). */
const KEYED_PATH = /\/api\/v1\//;

/**
 * The client's transport: every POST under `/api/v1/` gets an `Idempotency-Key` (unless the caller gave
 * one), kept on each retry of that call, so the service applies it once (CONTRACT C.3). Answers that ask
 * to come back later are retried: 429 and 503 (after `Retry-After` seconds, or a jittered exponential
 * backoff when absent) and a POST's 409 `idempotency_key_in_use` (the first attempt is still running).
 * A network failure is retried for GET, HEAD, OPTIONS, PUT, DELETE and a POST with its key, never for
 * PATCH or a POST the service cannot deduplicate, whose repeat is not guaranteed to be harmless.
 */
export function retryingFetch(baseFetch: FetchLike, options: RetryOptions = {}): FetchLike {
  const retries = options.retries ?? 2;
  const maxRetryAfterMs = (options.maxRetryAfterSeconds ?? 60) * 1000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  const backoff = (attempt: number) => Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);

  return async (request, init) => {
    const keyed = request.method === 'POST' && KEYED_PATH.test(new URL(request.url).pathname);
    if (keyed && !request.headers.has('idempotency-key')) request.headers.set('Idempotency-Key', randomUUID());
    const repeatable = IDEMPOTENT.has(request.method) || keyed;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      let response: Response;
      try {
        // Each attempt sends a copy: the original's body stays unread for the next one.
        response = await baseFetch(last ? request : request.clone(), init);
      } catch (err) {
        if (last || request.signal.aborted || !repeatable) throw err;
        await sleep(backoff(attempt), request.signal);
        continue;
      }
      if (last || !(await asksToRetry(request, response))) return response;
      const after = retryAfterSeconds(response.headers.get('retry-after'));
      const delay = after === undefined ? backoff(attempt) : after * 1000;
      if (delay > maxRetryAfterMs) return response;
      // Frees the connection; not awaited: the cancel of a cloned (teed) body settles only with its twin's.
      void response.body?.cancel().catch(() => {});
      await sleep(delay, request.signal);
    }
  };
}

async function asksToRetry(request: Request, response: Response): Promise<boolean> {
  if (response.status === 429 || response.status === 503) return true;
  if (response.status !== 409 || request.method !== 'POST') return false;
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { error?: unknown } | null;
  return body?.error === 'idempotency_key_in_use';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
