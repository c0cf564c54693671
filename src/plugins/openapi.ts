import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import { ErrorBody } from '../http/schemas.js';
import { SCOPES } from '../auth/scopes.js';
import { addSdkCodeSamples } from '../http/code-samples.js';

export interface OpenApiOptions {
  /** Extra top-level document parts (the `webhooks` section of events). */
  webhooks?: Record<string, unknown>;
}

/** Name and version of the API, shared by the OpenAPI document and `GET /`. */
export const API_INFO = { title: 'CRM Public API', version: '1.0.0' } as const;

const DESCRIPTION = `Public REST API of the CRM. Every call carries \`X-API-Key: crm_live_…\`; a key sees one tenant's
data, limited by its scopes and by its own rate limit (default 100 calls per minute,
fixed 60-second window from the first call). Scopes are literal (\`write\` does not imply \`read\`); \`*\` covers every
scope, present and future: ${SCOPES.map((s) => `\`${s}\``).join(', ')}. Each operation names its own in \`x-scopes\`.
Errors are JSON \`{ error, message, … }\`; a 400 \`validation_failed\` names every invalid field of the request in
\`details: [{ field, message }]\`, not only the first; every response carries
\`X-Request-Id\`; authenticated responses carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`.

Queries whose cost depends on the data (list pages, search, filters, totals) have a deadline (\`QUERY_TIMEOUT_MS\`,
5 s by default, counted from arrival and including any wait for a free read connection): past it the query is
stopped and the call answers **503 \`query_timeout\`** with \`Retry-After: 1\`; narrow the filter or the page. A query
whose client disconnects is stopped too. So that no tenant can slow another, one tenant runs at most half of the
server's read connections at once; a tenant with more than \`QUERY_QUEUE_PER_TENANT\` (200) queries waiting gets
**429 \`too_many_concurrent_queries\`** with \`Retry-After: 1\`. Likewise a tenant's request bodies of 16 KiB or more
share 64 KiB per server process (a larger one runs alone): the next ones wait their turn before they are read, with
the same bound on waiting requests (429) and \`QUERY_TIMEOUT_MS\` on the wait (503 \`query_timeout\`).

Every \`POST\` that changes data accepts an \`Idempotency-Key\` header (1–255 visible ASCII characters) so a retry
never applies a change twice: the first request runs and its status and body are stored, in the transaction of its
change, for \`IDEMPOTENCY_TTL_HOURS\` (24 h) per API key; a repeat answers them again with \`Idempotent-Replayed: true\`.
The same key with another method, path or body is **422 \`idempotency_key_reused\`**; a repeat while the first is still
running is **409 \`idempotency_key_in_use\`** with \`Retry-After: 1\`. Successes and business errors of a request that
ran (404, 409, 422) are stored, as Stripe does; refusals before it ran (401, 403, 429, 400) and 5xx are not, so a
corrected retry with the same key runs. Replays count against the rate limit.`;

/** The reference's sections, in the spec's order, then what the API adds (CONTRACT Part C). */
const TAGS = [
  ['Contacts', 'People: create, read, update, delete, search, batch operations.'],
  ['Companies', 'Organizations, unique by CNPJ and by domain.'],
  ['Deals', 'Opportunities moving through a pipeline\'s stages.'],
  ['Activities', 'Calls, meetings, e-mails, notes and tasks, linked to contacts, companies and deals.'],
  ['Tags', 'Labels shared by contacts, companies and deals.'],
  ['Lists', 'Static and dynamic lists of contacts or companies.'],
  ['Proposals', 'Commercial proposals of a deal and their status.'],
  ['Pipelines', 'Pipelines and their stages (read-only).'],
  ['Properties', 'Custom property definitions (read-only).'],
  ['Forms', 'Forms and their submissions (read-only); the public intake is under Public form intake.'],
  ['Webhooks', 'Webhook subscriptions, their deliveries, retries and health. The payload of each event is under Webhook events.'],
  ['Events', 'The event log: every change, in order, with long-polling.'],
  ['Reference data', 'Users and loss reasons, to fill ids.'],
  ['Public form intake', 'The public form page and its submission, without an API key.'],
  ['Service', 'Where the documentation lives.'],
  ['Webhook events', 'The request each event sends to a subscribed webhook: headers, signature and body.'],
].map(([name, description]) => ({ name, description }));

export const openapiPlugin = fp<OpenApiOptions>(
  async (app, opts) => {
    app.addSchema(ErrorBody);
    // Every public API route shares these answers; adding them here keeps route files to what is their own.
    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith('/api/v1/') || route.config?.public) return;
      const schema = (route.schema ??= {});
      const response = ((schema as any).response ??= {}) as Record<string, unknown>;
      const descriptions: Record<number, string> = {
        401: 'Missing or invalid API key',
        403: 'Insufficient scope',
        429: '`rate_limit_exceeded` (the key\'s rate limit), or `too_many_concurrent_queries` (too many of the tenant\'s queries waiting)',
        500: 'Unexpected failure',
        503: '`query_timeout`: a data-dependent query ran past `QUERY_TIMEOUT_MS` and was stopped, or a large body waited that long for its turn',
      };
      for (const status of [401, 403, 429, 500, 503]) response[status] ??= { $ref: 'Error#', description: descriptions[status] };
      const scopes = route.config?.scopes ?? [];
      if (scopes.length && !(schema as any).description) (schema as any).description = `Requires scope \`${scopes.join('`, `')}\`.`;
      (schema as any)['x-scopes'] = scopes;
    });
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { ...API_INFO, description: DESCRIPTION },
        servers: [{ url: '/' }],
        components: {
          securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
        },
        security: [{ ApiKey: [] }],
        // The reference page lists the sections in this order: the spec's, then what the API adds.
        tags: TAGS,
        ...(opts.webhooks ? { webhooks: opts.webhooks } : {}),
      } as any,
      refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
      hideUntagged: false,
      // Each operation's SDK example (lang `typescript`, label `SDK`), shown by Scalar beside its curl.
      transformObject: (document) => addSdkCodeSamples((document as { openapiObject: Record<string, any> }).openapiObject),
    });
    // NOTE: the reference page is Scalar, served from its npm package (its script is bundled in it): no
    // CDN, no web fonts, no telemetry, no hosted API client, and no CSP that upgrades requests to HTTPS,
    // so it renders over plain HTTP from any host name (test/e2e/docs-browser.test.ts).
    // Its module holds that script: loading it costs the process ~40 MiB (20 MiB of heap), which most
    // servers never use. So it is loaded on the first request for /docs, into a Fastify instance of its own
    // that the routes below answer through (`inject`), with the document this one generated.
    let reference: Promise<FastifyInstance> | undefined;
    const loadReference = async (): Promise<FastifyInstance> => {
      const { default: scalar } = await import('@scalar/fastify-api-reference');
      const docs = Fastify({ logger: false });
      await docs.register(scalar, {
        routePrefix: '/docs',
        logLevel: 'silent',
        configuration: {
          title: `${API_INFO.title} — reference`,
          pageTitle: `${API_INFO.title} — reference`,
          content: app.swagger(),
          withDefaultFonts: false,
          telemetry: false,
          hideClientButton: true,
          showDeveloperTools: 'never',
          agent: { disabled: true },
          mcp: { disabled: true },
          defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
        } as any,
      });
      await docs.ready();
      return docs;
    };
    const serveReference = async (req: FastifyRequest, reply: FastifyReply) => {
      reference ??= loadReference().catch((err) => {
        reference = undefined; // a failed load is tried again by the next request
        throw err;
      });
      const page = await (await reference).inject({ method: 'GET', url: req.url, headers: { accept: req.headers.accept ?? '*/*' } });
      for (const [name, value] of Object.entries(page.headers)) {
        if (value !== undefined && !['connection', 'transfer-encoding', 'keep-alive', 'date'].includes(name)) reply.header(name, value);
      }
      reply.code(page.statusCode);
      return page.rawPayload;
    };
    const hidden = { config: { public: true }, schema: { hide: true }, logLevel: 'silent' as const };
    app.get('/docs', hidden, serveReference);
    app.get('/docs/*', hidden, serveReference);
    app.get('/api/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);
