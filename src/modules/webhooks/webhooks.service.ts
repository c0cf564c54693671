import { randomUUID } from 'node:crypto';
import { withTx, type Db } from '../../db/index.js';
import { normalizeIsoDateTime } from '../../domain/dates.js';
import { errors, FieldChecks, fieldRule } from '../../errors.js';
import { EVENT_KEYS, EVENT_TYPES, TEST_EVENT } from '../../events/catalog.js';
import * as deliveries from '../../events/deliveries.js';
import type { EventPayload } from '../../events/outbox.js';
import { recordAudit } from '../audit/audit.service.js';
import type { Ctx } from '../../http/context.js';
import type { ValueRules } from '../../http/validation.js';
import { pageRequestOf } from '../../http/pagination.js';
import { decryptSecret, encryptSecret, newWebhookSecret, SecretDecryptError, webhookSecretHint } from '../../util/crypto.js';
import { newId } from '../../util/ids.js';
import { parseJson } from '../../util/json.js';
import { nowIso } from '../../util/time.js';
import { deliveryDispatcher } from './webhooks.network.js';
import * as repo from './webhooks.repo.js';
import { rowsPage } from '../../listing/planner.js';
import { makeAttempt, MAX_ATTEMPTS, recordAttempt } from './webhooks.attempts.js';
import * as queue from './webhooks.queue.js';
import type { DeliveriesQueryT, DeliveryT, RecoverBodyT, TestResultT, WebhookCreateT, WebhookT, WebhookUpdateT } from './webhooks.schema.js';
import { sendAttempt } from './webhooks.sender.js';
import { isLegacyHeaders, MASKED_HEADER_VALUE, openHeaders, sealHeaders, secretAad, toDelivery, toWebhook } from './webhooks.presenter.js';

export { openHeaders, secretAad, toDelivery, toWebhook } from './webhooks.presenter.js';

export const MAX_URL_LENGTH = 2048;

/**
 * Encrypts the custom headers of rows written before they were encrypted. Run at start by `serve` and
 * `worker` (migrations get no config, so no key); several processes may run it at once: each update
 * applies only while the row still holds the plaintext it read.
 */
export async function sealLegacyHeaders(db: Db, key: Buffer): Promise<number> {
  const rows = await db.selectFrom('webhooks').select(['tenant_id', 'id', 'headers']).where('headers', 'like', '{%').execute();
  let sealed = 0;
  for (const r of rows) {
    const headers = parseJson<Record<string, string>>(r.headers, {});
    const u = await db
      .updateTable('webhooks')
      .set({ headers: sealHeaders(key, r.tenant_id, r.id, headers) })
      .where('tenant_id', '=', r.tenant_id)
      .where('id', '=', r.id)
      .where('headers', '=', r.headers)
      .executeTakeFirst();
    sealed += Number(u.numUpdatedRows);
  }
  return sealed;
}

// ---- validation of the fields the schema cannot judge (CONTRACT B.9) ----

function cleanName(name: string): string {
  const n = name.trim();
  if (!n) throw errors.field('name', 'must not be blank');
  return n;
}

/**
 * The value rules of a webhook body (C.5), run on a body whose shape is refused too. The URL is not
 * among them: a bad one is the spec's own 400 `invalid_url`, answered alone.
 */
export const WEBHOOK_VALUE_RULES = { name: (v: string) => cleanName(v), headers: (v: Record<string, string>) => checkHeaders(v) } satisfies ValueRules;

/**
 * Deliveries go to `https://` only; for a receiver on a developer's machine the SDK's `listen` command
 * follows the event log and delivers, signed the same way, to any local URL.
 */
const LISTEN_HINT = (target: string) =>
  `to receive webhooks on localhost during development, run \`npx crm-listen --key <key> --forward-to ${target}\` ` +
  `(\`npm run crm -- listen …\` in the service's repository): it forwards the event log as signed deliveries`;

