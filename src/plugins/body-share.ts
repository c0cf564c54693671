import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';

/**
 * One tenant's large request bodies cannot crowd another tenant off the event loop (DESIGN §4).
 *
 * Parsing, checking, validating and compiling a body costs the main thread in proportion to its size: a
 * search whose filter holds 8,000 values (146 KiB) costs ~30 ms of CPU before its statement runs, and the
 * read pool (db/reads.ts) bounds only the statement. On PostgreSQL such a statement takes ~40 ms, so a
 * tenant sending these from 8 connections kept ~0.8 of a core busy in the server, and another tenant's
 * point reads waited behind them (their p99 ×11.7 in the noisy-neighbour bench).
 *
 * So each server process lets a tenant have at most BUDGET_BYTES of large request bodies (LARGE_BYTES and
 * more) in process at once, counted from `content-length` once the key is known (preParsing, after
 * authentication) and handed back when the response is done or the client goes away. A body larger than
 * the budget runs alone. A request that would pass the budget waits, in order of arrival per tenant,
 * before its body is read:
 * - at most `maxQueued` of a tenant's requests wait; more is 429 `too_many_concurrent_queries`;
 * - one waits at most `timeoutMs` (QUERY_TIMEOUT_MS); then 503 `query_timeout`.
 * Other tenants never wait on it, and neither do the tenant's own requests with ordinary bodies (a create,
 * a batch of 100 contacts: ~12 KiB), nor those without a body.
 *
 * And while another tenant is active (a request of it authenticated within ACTIVE_WINDOW_MS), a large search's
 * share is handed back only as long again after its response as the request took: a tenant's large searches
 * then have at most half of the time, and so at most about half of the CPU they take of the server and of the
 * database. A request of 8,000 filter values cost the server ~17 ms of CPU where its PostgreSQL statement took a
 * few: B's 8 clients kept one in process at all times, ~50 a second, on a machine whose two cores also ran A's
 * backends, and A's p99 was ×4.8–6.4 its p99 alone; with the share held it was ×3.0–3.8, and on SQLite ×2.3 →
 * ×1.5 (bench/journal/). A tenant alone is never held back, and neither are writes: a large
 * write is a batch, and an integrator syncing a CRM sends them one after another (`acquire`'s `holds`).
 */
export const BUDGET_BYTES = 64 * 1024;
export const LARGE_BYTES = 16 * 1024;
/** How recently another tenant must have sent a request for a large search's share to be held after it. */
export const ACTIVE_WINDOW_MS = 1_000;

interface Waiter {
  bytes: number;
  admit(): void;
  timer: NodeJS.Timeout;
}

interface TenantShare {
  used: number;
  running: number;
  queue: Waiter[];
}

export class BodyShare {
  private readonly tenants = new Map<string, TenantShare>();

