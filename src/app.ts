import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { createDatabase, type Database } from './db/index.js';
import { authPlugin } from './plugins/auth.js';
import { bodySharePlugin } from './plugins/body-share.js';
import { metricsPlugin } from './plugins/metrics.js';
import { clientErrorHandler, errorsPlugin, frameworkErrors } from './plugins/errors.js';
import { loggerOptions, requestLogger } from './plugins/logging.js';
import { openapiPlugin } from './plugins/openapi.js';
import { createRateLimitStore, type RateLimitStore } from './plugins/rate-limit.js';
import { healthRoutes } from './plugins/health.js';
import { idempotencyPlugin } from './plugins/idempotency.js';
import { MODULES, PUBLIC_MODULES } from './modules/index.js';
import { errors } from './errors.js';
import { compileRequestSchema } from './http/validation.js';
import { heldIssues, judgeJsonBody } from './http/body-checks.js';
import { WEBHOOK_DOCS } from './modules/webhooks/webhooks.docs.js';
import { EventWaiters, startWakeups } from './events/waiters.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    /** Set by `crm serve` on SIGTERM/SIGINT: /readyz answers 503 so load balancers stop sending (A.1). */
    draining: boolean;
    /** The long-polls of `GET /events?wait=` in this process (released at once by `close()` on shutdown). */
    eventWaiters: EventWaiters;
  }
  interface FastifyRequest {
    /** When the request arrived (epoch ms): the deadline of its data-dependent reads runs from then. */
    receivedAt: number;
  }
}

export interface AppDeps {
  config: Config;
  /** Shared database (tests share one per file); created from the config otherwise and closed with the app. */
  database?: Database;
  store?: RateLimitStore;
  logger?: FastifyServerOptions['logger'];
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const ownsDb = !deps.database;
  const database = deps.database ?? createDatabase(config);
  const app = Fastify(serverOptions(config, deps.logger)).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(({ schema, httpPart }) => compileRequestSchema(schema as Record<string, unknown>, httpPart));
  acceptJsonBodies(app);
  refuseHeldValuesAndNul(app);

  app.decorate('config', config);
  app.decorate('database', database);
  app.decorate('draining', false);
  database.readPool?.warm();
  const store = deps.store ?? createRateLimitStore(config.redisUrl, app.log);
  app.decorate('rateLimitStore', store);
  stampRequests(app);
  const wakeups = wakeEventWaiters(app, config, database);
  app.addHook('onClose', async () => {
    await wakeups.close();
    if (!deps.store) await store.close();
    if (ownsDb) await database.close();
  });

  await registerPlugins(app, config, database, store);
  return app;
}

/** Fastify's own settings for the API. */
function serverOptions(config: Config, logger: AppDeps['logger']): FastifyServerOptions {
  return {
    logger: loggerOptions(config, logger),
    childLoggerFactory: requestLogger,
    bodyLimit: 1024 * 1024,
    // Ids are opaque: an over-long id is a 404 like any other unknown id, not a 414 (longer ones than
    // this reach frameworkErrors, which answers the same 404).
    routerOptions: { maxParamLength: 4096 },
    frameworkErrors,
    clientErrorHandler,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    },
    trustProxy: false,
    // CONTRACT A.1: a request that reached the server before the stop is answered, never 503. Fastify's
    // own default would answer 503 to requests parsed after close() began (their bytes may well have
    // arrived before the signal); `crm serve` stops accepting only after its drain window instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
  };
}

/** JSON bodies, parsed once and judged by B.2's rules (http/body-checks.ts); an empty one is no body. */
function acceptJsonBodies(app: FastifyInstance): void {
  // An empty body with a JSON content type (DELETE from many HTTP clients) is no body, not an error.
  // Only JSON bodies are accepted on the API (B.2: anything else is 415); Fastify parses text/plain by default.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      const err = Object.assign(new Error('invalid json'), { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 });
      return done(err, undefined);
    }
    // B.2, once for every route (http/body-checks.ts): no NUL (PostgreSQL text cannot hold one), finite
    // numbers, well-formed strings; nesting is bounded here so nothing downstream walks a hostile depth.
    const refused = judgeJsonBody(parsed, text);
    if (refused !== null) return done(errors.validation(refused), undefined);
    done(null, parsed);
  });
}

