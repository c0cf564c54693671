import { decryptSecret, encryptSecret, SecretDecryptError } from '../../util/crypto.js';
import { parseJson } from '../../util/json.js';
import type { WebhookRow, DeliveryRow } from './webhooks.repo.js';
import type { DeliveryT, WebhookT } from './webhooks.schema.js';

/**
 * Webhook rows as the API shows them, and their secrets at rest. Shared by the service (requests) and the
 * delivery worker, which must not import a service for a helper (STYLE "Small named steps").
 */

/** Additional data bound to a stored secret: it decrypts only in its own webhook row. */
export const secretAad = (tenantId: string, webhookId: string) => `webhook:${tenantId}:${webhookId}`;

/** A different binding from the secret's, so neither ciphertext decrypts in the other's column. */
export const headersAad = (tenantId: string, webhookId: string) => `webhook-headers:${tenantId}:${webhookId}`;

/**
 * Custom headers at rest (often `Authorization` tokens): the JSON object encrypted like the secret, so
 * the column holds `v1.…` (the crypto helper's versioned form). Rows written before this hold the
 * JSON object itself, which always starts with `{`; both are read, and sealLegacyHeaders converts them.
 */
export function sealHeaders(key: Buffer, tenantId: string, webhookId: string, headers: Record<string, string>): string {
  return encryptSecret(key, JSON.stringify(headers), headersAad(tenantId, webhookId));
}

export const isLegacyHeaders = (stored: string) => stored.trimStart().startsWith('{');

/** The custom headers of a row; throws SecretDecryptError when CRM_SECRET_KEY cannot open them. */
export function openHeaders(key: Buffer, tenantId: string, webhookId: string, stored: string): Record<string, string> {
  if (isLegacyHeaders(stored)) return parseJson<Record<string, string>>(stored, {});
  return parseJson<Record<string, string>>(decryptSecret(key, stored, headersAad(tenantId, webhookId)), {});
}

function readableHeaders(key: Buffer, r: WebhookRow): Record<string, string> {
  try {
    return openHeaders(key, r.tenant_id, r.id, r.headers);
  } catch (err) {
    // A changed CRM_SECRET_KEY: the webhook stays readable (and its deliveries fail, saying why).
    if (err instanceof SecretDecryptError) return {};
    throw err;
  }
}

/** What every read shows in place of a custom header's value (C.5). */
export const MASKED_HEADER_VALUE = '••••';

/**
 * NOTE: C.5 — header values are write-only after creation, like the secret: reads show each name with
 * its value masked (values are often `Authorization` tokens). Deliveries open the real values themselves.
 */
function maskedHeaders(key: Buffer, r: WebhookRow): Record<string, string> {
  return Object.fromEntries(Object.keys(readableHeaders(key, r)).map((name) => [name, MASKED_HEADER_VALUE]));
}

export function toWebhook(key: Buffer, r: WebhookRow, fullSecret?: string): WebhookT {
  return {
    id: r.id,
    name: r.name,
    url: r.url,
    events: parseJson<string[]>(r.events, []),
    isActive: r.is_active === 1,
    disabledReason: r.disabled_reason ?? null,
    headers: maskedHeaders(key, r),
    secret: fullSecret ?? r.secret_prefix,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function toDelivery(r: DeliveryRow): DeliveryT {
  return {
    id: r.id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    event: r.event,
    status: r.status as DeliveryT['status'],
    statusCode: r.status_code,
    responseSnippet: r.response_snippet,
    durationMs: r.duration_ms,
    attempts: r.attempts,
    ...(r.last_error ? { lastError: r.last_error } : {}),
    nextAttemptAt: r.next_attempt_at,
    deliveredAt: r.delivered_at,
    createdAt: r.created_at,
  };
}
