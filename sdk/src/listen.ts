import { createHmac, randomBytes, randomUUID } from 'node:crypto';

/**
 * `listen`: webhooks on a developer's machine without a public HTTPS endpoint. It follows the event log
 * (`GET /api/v1/events` with `wait=`, the long-poll) and POSTs every event to a local URL as a webhook
 * delivery of it would arrive: the same body bytes and the same headers (Standard Webhooks `webhook-id`,
 * `webhook-timestamp`, `webhook-signature`, and the service's `X-Service-*`), signed with a secret of its
 * own. The command delivers, not the server, so `http://localhost` works while the server still accepts
 * only `https://` webhook URLs.
 */

export interface ListenOptions {
  /** The service's root (`https://crm.example.com`); a trailing `/api/v1` is accepted too. */
  baseUrl: string;
  /** `crm_live_…` with the `events:read` scope (`*` covers it). */
  apiKey: string;
  /** Where each event is POSTed (`http://localhost:4000/hooks`). */
  forwardTo: string;
  /** The `whsec_…` secret the deliveries are signed with. */
  secret: string;
  /** Event keys to forward (default: every type). */
  events?: string[];
  /**
   * The `tenantId` field of the body. The event log does not carry it; without it the body has `""` there
   * (the project's `crm listen` reads it from the server's database).
   */
  tenantId?: string;
  /**
   * Where to start: undefined follows from now (the events already in the log are not sent); an event id
   * forwards every event strictly after it (the event log's `after`); `'start'` every event the log keeps.
   */
  replayFrom?: string;
  /** Called once the start point is known: events committed from then on are forwarded. */
  onReady?: () => void;
  /** Stops the command: the long-poll is aborted and `listen` resolves. */
  signal?: AbortSignal;
  /** Receives each output line (default: stdout). */
  log?: (line: string) => void;
  /** Receives notices: reconnects, errors (default: stderr). */
  warn?: (line: string) => void;
  /** Long-poll length in seconds (default 25, at most 30). */
  waitSeconds?: number;
  /** How long the local receiver has to answer, in ms (default 10,000, the server's WEBHOOK_TIMEOUT_MS). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The service's delivery user agent, sent as a real delivery does. */
export const DELIVERY_USER_AGENT = 'Service-Webhook/1.0';
const PREFIX = 'whsec_';
const EVENTS_PAGE = 1000;
const MAX_BACKOFF_MS = 30_000;

/** A fresh secret in the form the service gives webhooks: `whsec_` + base64 of 24 random bytes. */
export function newSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

/** One event as the log gives it, its `data` kept as the JSON text a delivery carries. */
export interface LoggedEvent {
  id: string;
  type: string;
  occurredAt: string;
  dataJson: string;
}

/**
 * The body and headers of a delivery of `event`, byte for byte what the service sends: the body is the
 * stored payload `{"event","tenantId","timestamp","data"}` in that key order; `data` is written again from
 * the parsed log entry, which gives the same text (JSON.stringify of JSON.parse of JSON.stringify output).
 */
export function delivery(event: LoggedEvent, secret: string, tenantId: string, unixSeconds: number): { body: string; headers: Record<string, string> } {
  const body = `{"event":${JSON.stringify(event.type)},"tenantId":${JSON.stringify(tenantId)},"timestamp":${JSON.stringify(event.occurredAt)},"data":${event.dataJson}}`;
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const standard = createHmac('sha256', key).update(`${event.id}.${unixSeconds}.`).update(body).digest('base64');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': DELIVERY_USER_AGENT,
      'x-service-event': event.type,
      'x-service-signature': 'sha256=' + createHmac('sha256', secret).update(body).digest('hex'),
      'x-service-delivery': randomUUID(),
      'webhook-id': event.id,
      'webhook-timestamp': String(unixSeconds),
      'webhook-signature': `v1,${standard}`,
    },
  };
}

/** An answer of the event log that no retry mends (bad key, missing scope, unknown event key). */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

