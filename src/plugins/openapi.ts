import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import swagger, { type SwaggerOptions } from '@fastify/swagger';
import { ErrorBody } from '../http/schemas.js';
import { ERROR_CODES } from '../errors.js';
import { SCOPES } from '../auth/scopes.js';
import { addSdkCodeSamples } from '../http/code-samples.js';
import { prepareReference } from '../http/reference-doc.js';

export interface OpenApiOptions {
  /** Extra top-level document parts (the `webhooks` section of events). */
  webhooks?: Record<string, unknown>;
}

/** Name and version of the API, shared by the OpenAPI document and `GET /`. */
export const API_INFO = { title: 'CRM Public API', version: '1.0.0' } as const;

/**
 * How to fix each error code of the catalogue (ERROR_CODES, src/errors.ts). The reference's Errors section
 * lists them in the catalogue's order, one heading each (errorTitle), which Scalar anchors as
 * `#description/<code with hyphens>`; the `docUrl` of every error body (errorDocUrl, the code as it is) is
 * led there by CODE_ANCHORS.
 */
export const ERROR_EXPLANATIONS: Readonly<Record<string, string>> = {
  validation_failed: 'A field or query parameter is invalid: `details` names every one, with what is wrong. Fix them all and retry.',
  invalid_json: 'The body is not well-formed JSON.',
  invalid_format: 'A date or date-time is not in the expected format (`YYYY-MM-DD`, ISO 8601 with time zone).',
  invalid_cursor: "The `cursor` is malformed, from another endpoint, key or sort, or the other query parameters differ from the first page's.",
  invalid_status: 'A proposal `status` that is not one of its statuses; the message lists them.',
  invalid_url: 'A webhook `url` must be a well-formed `https://` URL.',
  invalid_event: 'An event type is not in the catalogue (`GET /webhooks/event-types`).',
  invalid_request: 'The request is malformed at the HTTP level (a `Content-Length` that does not match the body).',
  bad_request: 'The request could not be parsed.',
  duplicate_proposal_for_deal: 'The deal already has a proposal (at most one per deal); `existingProposalId` names it.',
  missing_api_key: 'No `X-API-Key` header was sent.',
  invalid_api_key: 'The key is malformed, unknown, revoked or expired.',
  insufficient_scope: 'The key lacks a scope the operation requires; `required` names it.',
  forbidden: 'The endpoint is not available to API keys.',
  not_found: 'The record of the path, or a referenced id (the message names the field), does not exist.',
  duplicate_email: 'Another contact has this e-mail; `existingContactId` names it.',
  duplicate_phone: 'Another contact has this phone; `existingContactId` names it.',
  duplicate_cnpj: 'Another company has this CNPJ; `existingCompanyId` names it.',
  duplicate_domain: 'Another company has this domain; `existingCompanyId` names it.',
  duplicate_name: 'Another tag has this name; `existingTagId` names it.',
  not_deleted: 'Restore (`POST /<resource>/:id/restore`) of a record that is not deleted.',
  stage_invalid: "The `stageId` does not belong to the deal's pipeline.",
  list_kind_mismatch: 'Dynamic lists are read-only through the API: members are added and removed only on static lists.',
  delivery_in_progress: 'An attempt of this delivery is running; retry when it ends.',
  concurrent_update: 'Another request changed the same records at the same moment; retry after `Retry-After`.',
  idempotency_key_in_use: 'A request with this `Idempotency-Key` is still running; retry after `Retry-After`.',
  payload_too_large: 'The body is over 1 MiB.',
  unsupported_media_type: 'The body must be sent as `Content-Type: application/json`.',
  business_rule_violation: 'The change breaks a business rule (a deal both won and lost, a stage of another pipeline); the message says which.',
  idempotency_key_reused: 'This `Idempotency-Key` was used with another method, path or body; use a new key for a new request.',
  rate_limit_exceeded: 'The key used its calls of the current minute; wait for `X-RateLimit-Reset`.',
  too_many_concurrent_queries: 'Too many of your queries are waiting; retry after `Retry-After`.',
  too_many_waiting_requests: 'Too many long-polls of `GET /events` are waiting; let one return first.',
  internal_error: 'An unexpected failure; the body carries `requestId` for support.',
  query_timeout: 'The query ran past its deadline and was stopped; narrow the filter or the page, retry after `Retry-After`.',
  database_unavailable: 'The database did not answer in time; retry after `Retry-After`.',
  query_abandoned: 'The client closed the connection, so its query was stopped (nobody reads this answer).',
  request_timeout: 'The request did not arrive in full in time (a stalled upload); send it again.',
  webhook_inactive: 'The webhook is inactive: activate it (`PATCH` with `isActive: true`) before retrying its deliveries.',
  request_header_fields_too_large: 'The request line or headers are too large.',
};

