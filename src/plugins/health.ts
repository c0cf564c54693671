import fp from 'fastify-plugin';

/** Liveness and readiness (CONTRACT A.2); no key needed. */
export const healthRoutes = fp(
  async (app) => {
    const Ok = { type: 'object', properties: { status: { type: 'string' } } } as const;
    app.get('/healthz', { schema: { hide: true, response: { 200: Ok } } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true, response: { 200: Ok, 503: Ok } } }, async (_req, reply) => {
      if (app.draining) return reply.code(503).send({ status: 'draining' });
      try {
        await app.database.ping();
        return { status: 'ok' };
      } catch {
        return reply.code(503).send({ status: 'unavailable' });
      }
    });
  },
  { name: 'health' },
);