  constructor(
    readonly budgetBytes: number,
    private readonly maxQueued: number,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Resolves when `bytes` of `tenantId`'s bodies may be processed, with the function that hands them back
   * (call it once). Rejects with the contract's 429 or 503 as above. `holds`: while another tenant is active,
   * the bytes come back only as long again after that call as they were held (searches; not writes).
   */
  acquire(tenantId: string, bytes: number, holds = true): Promise<() => void> {
    let s = this.tenants.get(tenantId);
    if (!s) this.tenants.set(tenantId, (s = { used: 0, running: 0, queue: [] }));
    const share = s;
    if (share.queue.length === 0 && this.fits(share, bytes)) return Promise.resolve(this.take(tenantId, share, bytes, holds));
    if (share.queue.length >= this.maxQueued) return Promise.reject(errors.tooManyQueries(this.maxQueued));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        admit: () => resolve(this.take(tenantId, share, bytes, holds)),
        timer: setTimeout(() => {
          const i = share.queue.indexOf(waiter);
          if (i >= 0) share.queue.splice(i, 1);
          this.forget(tenantId, share);
          reject(errors.noRoomForBodies(this.timeoutMs));
        }, this.timeoutMs),
      };
      share.queue.push(waiter);
    });
  }

  /** Bytes of `tenantId`'s bodies in process now, and its requests waiting (tests, metrics). */
  state(tenantId: string): { bytes: number; running: number; waiting: number } {
    const s = this.tenants.get(tenantId);
    return { bytes: s?.used ?? 0, running: s?.running ?? 0, waiting: s?.queue.length ?? 0 };
  }

  private fits(s: TenantShare, bytes: number): boolean {
    return s.running === 0 || s.used + bytes <= this.budgetBytes;
  }

  /** The two tenants seen last, most recent first, each once: enough to tell whether any other than one is active. */
  private readonly recent = [
    { tenantId: '', at: -Infinity },
    { tenantId: '', at: -Infinity },
  ];

  /** A request of `tenantId` was authenticated (the auth hook calls it for every one: see AuthOptions.onTenant). */
  seen(tenantId: string, now = Date.now()): void {
    const [first, second] = this.recent;
    if (first.tenantId === tenantId) {
      first.at = now;
      return;
    }
    second.tenantId = first.tenantId;
    second.at = first.at;
    first.tenantId = tenantId;
    first.at = now;
  }

  /** Whether a tenant other than `tenantId` sent a request within ACTIVE_WINDOW_MS. */
  private othersActive(tenantId: string, now: number): boolean {
    for (const r of this.recent) if (r.tenantId !== '' && r.tenantId !== tenantId && now - r.at < ACTIVE_WINDOW_MS) return true;
    return false;
  }

  private take(tenantId: string, s: TenantShare, bytes: number, holds: boolean): () => void {
    s.used += bytes;
    s.running++;
    let done = false;
    const started = Date.now();
    return () => {
      if (done) return;
      done = true;
      const now = Date.now();
      // See the module's comment: while another tenant is active, the share stays taken as long again.
      if (holds && this.othersActive(tenantId, now)) setTimeout(() => this.giveBack(tenantId, s, bytes), now - started).unref();
      else this.giveBack(tenantId, s, bytes);
    };
  }

  private giveBack(tenantId: string, s: TenantShare, bytes: number): void {
    s.used -= bytes;
    s.running--;
    while (s.queue.length > 0 && this.fits(s, s.queue[0].bytes)) {
      const next = s.queue.shift()!;
      clearTimeout(next.timer);
      next.admit();
    }
    this.forget(tenantId, s);
  }

  private forget(tenantId: string, s: TenantShare): void {
    if (s.running === 0 && s.queue.length === 0) this.tenants.delete(tenantId);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    bodyShare: BodyShare;
  }
}

export const bodySharePlugin = fp<{ maxQueued: number; timeoutMs: number; budget?: number }>(
  async (app, opts) => {
    const share = new BodyShare(opts.budget ?? BUDGET_BYTES, opts.maxQueued, opts.timeoutMs);
    app.decorate('bodyShare', share);
    const gate =
      (holds: boolean) =>
      (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void => {
        const principal = req.principal;
        const length = req.headers['content-length'];
        // A body sent in chunks, with no length given, counts as the whole budget: it runs alone.
        const bytes = length !== undefined ? Number(length) : req.headers['transfer-encoding'] !== undefined ? share.budgetBytes : 0;
        if (!principal || !(bytes >= LARGE_BYTES)) return done(null, payload);
        share.acquire(principal.tenantId, bytes, holds).then(
          (release) => {
            // 'close' comes once the response is sent, and also when the client goes away first.
            reply.raw.once('close', release);
            done(null, payload);
          },
          (err: Error) => done(err),
        );
      };
    // Only on the API's routes that take a body, and synchronous when the body is small: a point read pays
    // nothing for it.
    app.addHook('onRoute', (route) => {
      const methods = [route.method].flat();
      if (!route.url.startsWith('/api/v1/') || route.config?.public || !methods.some((m) => m === 'POST' || m === 'PATCH' || m === 'PUT')) return;
      // Only a search is held after its answer (see the module's comment): a write's large body (a batch of
      // records with many properties, an integrator's sync) keeps the whole of the tenant's share.
      route.preParsing = [...[route.preParsing ?? []].flat(), gate(route.url.endsWith('/search')) as never];
    });
  },
  { name: 'body-share', dependencies: ['auth'] },
);