/** Words written in capitals in a code's title. */
const ACRONYMS = new Set(['json', 'url', 'api', 'cnpj']);

/**
 * The heading of an error code: its words, as a title (`invalid_api_key` → "Invalid API key"). Scalar's sidebar
 * reads `_…_` in a heading as emphasis, so the code itself cannot be the heading; the title's anchor is the
 * code with hyphens (`#description/invalid-api-key`), the same in the sidebar and on the page.
 */
export function errorTitle(code: string): string {
  const words = code.split('_').map((w) => (ACRONYMS.has(w) ? w.toUpperCase() : w));
  return words.join(' ').replace(/^./, (c) => c.toUpperCase());
}

const errorsSection = (): string =>
  Object.entries(ERROR_CODES)
    .map(([code, status]) => `### ${errorTitle(code)}\n\n\`${code}\` · **${status}** — ${ERROR_EXPLANATIONS[code] ?? ''}`)
    .join('\n\n');

/**
 * The reference's introduction: one `##` section per guide, written for integrators. Scalar makes each
 * `##` heading an entry of its sidebar (and each `###` a child of it) when the description starts with a
 * heading; otherwise they all fold under one "Introduction" entry. It names no server setting: what an
 * operator may tune is said as "a deadline", "the key's rate limit".
 */