interface Page {
  events: LoggedEvent[];
  nextCursor: string | null;
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** A retryable failure of the event log, with the wait it asks for (429's Retry-After). */
class Transient extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

function root(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
}

/** One call of `GET /api/v1/events`; throws Transient (retry) or ListenError (stop). */
async function readEvents(o: ListenOptions, query: Record<string, string | undefined>): Promise<Page> {
  const url = new URL(root(o.baseUrl) + '/api/v1/events');
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(url, { headers: { 'x-api-key': o.apiKey, accept: 'application/json' }, signal: o.signal });
  } catch (err) {
    if (o.signal?.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Transient(`cannot reach ${url.origin}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const text = await res.text();
  if (res.status === 429 || res.status >= 500) {
    const seconds = Number(res.headers.get('retry-after'));
    throw new Transient(`GET /api/v1/events answered ${res.status}`, Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined);
  }
  if (res.status !== 200) throw new ListenError(`GET /api/v1/events answered ${res.status}: ${text.slice(0, 500)}`);
  const page = JSON.parse(text) as { data: { id: string; type: string; occurredAt: string; data: unknown }[]; pagination: { nextCursor: string | null } };
  return {
    events: page.data.map((e) => ({ id: e.id, type: e.type, occurredAt: e.occurredAt, dataJson: JSON.stringify(e.data) })),
    nextCursor: page.pagination.nextCursor,
  };
}

/**
 * Calls `fn` until it succeeds: a server down, a 5xx or a 429 is retried after a jittered exponential
 * back-off (0.5 s doubling to 30 s) or the `Retry-After` asked for. Undefined when stopped meanwhile.
 */
async function withBackoff<T>(o: ListenOptions, fn: () => Promise<T>): Promise<T | undefined> {
  for (let failures = 0; ; failures++) {
    try {
      return await fn();
    } catch (err) {
      if (o.signal?.aborted) return undefined;
      if (!(err instanceof Transient)) throw err;
      const backoff = Math.min(MAX_BACKOFF_MS, 500 * 2 ** failures);
      const ms = err.retryAfterMs ?? Math.round(backoff / 2 + (Math.random() * backoff) / 2);
      (o.warn ?? stderr)(`${err.message}; retrying in ${(ms / 1000).toFixed(1)} s`);
      await pause(ms, o.signal);
      if (o.signal?.aborted) return undefined;
    }
  }
}

const stdout = (line: string) => void process.stdout.write(line + '\n');
const stderr = (line: string) => void process.stderr.write(line + '\n');

/** The id of the last event in the log now (of the types asked for), or undefined when there is none. */
async function lastEventId(o: ListenOptions, types: string | undefined): Promise<string | undefined> {
  let last: string | undefined;
  let cursor: string | undefined;
  do {
    const page = await withBackoff(o, () => readEvents(o, { types, limit: String(EVENTS_PAGE), cursor }));
    if (!page) return last;
    if (page.events.length) last = page.events[page.events.length - 1].id;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return last;
}

/** POSTs one event to the local receiver and prints its line: time, type, id, the answer's status and ms. */
async function forward(o: ListenOptions, event: LoggedEvent): Promise<void> {
  const { body, headers } = delivery(event, o.secret, o.tenantId ?? '', Math.floor(Date.now() / 1000));
  const started = performance.now();
  let outcome: string;
  try {
    const signals = [AbortSignal.timeout(o.timeoutMs ?? 10_000), ...(o.signal ? [o.signal] : [])];
    const res = await (o.fetch ?? fetch)(o.forwardTo, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.any(signals) });
    await res.arrayBuffer().catch(() => undefined);
    outcome = `[${res.status}]`;
  } catch (err) {
    if (o.signal?.aborted) return;
    const e = err as { name?: string; cause?: { code?: string }; message?: string };
    outcome = e.name === 'TimeoutError' ? '[timeout]' : `[error: ${e.cause?.code ?? e.message}]`;
  }
  const ms = Math.round(performance.now() - started);
  (o.log ?? stdout)(`${new Date().toISOString()}  --> ${event.type} ${event.id}  ${outcome} ${ms} ms`);
}

/**
 * One long-poll. An empty answer long before the wait ends is retried with back-off, not at once: the
 * service answers so for an `after` that is no event of the log (mistyped, or removed by retention), which
 * no later event will ever follow, and while it shuts down.
 */
async function poll(o: ListenOptions, query: { types?: string; after?: string; limit: string; wait: string }): Promise<Page> {
  const started = Date.now();
  const page = await readEvents(o, query);
  if (page.events.length === 0 && query.after !== undefined && Date.now() - started < Math.min(1000, Number(query.wait) * 500)) {
    throw new Transient(
      `the event log answered at once with no event after ${query.after}: not an event of the log (unknown, or removed by retention: ` +
        'start again without --replay-from, or with --replay-from start), or the service is shutting down',
    );
  }
  return page;
}

/**
 * Runs until `signal` aborts: follows the log from the start point and forwards each event, in the order
 * of the log, one at a time. A receiver's error or non-2xx answer is printed and not retried (the event
 * stays in the log: `replayFrom` sends it again). Throws ListenError on an answer no retry mends.
 */
export async function listen(o: ListenOptions): Promise<void> {
  const types = o.events?.length ? o.events.join(',') : undefined;
  const wait = String(Math.min(30, Math.max(1, o.waitSeconds ?? 25)));
  let after = o.replayFrom === 'start' ? undefined : (o.replayFrom ?? (await lastEventId(o, types)));
  if (!o.signal?.aborted) o.onReady?.();
  while (!o.signal?.aborted) {
    const page = await withBackoff(o, () => poll(o, { types, after, limit: '100', wait }));
    if (!page) break;
    for (const event of page.events) {
      if (o.signal?.aborted) break;
      await forward(o, event);
      after = event.id;
    }
  }
}
