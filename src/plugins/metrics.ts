import fp from 'fastify-plugin';
import { Gauge, Registry } from 'prom-client';
import { ApiError } from '../errors.js';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { authFailures, collectProcessMetrics, httpMetrics, processRegistry, refusedRequests } from '../metrics.js';
import { routeHooks } from '../http/route-hooks.js';

const AUTH_CODES = new Set(['missing_api_key', 'invalid_api_key']);
const REFUSAL_CODES = new Set(['rate_limit_exceeded', 'too_many_concurrent_queries', 'too_many_waiting_requests']);

/**
 * `GET /metrics` in the Prometheus text format (METRICS=false: no such route, 404). Needs no key, like
 * /healthz, and holds no tenant data (src/metrics.ts); restrict it at the proxy when the port is public.
 * Records every request by route template and status, 429s by code and authentication failures; adds
 * the gauges of this app: waiting long-polls, the age of the oldest due webhook delivery, whether the
 * rate limits are per process for want of Redis, and the PostgreSQL pool's connections.
 */
export const metricsPlugin = fp(
  async (app) => {
    if (!app.config.metrics) return;
    collectProcessMetrics();
    const own = ownGauges(app);
    recordResponses(app);
    const registry = Registry.merge([processRegistry, own]);
    app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'metrics' },
);

/** The gauges of this app: waiting long-polls, the oldest due delivery, the rate-limit store, the pool. */
function ownGauges(app: FastifyInstance): Registry {
  const own = new Registry();
  new Gauge({
    name: 'crm_event_waiting_requests',
    help: 'Long-polls of GET /events waiting in this process',
    registers: [own],
    collect() {
      this.set(app.eventWaiters.waiting);
    },
  });
  new Gauge({
    name: 'crm_webhook_oldest_due_delivery_age_seconds',
    help: 'How long the oldest webhook delivery that is due (pending or retry_scheduled, its time come) has been waiting; 0 when none',
    registers: [own],
    async collect() {
      const now = new Date().toISOString();
      const row = await app.database.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.min('next_attempt_at').as('due'))
        .where('status', 'in', ['pending', 'retry_scheduled'])
        .where('next_attempt_at', '<=', now)
        .executeTakeFirst();
      const due = row?.due ? Date.parse(String(row.due)) : NaN;
      this.set(Number.isFinite(due) ? Math.max(0, (Date.now() - due) / 1000) : 0);
    },
  });
  new Gauge({
    name: 'crm_rate_limit_store_degraded',
    help: '1 while Redis (REDIS_URL) is unreachable and this process counts rate limits on its own; 0 while they are shared (or kept in memory by design, without REDIS_URL)',
    registers: [own],
    collect() {
      this.set(app.rateLimitStore.degraded ? 1 : 0);
    },
  });
  const pool = app.database.pool;
  if (pool) {
    new Gauge({
      name: 'crm_db_pool_connections',
      help: 'Connections of the PostgreSQL pool of writes and point reads: total open, idle, and requests waiting for one',
      labelNames: ['state'] as const,
      registers: [own],
      collect() {
        this.set({ state: 'total' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
  }
  return own;
}

/** Every response by route template and status; 429s by code and authentication failures. */
function recordResponses(app: FastifyInstance): void {
  // Each route records its own responses with a recorder made once (the route template is known here;
  // req.routeOptions would build an object on every request). Registered before any route (app.ts).
  app.addHook('onRoute', (route) => {
    const record = httpMetrics.recorder(route.url);
    route.onResponse = [
      (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
        record(req.method, reply.statusCode, reply.elapsedTime / 1000);
        done();
      },
      ...routeHooks(route.onResponse),
    ];
  });
  // Requests no route matched (404s of unknown paths) have no route hooks: this one records them.
  const unmatched = httpMetrics.recorder('unmatched');
  app.addHook('onResponse', (req, reply, done) => {
    if (req.is404) unmatched(req.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.addHook('onError', (_req, _reply, err, done) => {
    const code = err instanceof ApiError ? err.code : undefined;
    if (code && AUTH_CODES.has(code)) authFailures.inc({ code });
    else if (code && REFUSAL_CODES.has(code)) refusedRequests.inc({ code });
    done();
  });
}