const DESCRIPTION = `## Introduction

The CRM's public REST API: contacts, companies, deals and everything around them, as JSON over
HTTPS. Every path starts with \`/api/v1\`. A TypeScript SDK (\`@crm/sdk\`) wraps every operation below; its
example is the first of each operation's request examples.

## Authentication

Every call carries an API key in the \`X-API-Key\` header:

\`\`\`sh
curl -H "X-API-Key: crm_live_…" "$BASE/api/v1/contacts"
\`\`\`

A key (\`crm_live_\` and 32 or more letters and digits) sees one tenant's data, limited by its scopes. Scopes are
literal (\`write\` does not imply \`read\`); \`*\` covers every scope, present and future:
${SCOPES.map((s) => `\`${s}\``).join(', ')}. Each operation names the scope it requires. A missing key answers
401 \`missing_api_key\`; an unknown, revoked or expired one 401 \`invalid_api_key\`; a key without the scope
403 \`insufficient_scope\`. A revoked key stops working within 5 seconds.

## Errors

Every error is JSON \`{ "error": "<code>", "message": "…", "docUrl": "/docs#description/<code>" }\`, sometimes with
more fields; \`docUrl\` links the code's entry below. Branch on \`error\`, show \`message\`. A 400
\`validation_failed\` names every invalid field of the request in \`details: [{ field, message }]\`, not only the
first. Every response carries \`X-Request-Id\`: quote it when you ask for help. Codes with \`Retry-After\` may be
retried after that many seconds.

${errorsSection()}

## Pagination and sync

Lists answer \`{ data, pagination }\` with \`page\`, \`pageSize\` (default 50, at most 100), \`total\`, \`totalPages\`,
\`hasNext\`, \`hasPrev\` and \`nextCursor\`. To walk a whole list, send \`cursor=<nextCursor>\` (and the same other
parameters) instead of \`page\` until \`nextCursor\` is \`null\`: every record that existed and did not change during
the walk comes exactly once, and page 10,000 is as fast as page 1. Webhook deliveries give their next page in a
\`Link\` header instead. The SDK's \`paginate\` follows both.

To keep a copy in sync, list with \`updatedAfter=<last updatedAt you saw>&sortKey=updatedAt&sortOrder=asc\`, and add
\`includeDeleted=true\` to see deletions (with \`deletedAt\`). Or follow the event log (below).

## Rate limits

Each key has its own rate limit: by default 100 calls per minute, in a fixed 60-second window that starts with its
first call. Every authenticated answer carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\`; past the limit, 429 \`rate_limit_exceeded\`. A batch call (up to 100 records) counts once.

Queries whose cost depends on the data (list pages, search, filters, totals) have a deadline: past it the query is
stopped and the call answers 503 \`query_timeout\` with \`Retry-After: 1\`; narrow the filter or the page. So that no
tenant can slow another, each tenant has a fair share of the server: when too many of its queries are waiting, the
next ones get 429 \`too_many_concurrent_queries\` with \`Retry-After: 1\`.

## Idempotency

Every \`POST\` that changes data accepts an \`Idempotency-Key\` header (1–255 visible ASCII characters, a UUID for
example), so that a retry never applies a change twice. The first request runs; its status and body are kept for
24 hours, and a repeat answers them again with \`Idempotent-Replayed: true\`, changing nothing. The same key with
another method, path or body is 422 \`idempotency_key_reused\`; a repeat while the first is still running is 409
\`idempotency_key_in_use\` with \`Retry-After: 1\`. Requests refused before they ran (400, 401, 403, 429) and 5xx
answers are not kept, so a corrected retry with the same key runs. The SDK sends a key with every such \`POST\`.

## Webhooks and the event log

Every change is recorded as an event, in the same transaction as the change: \`contact.created\`, \`deal.won\`,
\`company.deleted\`… (the catalogue: \`GET /webhooks/event-types\`; each event's body: under Webhook events).
\`*.updated\` events carry \`data.changes\` (the changed fields) and \`data.previous\` (their values before).

- **Webhooks** push events to your \`https://\` URL, at least once and in no guaranteed order, with up to 5 attempts
  spread over about 2.5 hours. Each delivery carries the Standard Webhooks headers \`webhook-id\` (the event's id:
  deduplicate on it), \`webhook-timestamp\` and \`webhook-signature\`, signed with the webhook's \`whsec_…\` secret:
  verify them with the SDK's \`verifyWebhook\` or any Standard Webhooks library. During development, the SDK's
  \`listen\` command forwards events to a local \`http://localhost\` receiver, signed the same way.
- **The event log** (\`GET /events\`) lists the same events, oldest first, for 30 days. Pass \`after=<last event id>\`
  to continue, and \`wait=<seconds>\` (up to 30) to long-poll: the call returns as soon as an event arrives.

## Versioning

This is version 1 of the API: every path starts with \`/api/v1\`. Within it, changes are additive only: new
operations, new optional parameters, new fields in answers and new event types may appear, so ignore fields you do
not know. A change that could break an integration comes with a new version prefix.`;

/** What the reference page shows for the API key until the reader types their own. */
export const KEY_PLACEHOLDER = 'crm_live_…';

/** The placeholder Scalar's script puts in an empty API key field (replaced by KEY_PLACEHOLDER). */
const SCALAR_KEY_PLACEHOLDER = 'QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT';

/**
 * Scalar's generated clients hidden from the page (by target, `true` for all of one): what stays is curl,
 * Node's fetch, Python's requests, Ruby, PHP's Guzzle, Go, Java's HttpClient and C#'s HttpClient.
 */
const HIDDEN_CLIENTS = {
  c: true,
  clojure: true,
  dart: true,
  fsharp: true,
  http: true,
  js: true,
  julia: true,
  kotlin: true,
  objc: true,
  ocaml: true,
  powershell: true,
  r: true,
  rust: true,
  swift: true,
  shell: ['httpie', 'wget'],
  node: ['axios', 'ofetch', 'undici'],
  python: ['python3', 'aiohttp', 'httpx_sync', 'httpx_async'],
  php: ['curl', 'laravel'],
  java: ['asynchttp', 'nethttp', 'okhttp', 'unirest'],
  csharp: ['restsharp'],
};

