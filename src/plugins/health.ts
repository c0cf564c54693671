import fp from 'fastify-plugin';
import { API_INFO } from './openapi.js';

const Root = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    docs: { type: 'string', description: 'Human-readable reference page' },
    openapi: { type: 'string', description: 'OpenAPI 3.1 document of the whole public API' },
  },
  required: ['name', 'version', 'docs', 'openapi'],
  examples: [{ name: 'CRM Public API', version: '1.0.0', docs: '/docs', openapi: '/api/v1/openapi.json' }],
} as const;

/** Liveness and readiness (CONTRACT A.2) and the root pointer (C.5); no key needed. */
export const healthRoutes = fp(
  async (app) => {
    const Ok = { type: 'object', properties: { status: { type: 'string' } } } as const;
    // C.5: someone who opens the base URL learns where the reference lives. Documented, so generated
    // clients and the docs page show it too; `security: []` because it needs no key.
    app.get(
      '/',
      {
        schema: {
          tags: ['Service'],
          operationId: 'getApiRoot',
          summary: 'Where the documentation is',
          description: 'No API key. Points to the reference page and the OpenAPI document (paths relative to the base URL).',
          security: [],
          response: { 200: Root },
        },
      },
      async () => ({ name: API_INFO.title, version: API_INFO.version, docs: '/docs', openapi: '/api/v1/openapi.json' }),
    );
    // Said once per change of the database's state (PostgreSQL's heartbeat), never once per request.
    const down = (reason: string) => app.log.warn({ reason }, 'database unavailable: requests answer 503 database_unavailable');
    const up = () => app.log.info('database available again');
    app.database.health?.on('down', down).on('up', up);
    app.addHook('onClose', async () => void app.database.health?.off('down', down).off('up', up));
    app.get('/healthz', { schema: { hide: true, response: { 200: Ok } } }, async () => ({ status: 'ok' }));
    // 200 while the database answers (A.2), whatever else is down; a dependency the service works around
    // is named in the body: `{ "status": "degraded", "degraded": ["redis"] }` while rate limits are per process.
    const Ready = {
      type: 'object',
      properties: { status: { type: 'string' }, degraded: { type: 'array', items: { type: 'string' } } },
    } as const;
    const ready = () => (app.rateLimitStore.degraded ? { status: 'degraded', degraded: ['redis'] } : { status: 'ok' });
    app.get('/readyz', { schema: { hide: true, response: { 200: Ready, 503: Ok } } }, async (_req, reply) => {
      if (app.draining) return reply.code(503).send({ status: 'draining' });
      try {
        await app.database.ping();
        return ready();
      } catch {
        return reply.code(503).send({ status: 'unavailable' });
      }
    });
  },
  { name: 'health' },
);