/** A present URL must be an absolute `https://` URL with a host; anything else is 400 `invalid_url`. */
export function checkUrl(url: string): string {
  // NOTE: B.9 — the private-network rule is applied at delivery time (DNS can change), not here.
  if (url.length === 0 || url.length > MAX_URL_LENGTH) throw errors.invalidUrl(`must be an https:// URL of 1 to ${MAX_URL_LENGTH} characters`);
  if (/[\s\x00-\x1f\x7f]/.test(url)) throw errors.invalidUrl('must not contain spaces or control characters');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw errors.invalidUrl('is not a valid URL');
  }
  if (u.protocol !== 'https:') throw errors.invalidUrl(`must use https://; ${LISTEN_HINT(u.protocol === 'http:' ? url : 'http://localhost:4000/hooks')}`);
  if (!u.hostname) throw errors.invalidUrl('must name a host');
  if (u.username || u.password) throw errors.invalidUrl('must not carry credentials; send them in `headers` instead');
  return url;
}

/** Known keys only (400 `invalid_event` naming the item), duplicates dropped, order kept. */
export function checkEvents(events: string[]): string[] {
  events.forEach((key, i) => {
    if (!EVENT_KEYS.has(key)) {
      throw errors.invalidEvent(i, key);
    }
  });
  return [...new Set(events)];
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$/;
const HEADER_VALUE = /^[\t\x20-\x7e]{0,2048}$/;
// The delivery's own headers, and hop-by-hop headers the HTTP client manages itself.
const RESERVED_HEADERS = new Set([
  'content-type',
  'user-agent',
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);

export function checkHeaders(headers: Record<string, string>): Record<string, string> {
  const seen = new Set<string>();
  const issues: { field: string; message: string }[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const field = `headers.${name}`;
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) issues.push({ field, message: 'is not a valid HTTP header name' });
    else if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-service-') || lower.startsWith('webhook-')) {
      issues.push({ field, message: 'is reserved for the delivery itself and cannot be set' });
    } else if (seen.has(lower)) issues.push({ field, message: 'is given twice (header names are case-insensitive)' });
    else if (value === MASKED_HEADER_VALUE) {
      issues.push({ field, message: 'is the masked value that reads show; send the real value (headers are replaced as a whole)' });
    } else if (!HEADER_VALUE.test(value)) issues.push({ field, message: 'must be at most 2048 printable ASCII characters' });
    seen.add(lower);
  }
  if (issues.length) throw errors.validation(issues);
  return { ...headers };
}

// ---- operations (spec 4.11) ----

export function listEventTypes() {
  return EVENT_TYPES.map((e) => ({ key: e.key, label: e.label, objectType: e.objectType }));
}

export async function listWebhooks(ctx: Ctx): Promise<WebhookT[]> {
  return (await repo.listWebhooks(ctx.db, ctx.tenantId)).map((r) => toWebhook(ctx.config.secretKey(), r));
}

async function mustFind(ctx: Ctx, id: string): Promise<repo.WebhookRow> {
  const row = await repo.findWebhook(ctx.db, ctx.tenantId, id);
  if (!row) throw errors.notFound('Webhook not found');
  return row;
}

export async function getWebhook(ctx: Ctx, id: string): Promise<WebhookT> {
  return toWebhook(ctx.config.secretKey(), await mustFind(ctx, id));
}

/** 201 with the full secret, the only time besides rotation that it is shown. */
export async function createWebhook(ctx: Ctx, input: WebhookCreateT): Promise<WebhookT> {
  const checks = new FieldChecks();
  const name = checks.check('name', () => cleanName(input.name));
  const url = checks.check('url', () => checkUrl(input.url));
  const events = checks.check('events', () => checkEvents(input.events));
  const headers = checks.check('headers', () => checkHeaders(input.headers ?? {}));
  checks.assert();
  const id = newId('whk');
  const secret = newWebhookSecret();
  const now = nowIso();
  const row: repo.WebhookRow = {
    tenant_id: ctx.tenantId,
    id,
    name,
    url,
    events: JSON.stringify(events),
    is_active: input.isActive === false ? 0 : 1,
    headers: sealHeaders(ctx.config.secretKey(), ctx.tenantId, id, headers),
    secret_enc: encryptSecret(ctx.config.secretKey(), secret, secretAad(ctx.tenantId, id)),
    secret_prefix: webhookSecretHint(secret),
    failing_since: null,
    disabled_reason: null,
    created_at: now,
    updated_at: now,
  };
  const webhook = toWebhook(ctx.config.secretKey(), row, secret);
  await withTx(ctx.db, async (tx) => {
    await repo.insertWebhook(tx, row);
    await recordAudit(tx, ctx, { action: 'webhook.created', objectType: 'webhook', objectId: id, changes: Object.keys(input).filter((k) => k !== 'secret') });
  });
  return webhook;
}