/** The reference's sections, in the spec's order, then what the API adds (CONTRACT Part C). */
const TAGS = [
  ['Contacts', 'People: create, read, update, delete, search, batch operations.'],
  ['Companies', 'Organizations, unique by CNPJ and by domain.'],
  ['Deals', "Opportunities moving through a pipeline's stages."],
  ['Activities', 'Calls, meetings, e-mails, notes and tasks, linked to contacts, companies and deals.'],
  ['Tags', 'Labels shared by contacts, companies and deals.'],
  ['Lists', 'Static and dynamic lists of contacts or companies.'],
  ['Proposals', 'Commercial proposals of a deal and their status.'],
  ['Pipelines', 'Pipelines and their stages (read-only).'],
  ['Properties', 'Custom property definitions (read-only).'],
  ['Forms', 'Forms and their submissions (read-only); the public intake is under Public form intake.'],
  ['Webhooks', 'Webhook subscriptions, their deliveries, retries and health. The payload of each event is under Webhook events.'],
  ['Events', 'The event log: every change, in order, with long-polling.'],
  ['Audit log', 'Who changed what: every change, by an API key, a public form, the operator or the service, field names only.'],
  ['Reference data', 'Users and loss reasons, to fill ids.'],
  ['Public form intake', 'The public form page and its submission, without an API key.'],
  ['Service', 'Where the documentation lives.'],
  ['Webhook events', 'The request each event sends to a subscribed webhook: headers, signature and body.'],
].map(([name, description]) => ({ name, description }));

/**
 * Error bodies link `/docs#description/<code>` (errorDocUrl), with the code's underscores; Scalar anchors a
 * heading by its slug, with hyphens. This script, first in the page, turns the one into the other before
 * Scalar reads the address (and on every later change of it, before Scalar's own listener).
 */
const CODE_ANCHORS = `<script>(function () {
  var alias = function () {
    var m = /^#description\\/([a-z0-9_]+)$/.exec(location.hash);
    if (!m || m[1].indexOf('_') < 0) return false;
    history.replaceState(history.state, '', '#description/' + m[1].replace(/_/g, '-'));
    return true;
  };
  alias();
  // A later change of the address (popstate, then hashchange) reaches Scalar rewritten: the event that
  // carried the old form stops here and one with the new form follows.
  addEventListener('popstate', function (e) {
    if (!alias()) return;
    e.stopImmediatePropagation();
    dispatchEvent(new PopStateEvent('popstate', { state: history.state }));
  });
  addEventListener('hashchange', function (e) {
    if (!alias() && e.newURL === location.href) return;
    e.stopImmediatePropagation();
    dispatchEvent(new HashChangeEvent('hashchange', { oldURL: e.oldURL, newURL: location.href }));
  });
})();</script>`;

/** Scalar's answers patched once each (they are the same bytes on every request), by ETag and length. */
const patched = new Map<string, Buffer>();

/**
 * Scalar's answer as the page serves it: its page with CODE_ANCHORS first in the head; its script with our
 * API key placeholder instead of its own (a base64 joke) in an empty key field. Anything else as it is.
 */
function patchReference(page: { headers: Record<string, unknown>; rawPayload: Buffer }): Buffer {
  const type = String(page.headers['content-type'] ?? '');
  const edit = type.includes('javascript')
    ? (text: string) => text.replaceAll(SCALAR_KEY_PLACEHOLDER, KEY_PLACEHOLDER)
    : type.includes('text/html')
      ? (text: string) => text.replace('<head>', `<head>\n${CODE_ANCHORS}`)
      : undefined;
  if (!edit) return page.rawPayload;
  const key = `${type}:${String(page.headers.etag ?? '')}:${page.rawPayload.length}`;
  let body = patched.get(key);
  if (!body) {
    body = Buffer.from(edit(page.rawPayload.toString('utf8')), 'utf8');
    if (patched.size >= 16) patched.clear();
    patched.set(key, body);
  }
  return body;
}

