import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { serviceSignature, standardSignature } from '../../util/crypto.js';
import { extended } from '../../util/objects.js';

/** At most this much of a destination's answer is kept (CONTRACT B.9); the rest is never read. */
export const SNIPPET_BYTES = 1024;
export const USER_AGENT = 'Service-Webhook/1.0';

export interface AttemptRequest {
  url: string;
  /** The full `whsec_…` secret, decrypted for this attempt only. */
  secret: string;
  customHeaders: Record<string, string>;
  eventId: string;
  event: string;
  /** The exact bytes sent and signed. */
  body: Buffer;
  timeoutMs: number;
  dispatcher: Dispatcher;
  /** Aborts the attempt from outside (worker shutdown); the result then has `interrupted`. */
  signal?: AbortSignal;
}

export interface AttemptResult {
  success: boolean;
  statusCode: number | null;
  responseSnippet: string | null;
  durationMs: number;
  error?: string;
  /** The attempt was cut off by shutdown, not by the destination: it does not count. */
  interrupted?: boolean;
  /** A 429 or 503 answer's `Retry-After`, in ms from the end of the attempt (C.4); the next attempt waits at least this. */
  retryAfterMs?: number;
  /** X-Service-Delivery of this attempt. */
  attemptId: string;
  endedAt: Date;
}

/** Cuts a byte buffer to at most `max` bytes without splitting a UTF-8 sequence. */
export function utf8Snippet(buf: Buffer, max = SNIPPET_BYTES): string {
  let end = Math.min(buf.length, max);
  if (end < buf.length) {
    // Step back over continuation bytes to the start of the sequence that straddles the cut.
    let i = end;
    while (i > 0 && (buf[i] & 0xc0) === 0x80) i--;
    end = i;
  }
  return buf.subarray(0, end).toString('utf8');
}

/** Longest wait a destination's Retry-After can impose (a week: past it, retention removes the delivery anyway). */
export const MAX_RETRY_AFTER_MS = 7 * 24 * 3_600_000;

/**
 * `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP date, as ms from `now`, capped at
 * MAX_RETRY_AFTER_MS; undefined when absent or unreadable (the configured delay applies alone).
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at) || !/[a-z]/i.test(v)) return undefined; // an HTTP date names its weekday and month
    ms = at - now;
  }
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

/** A short, secret-free description of a failed connection. */
export function describeError(err: unknown, timeoutMs: number, timedOut: boolean): string {
  if (timedOut) return `timeout: no answer within ${timeoutMs} ms`;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = e?.cause && (e.code === undefined || e.code === 'UND_ERR_SOCKET') ? e.cause : e;
  const code = inner?.code ?? e?.code;
  const msg = (inner?.message ?? e?.message ?? String(err)).replace(/\s+/g, ' ').slice(0, 300);
  switch (code) {
    case 'ERR_WEBHOOK_BLOCKED_ADDRESS':
      return msg;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return `connection closed by the destination (${code})`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `DNS lookup failed (${code})`;
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `timeout: no answer within ${timeoutMs} ms`;
  }
  if (code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO|HOSTNAME|ALTNAME/.test(code)) return `TLS error (${code}): ${msg}`;
  return code ? `${code}: ${msg}` : msg;
}

/** The headers of one attempt (spec 6.2 + Standard Webhooks, CONTRACT B.9). */
export function deliveryHeaders(req: Pick<AttemptRequest, 'secret' | 'customHeaders' | 'eventId' | 'event' | 'body'>, attemptId: string, unixSeconds: number) {
  return {
    ...req.customHeaders,
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-event': req.event,
    'x-service-signature': serviceSignature(req.secret, req.body),
    'x-service-delivery': attemptId,
    'webhook-id': req.eventId,
    'webhook-timestamp': String(unixSeconds),
    'webhook-signature': standardSignature(req.secret, req.eventId, unixSeconds, req.body),
  };
}

/**
 * One delivery attempt: POST the body, no redirects followed, the whole attempt bounded by `timeoutMs`
 * (from the first byte of the connection to the answer's status). Never throws.
 */
export async function sendAttempt(req: AttemptRequest): Promise<AttemptResult> {
  const attemptId = randomUUID();
  const started = performance.now();
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new Error('timeout'));
  }, req.timeoutMs);
  const onOuterAbort = () => ac.abort(new Error('interrupted'));
  req.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const done = (r: Omit<AttemptResult, 'attemptId' | 'endedAt' | 'durationMs'>): AttemptResult => {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onOuterAbort);
    return extended(r, { attemptId, durationMs: Math.max(0, Math.round(performance.now() - started)), endedAt: new Date() });
  };
  try {
    const headers = deliveryHeaders(req, attemptId, Math.floor(Date.now() / 1000));
    const res = await req.dispatcher.request({
      origin: new URL(req.url).origin,
      path: pathOf(req.url),
      method: 'POST',
      headers,
      body: req.body,
      signal: ac.signal,
    });
    // NOTE: B.9 — the answer is its status; the snippet is read within what is left of the timeout and
    // cut at 1 KiB, the rest of the body is dropped (the connection closes rather than drain it).
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        if (size >= SNIPPET_BYTES) break;
      }
    } catch {
      // a body cut off by the timeout or the peer keeps what arrived
    } finally {
      if (size >= SNIPPET_BYTES) res.body.destroy();
    }
    const snippet = utf8Snippet(Buffer.concat(chunks));
    const status = res.statusCode;
    const success = status >= 200 && status < 300;
    const error = success ? undefined : status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`;
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(res.headers['retry-after'], Date.now()) : undefined;
    return done({
      success,
      statusCode: status,
      responseSnippet: snippet,
      ...(error ? { error } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  } catch (err) {
    if (req.signal?.aborted && !timedOut)
      return done({ success: false, statusCode: null, responseSnippet: null, error: 'interrupted by shutdown', interrupted: true });
    return done({ success: false, statusCode: null, responseSnippet: null, error: describeError(err, req.timeoutMs, timedOut) });
  }
}

function pathOf(url: string): string {
  const u = new URL(url);
  return (u.pathname || '/') + u.search;
}