export async function updateWebhook(ctx: Ctx, id: string, input: WebhookUpdateT): Promise<WebhookT> {
  const set: Partial<repo.WebhookRow> = {};
  const checks = new FieldChecks();
  if (input.name !== undefined) set.name = checks.check('name', () => cleanName(input.name!));
  if (input.url !== undefined) set.url = checks.check('url', () => checkUrl(input.url!));
  if (input.events !== undefined) set.events = checks.check('events', () => JSON.stringify(checkEvents(input.events!)));
  const headers = input.headers === undefined ? undefined : checks.check('headers', () => checkHeaders(input.headers!));
  checks.assert();
  if (headers !== undefined) set.headers = sealHeaders(ctx.config.secretKey(), ctx.tenantId, id, headers);
  if (input.isActive !== undefined) set.is_active = input.isActive ? 1 : 0;
  // NOTE: C.4 — turning a webhook on (again) starts its health afresh: no reason, no failing streak.
  if (input.isActive === true) Object.assign(set, { disabled_reason: null, failing_since: null });
  if (Object.keys(set).length === 0) return getWebhook(ctx, id);
  const now = nowIso();
  set.updated_at = now;
  return withTx(ctx.db, async (tx) => {
    if (!(await repo.updateWebhook(tx, ctx.tenantId, id, set))) throw errors.notFound('Webhook not found');
    await recordAudit(tx, ctx, { action: 'webhook.updated', objectType: 'webhook', objectId: id, changes: Object.keys(input) });
    // NOTE: B.9 — deactivating stops the webhook at once: deliveries waiting for a first attempt or a
    // retry end as permanent_failure ("webhook deactivated") and are never sent, even after reactivation.
    if (input.isActive === false) await deliveries.cancelWaitingDeliveries(tx, ctx.tenantId, id, 'webhook deactivated', now);
    const row = (await repo.findWebhook(tx, ctx.tenantId, id))!;
    if (isLegacyHeaders(row.headers)) {
      // A row from before headers were encrypted, missed by the start-up pass: sealed on its first write.
      row.headers = sealHeaders(ctx.config.secretKey(), ctx.tenantId, id, parseJson<Record<string, string>>(row.headers, {}));
      await repo.updateWebhook(tx, ctx.tenantId, id, { headers: row.headers });
    }
    return toWebhook(ctx.config.secretKey(), row);
  });
}

/** Removes the webhook and its delivery history; nothing more is sent for it (scheduled retries included). */
export async function deleteWebhook(ctx: Ctx, id: string): Promise<void> {
  await withTx(ctx.db, async (tx) => {
    if (!(await repo.deleteWebhook(tx, ctx.tenantId, id))) throw errors.notFound('Webhook not found');
    await deliveries.deleteDeliveriesOf(tx, ctx.tenantId, id);
    await recordAudit(tx, ctx, { action: 'webhook.deleted', objectType: 'webhook', objectId: id });
  });
}

/** A new secret, shown once; the next attempt of every delivery is signed with it. */
export async function rotateSecret(ctx: Ctx, id: string): Promise<WebhookT> {
  const row = await mustFind(ctx, id);
  const secret = newWebhookSecret();
  const set = {
    secret_enc: encryptSecret(ctx.config.secretKey(), secret, secretAad(ctx.tenantId, id)),
    secret_prefix: webhookSecretHint(secret),
    updated_at: nowIso(),
  };
  await withTx(ctx.db, async (tx) => {
    if (!(await repo.updateWebhook(tx, ctx.tenantId, id, set))) throw errors.notFound('Webhook not found');
    await recordAudit(tx, ctx, { action: 'webhook.secret_rotated', objectType: 'webhook', objectId: id, changes: ['secret'] });
  });
  return toWebhook(ctx.config.secretKey(), { ...row, ...set }, secret);
}