export const openapiPlugin = fp<OpenApiOptions>(
  async (app, opts) => {
    app.addSchema(ErrorBody);
    // Every public API route shares these answers; adding them here keeps route files to what is their own.
    app.addHook('onRoute', addSharedAnswers);
    await app.register(swagger, swaggerOptions(opts));
    const serveReference = referenceServer(app);
    const hidden = { config: { public: true }, schema: { hide: true }, logLevel: 'silent' as const };
    app.get('/docs', hidden, serveReference);
    app.get('/docs/*', hidden, serveReference);
    app.get('/api/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);

/** The answers every public API route shares (401, 403, 429, 500, 503), by status. */
const SHARED_ANSWERS: Record<number, string> = {
  401: 'Missing or invalid API key',
  403: 'Insufficient scope',
  429: "`rate_limit_exceeded` (the key's rate limit), or `too_many_concurrent_queries` (too many of the tenant's queries waiting)",
  500: 'Unexpected failure',
  503: '`query_timeout`: a data-dependent query ran past its deadline and was stopped, or a large body waited that long for its turn; `database_unavailable`: the database did not answer in time',
};

/** A public API route's documentation: the shared answers, its scopes (`x-scopes`, and a description saying them when it has none). */
function addSharedAnswers(route: RouteOptions): void {
  if (!route.url.startsWith('/api/v1/') || route.config?.public) return;
  const schema = (route.schema ??= {});
  const response = ((schema as any).response ??= {}) as Record<string, unknown>;
  for (const status of [401, 403, 429, 500, 503]) response[status] ??= { $ref: 'Error#', description: SHARED_ANSWERS[status] };
  const scopes = route.config?.scopes ?? [];
  if (scopes.length && !(schema as any).description) (schema as any).description = `Requires scope \`${scopes.join('`, `')}\`.`;
  (schema as any)['x-scopes'] = scopes;
}

function swaggerOptions(opts: OpenApiOptions): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: { ...API_INFO, description: DESCRIPTION },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Your API key: `crm_live_…`' } },
      },
      security: [{ ApiKey: [] }],
      // The reference page lists the sections in this order: the spec's, then what the API adds.
      tags: TAGS,
      ...(opts.webhooks ? { webhooks: opts.webhooks } : {}),
    } as any,
    refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
    hideUntagged: false,
    // Each operation's SDK example (lang `typescript`, label `SDK`), shown by Scalar beside its curl; the
    // operations in the order List, Create, Get, Update, Delete; example answers; no narrowing pre-fills.
    transformObject: (document) => prepareReference(addSdkCodeSamples((document as { openapiObject: Record<string, any> }).openapiObject)),
  };
}

/** The handler of the reference pages (/docs), answered by Scalar's own instance, loaded at the first request. */
function referenceServer(app: FastifyInstance): (req: FastifyRequest, reply: FastifyReply) => Promise<Buffer> {
  // NOTE: the reference page is Scalar, served from its npm package (its script is bundled in it): no
  // CDN, no web fonts, no telemetry, no hosted API client, and no CSP that upgrades requests to HTTPS,
  // so it renders over plain HTTP from any host name (test/e2e/docs-browser.test.ts).
  // Its module holds that script: loading it costs the process ~40 MiB (20 MiB of heap), which most
  // servers never use. So it is loaded on the first request for /docs, into a Fastify instance of its own
  // that the /docs routes answer through (`inject`), with the document this one generated.
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
        // The SDK's example (x-codeSamples) heads the client list, then a few common clients, not forty.
        hiddenClients: HIDDEN_CLIENTS,
        // "Test Request" and the examples show a key of the right shape, not Scalar's own placeholder.
        authentication: { preferredSecurityScheme: 'ApiKey', securitySchemes: { ApiKey: { value: KEY_PLACEHOLDER } } },
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
      if (value !== undefined && !['connection', 'transfer-encoding', 'keep-alive', 'date', 'content-length'].includes(name)) reply.header(name, value);
    }
    reply.code(page.statusCode);
    return patchReference(page);
  };
  return serveReference;
}