/** Value issues held from the body for a route without a body schema; NUL in a path or query value. */
function refuseHeldValuesAndNul(app: FastifyInstance): void {
  app.addHook('preValidation', (req, _reply, done) => {
    // The value issues of a body are reported by its validator, with the schema's own (http/validation.ts);
    // a route without a body schema has no validator to report them.
    const held = heldIssues(req.body);
    if (held !== undefined && !req.routeOptions.schema?.body) return done(errors.validation(held));
    // Path parameters and query values hold a NUL only when the URL does, raw or as `%00` (the one escape
    // that decodes to it): most URLs are cleared by two scans, without walking their parsed parts.
    if (!req.url.includes('%00') && !req.url.includes('\u0000')) return done();
    for (const v of Object.values((req.params ?? {}) as Record<string, unknown>)) {
      if (typeof v === 'string' && v.includes('\u0000')) return done(errors.notFound('Not found'));
    }
    for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>)) {
      if ([v].flat().some((x) => typeof x === 'string' && x.includes('\u0000'))) return done(errors.field(k, 'must not contain NUL characters'));
    }
    done();
  });
}

/** Each request's arrival time and its `x-request-id` header. */
function stampRequests(app: FastifyInstance): void {
  // When the request arrived: its data-dependent reads must be answered within QUERY_TIMEOUT_MS of it (db/reads.ts).
  app.decorateRequest('receivedAt', 0);
  app.addHook('onRequest', (req, reply, done) => {
    req.receivedAt = Date.now();
    reply.header('x-request-id', req.id);
    done();
  });
}

/** The long-polls of `GET /events?wait=` of this app and what wakes them; returns the wake-ups to close. */
function wakeEventWaiters(app: FastifyInstance, config: Config, database: Database): { close(): Promise<void> } {
  // Long-polls of the event log are woken by commits: through the one LISTEN connection of this process
  // on PostgreSQL (commits of every process), in process on SQLite (DESIGN §5).
  const waiters = new EventWaiters({ perKey: config.eventWaitPerKey, perProcess: config.eventWaitMax });
  app.decorate('eventWaiters', waiters);
  const wakeups = startWakeups(database, waiters, app.log);
  // Waiting requests are answered before the server waits for requests in flight to finish.
  app.addHook('preClose', async () => waiters.close());
  return wakeups;
}

/** The plugins, then every module's routes. */
async function registerPlugins(app: FastifyInstance, config: Config, database: Database, store: RateLimitStore): Promise<void> {
  await app.register(errorsPlugin);
  // Before every plugin that adds routes: each route gets its recorder when it is added (onRoute).
  await app.register(metricsPlugin);
  await app.register(openapiPlugin, { webhooks: WEBHOOK_DOCS });
  await app.register(authPlugin, { db: database.db, store, onTenant: (tenantId) => app.bodyShare.seen(tenantId) });
  await app.register(bodySharePlugin, { maxQueued: config.queryQueuePerTenant, timeoutMs: config.queryTimeoutMs });
  await app.register(idempotencyPlugin, {
    database,
    ttlHours: config.idempotencyTtlHours,
    // A webhook test (the one outbound handler) ends within its timeout; the margin covers the recording.
    outboundLeaseMs: config.webhookTimeoutMs + 10_000,
  });
  await app.register(healthRoutes);
  for (const mod of MODULES) await app.register(mod, { prefix: '/api/v1' });
  for (const mod of PUBLIC_MODULES) await app.register(mod);
}