/** One page of the delivery history (C.1, C.4): newest first; `nextCursor` goes into the `Link` header. */
export async function listDeliveries(ctx: Ctx, id: string, q: DeliveriesQueryT, keyId = ''): Promise<{ data: DeliveryT[]; nextCursor: string | null }> {
  const req = pageRequestOf(q, 'limit');
  const hook = await mustFind(ctx, id);
  const filters: repo.DeliveryFilter = { status: q.status, event: q.event };
  const { data: rows, pagination } = await rowsPage<repo.DeliveryRow, repo.DeliveryFilter & { webhookId: string }, 'createdAt'>(ctx, repo.DELIVERY_LISTING, {
    ...req,
    sortKey: 'createdAt',
    order: 'desc',
    filters: { ...filters, webhookId: hook.id },
    boundFilters: filters,
    keyId,
    endpoint: `GET /webhooks/${hook.id}/deliveries`,
  });
  return { data: rows.map(toDelivery), nextCursor: pagination.nextCursor };
}

/** An inactive webhook sends nothing (B.9): retry and recover need it active. */
function mustBeActive(row: repo.WebhookRow): void {
  if (row.is_active !== 1) {
    throw errors.conflict(
      'webhook_inactive',
      row.disabled_reason
        ? `The webhook was deactivated (${row.disabled_reason}); activate it with PATCH { "isActive": true } first`
        : 'The webhook is inactive; activate it with PATCH { "isActive": true } first',
    );
  }
}

/**
 * POST /webhooks/:id/deliveries/:deliveryId/retry (C.4): one more attempt now, made and awaited by this
 * process, whatever the delivery's status (a delivered one is sent again). The result is appended to the
 * same delivery (`attempts` grows) through the worker's own record step, so scheduling and endpoint health
 * follow the same rules: a waiting delivery keeps its automatic attempts (this one is extra); an ended one
 * that fails again stays `permanent_failure`.
 */
export async function retryDelivery(ctx: Ctx, id: string, deliveryId: string): Promise<DeliveryT> {
  const hook = await mustFind(ctx, id);
  const found = await repo.findDelivery(ctx.db, ctx.tenantId, hook.id, deliveryId);
  if (!found) throw errors.notFound('Delivery not found');
  mustBeActive(hook);
  const now = Date.now();
  const owner = `retry.${randomUUID()}`;
  const leased = await deliveries.leaseForRetry(
    ctx.db,
    { ...found, tenant_id: ctx.tenantId },
    {
      owner,
      now: new Date(now).toISOString(),
      leaseUntil: new Date(now + ctx.config.webhookTimeoutMs + 10_000).toISOString(),
      maxAttempts: MAX_ATTEMPTS,
    },
  );
  if (!leased) {
    throw errors.conflict(
      'delivery_in_progress',
      'An attempt of this delivery is being made right now; see its result in the delivery history, or retry after it',
    );
  }
  const context = (await queue.loadAttemptContexts(ctx.db, [leased])).get(leased.id);
  if (!context?.webhook || context.payload === undefined) {
    await deliveries.releaseDelivery(ctx.db, leased, owner);
    throw errors.notFound('Delivery not found (its webhook or event is gone)');
  }
  const dispatcher = deliveryDispatcher({ allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks, timeoutMs: ctx.config.webhookTimeoutMs });
  const result = await makeAttempt(ctx.config, leased, context.webhook, context.payload, dispatcher);
  await withTx(ctx.db, async (tx) => {
    await recordAttempt(tx, ctx.config, leased, owner, result);
    await recordAudit(tx, ctx, { action: 'webhook.delivery_retried', objectType: 'webhook', objectId: id, changes: ['deliveries'] });
  });
  const after = await repo.findDelivery(ctx.db, ctx.tenantId, hook.id, deliveryId);
  if (!after) throw errors.notFound('Delivery not found'); // the webhook was deleted meanwhile
  return toDelivery(after);
}

