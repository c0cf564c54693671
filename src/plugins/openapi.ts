import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ErrorBody } from '../http/schemas.js';
import { SCOPES } from '../auth/scopes.js';

export interface OpenApiOptions {
  /** Extra top-level document parts (the `webhooks` section of events). */
  webhooks?: Record<string, unknown>;
}

const DESCRIPTION = `Public REST API of the CRM. Every call carries \`X-API-Key: crm_live_…\`; a key sees one tenant's
data, limited by its scopes (${SCOPES.length} scopes plus \`*\`) and by its own rate limit (default 100 calls per minute,
fixed 60-second window from the first call). Errors are JSON \`{ error, message, … }\`; every response carries
\`X-Request-Id\`; authenticated responses carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`.`;

export const openapiPlugin = fp<OpenApiOptions>(
  async (app, opts) => {
    app.addSchema(ErrorBody);
    // Every public API route shares these answers; adding them here keeps route files to what is their own.
    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith('/api/v1/') || route.config?.public) return;
      const schema = (route.schema ??= {});
      const response = ((schema as any).response ??= {}) as Record<string, unknown>;
      for (const status of [401, 403, 429, 500]) {
        response[status] ??= { $ref: 'Error#', description: { 401: 'Missing or invalid API key', 403: 'Insufficient scope', 429: 'Rate limit exceeded', 500: 'Unexpected failure' }[status] };
      }
      const scopes = route.config?.scopes ?? [];
      if (scopes.length && !(schema as any).description) (schema as any).description = `Requires scope \`${scopes.join('`, `')}\`.`;
      (schema as any)['x-scopes'] = scopes;
    });
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'CRM Public API', version: '1.0.0', description: DESCRIPTION },
        servers: [{ url: '/' }],
        components: {
          securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
        },
        security: [{ ApiKey: [] }],
        ...(opts.webhooks ? { webhooks: opts.webhooks } : {}),
      } as any,
      refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
      hideUntagged: false,
    });
    await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { docExpansion: 'list', deepLinking: true } });
    app.get('/api/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);
