import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { Config } from './config.js';
import { createDatabase, type Database } from './db/index.js';
import { authPlugin } from './plugins/auth.js';
import { errorsPlugin } from './plugins/errors.js';
import { openapiPlugin } from './plugins/openapi.js';
import { createRateLimitStore, type RateLimitStore } from './plugins/rate-limit.js';
import { healthRoutes } from './plugins/health.js';
import { MODULES, PUBLIC_MODULES } from './modules/index.js';
import { errors } from './errors.js';
import { WEBHOOK_DOCS } from './modules/webhooks/webhooks.docs.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
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

// Bodies are never coerced and unknown fields are kept so they can be rejected (B.2); query strings
// are parsed into their declared types and get their defaults.
function makeAjv(part: 'body' | 'other') {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    coerceTypes: part === 'body' ? false : 'array',
    useDefaults: part !== 'body',
    removeAdditional: false,
  });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const ownsDb = !deps.database;
  const database = deps.database ?? createDatabase(config);
  const app = Fastify({
    logger: deps.logger ?? {
      level: config.logLevel,
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.secret', '*.key'], censor: '[redacted]' },
      // CONTRACT A.1: the CLI's stdout carries only its JSON answers; logs go to stderr.
      stream: process.stderr,
    },
    bodyLimit: 1024 * 1024,
    // Ids are opaque: an over-long id is a 404 like any other unknown id, not a 414.
    routerOptions: { maxParamLength: 4096 },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    },
    trustProxy: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();

  const bodyAjv = makeAjv('body');
  const otherAjv = makeAjv('other');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : otherAjv).compile(schema));

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
    // NOTE: PostgreSQL text cannot hold NUL; refuse it at the edge on both dialects alike.
    const nul = text.includes('\\u0000') ? findNul(parsed, '') : null;
    if (nul !== null) return done(errors.field(nul, 'must not contain NUL characters'), undefined);
    done(null, parsed);
  });
  app.addHook('preValidation', (req, _reply, done) => {
    for (const v of Object.values((req.params ?? {}) as Record<string, unknown>)) {
      if (typeof v === 'string' && v.includes('\u0000')) return done(errors.notFound('Not found'));
    }
    for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>)) {
      if ([v].flat().some((x) => typeof x === 'string' && x.includes('\u0000'))) return done(errors.field(k, 'must not contain NUL characters'));
    }
    done();
  });

  app.decorate('config', config);
  app.decorate('database', database);
  database.readPool?.warm();
  const store = deps.store ?? createRateLimitStore(config.redisUrl, (err) => app.log.warn({ err }, 'rate-limit store unavailable'));
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onClose', async () => {
    if (!deps.store) await store.close();
    if (ownsDb) await database.close();
  });

  await app.register(errorsPlugin);
  await app.register(openapiPlugin, { webhooks: WEBHOOK_DOCS });
  await app.register(authPlugin, { db: database.db, store });
  await app.register(healthRoutes);
  for (const mod of MODULES) await app.register(mod, { prefix: '/api/v1' });
  for (const mod of PUBLIC_MODULES) await app.register(mod);
  return app;
}

/** Path (`items[2].name`, or a key name) of the first string or key holding a NUL character, else null. */
function findNul(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path || '(body)' : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = findNul(value[i], `${path}[${i}]`);
      if (p !== null) return p;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = path ? `${path}.${k}` : k;
      if (k.includes('\u0000')) return p;
      const found = findNul(v, p);
      if (found !== null) return found;
    }
  }
  return null;
}