/**
 * POST /webhooks/:id/recover { since } (C.4): every `permanent_failure` delivery of the webhook created at
 * or after `since` is due again now, with MAX_ATTEMPTS more automatic attempts (a fresh cycle of
 * WEBHOOK_RETRY_DELAYS); `attempts` keeps counting. The worker makes the attempts.
 */
export async function recoverDeliveries(ctx: Ctx, id: string, body: RecoverBodyT): Promise<{ scheduled: number }> {
  const since = fieldRule('since', () => normalizeIsoDateTime(body.since));
  const hook = await mustFind(ctx, id);
  mustBeActive(hook);
  const scheduled = await withTx(ctx.db, async (tx) => {
    const n = await deliveries.recoverFailed(tx, ctx.tenantId, hook.id, since, nowIso(), MAX_ATTEMPTS);
    if (n > 0) await recordAudit(tx, ctx, { action: 'webhook.deliveries_recovered', objectType: 'webhook', objectId: id, changes: ['deliveries'] });
    return n;
  });
  if (scheduled > 0) await deliveries.wakeWorkers(ctx.db);
  return { scheduled };
}

/**
 * One attempt now with the `webhook.test` event (B.9), made by this process whatever `isActive` says,
 * and recorded in the delivery history as `delivered` or `permanent_failure` (a test is never retried).
 */
export async function testWebhook(ctx: Ctx, id: string): Promise<TestResultT> {
  const row = await mustFind(ctx, id);
  const webhook = toWebhook(ctx.config.secretKey(), row);
  const secret = decryptSecret(ctx.config.secretKey(), row.secret_enc, secretAad(ctx.tenantId, id));
  const customHeaders = openHeaders(ctx.config.secretKey(), ctx.tenantId, id, row.headers);
  const eventId = newId('evt');
  const created = nowIso();
  const payload: EventPayload = {
    event: TEST_EVENT,
    tenantId: ctx.tenantId,
    timestamp: created,
    data: { webhook: { id: webhook.id, name: webhook.name, url: webhook.url, events: webhook.events, isActive: webhook.isActive } },
  };
  const body = JSON.stringify(payload);
  const result = await sendAttempt({
    url: row.url,
    secret,
    customHeaders,
    eventId,
    event: TEST_EVENT,
    body: Buffer.from(body, 'utf8'),
    timeoutMs: ctx.config.webhookTimeoutMs,
    dispatcher: deliveryDispatcher({ allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks, timeoutMs: ctx.config.webhookTimeoutMs }),
  });
  const deliveryId = newId('dlv');
  const end = result.endedAt.toISOString();
  await withTx(ctx.db, async (tx) => {
    if (!(await repo.findWebhook(tx, ctx.tenantId, id))) return; // deleted meanwhile: its history is gone too
    await repo.insertEvent(tx, { tenant_id: ctx.tenantId, id: eventId, type: TEST_EVENT, payload: body, created_at: created });
    await deliveries.insertDeliveries(tx, [
      {
        tenant_id: ctx.tenantId,
        id: deliveryId,
        webhook_id: id,
        event_id: eventId,
        event: TEST_EVENT,
        status: result.success ? 'delivered' : 'permanent_failure',
        status_code: result.statusCode,
        response_snippet: result.responseSnippet,
        duration_ms: result.durationMs,
        attempts: 1,
        last_error: result.error ?? null,
        next_attempt_at: null,
        delivered_at: result.success ? end : null,
        lease_owner: null,
        lease_until: null,
        created_at: created,
        updated_at: end,
      },
    ]);
  });
  return {
    deliveryId,
    success: result.success,
    statusCode: result.statusCode,
    durationMs: result.durationMs,
    responseSnippet: result.responseSnippet,
    ...(result.error ? { error: result.error } : {}),
  };
}
