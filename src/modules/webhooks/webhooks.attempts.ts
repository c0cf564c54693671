import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { Config } from '../../config.js';
import type { Db } from '../../db/index.js';
import * as deliveries from '../../events/deliveries.js';
import { SYSTEM_ACTOR } from '../../http/context.js';
import { recordEvent } from '../shared/record-change.js';
import { webhookAttempts } from '../../metrics.js';
import { decryptSecret } from '../../util/crypto.js';
import { openHeaders, secretAad, toWebhook } from './webhooks.presenter.js';
import * as queue from './webhooks.queue.js';
import * as repo from './webhooks.repo.js';
import { sendAttempt, type AttemptResult } from './webhooks.sender.js';
import { extended } from '../../util/objects.js';

/**
 * One delivery attempt and its record, shared by the delivery worker and the manual retry of the API
 * (CONTRACT B.9 and C.4), so both count, schedule and judge endpoint health the same way.
 */

/** Spec 3.6 / 6.4: the fifth failed attempt ends the delivery (a recovery grants as many again). */
export const MAX_ATTEMPTS = 5;

/**
 * Sends the event to the webhook: secret and custom headers decrypted for this attempt only. When they
 * cannot be decrypted (CRM_SECRET_KEY changed) nothing is sent and the attempt fails, saying why: a
 * destination never gets a request without the headers it expects.
 */
export async function makeAttempt(
  config: Config,
  d: Pick<deliveries.QueuedDelivery, 'tenant_id' | 'event_id' | 'event'>,
  webhook: queue.AttemptTarget,
  payload: string,
  dispatcher: Dispatcher,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  let secret: string;
  let customHeaders: Record<string, string>;
  try {
    secret = decryptSecret(config.secretKey(), webhook.secret_enc, secretAad(d.tenant_id, webhook.id));
    customHeaders = openHeaders(config.secretKey(), d.tenant_id, webhook.id, webhook.headers);
  } catch {
    return {
      success: false,
      statusCode: null,
      responseSnippet: null,
      durationMs: 0,
      error: 'the signing secret or the custom headers cannot be decrypted (CRM_SECRET_KEY changed?)',
      attemptId: randomUUID(),
      endedAt: new Date(),
    };
  }
  return sendAttempt({
    url: webhook.url,
    secret,
    customHeaders,
    eventId: d.event_id,
    event: d.event,
    body: Buffer.from(payload, 'utf8'),
    timeoutMs: config.webhookTimeoutMs,
    dispatcher,
    signal,
  });
}

/**
 * The delivery after an attempt: delivered, or the next retry, or permanent_failure once it has made
 * `attempt_limit` attempts (MAX_ATTEMPTS unless raised by a recovery or a manual retry).
 * - A retry's delay counts from the end of the failed attempt (B.9), in the order of
 *   WEBHOOK_RETRY_DELAYS within the current cycle of MAX_ATTEMPTS (a recovered delivery starts again at
 *   the first delay).
 * - A destination's Retry-After on 429/503 makes it at least that long (C.4).
 */
export function outcome(config: Config, d: Pick<deliveries.QueuedDelivery, 'attempts' | 'attempt_limit'>, r: AttemptResult): deliveries.DeliveryUpdate {
  const attempts = d.attempts + 1;
  const end = r.endedAt.toISOString();
  const common = { status_code: r.statusCode, response_snippet: r.responseSnippet, duration_ms: r.durationMs, attempts, updated_at: end };
  if (r.success) return extended(common, { status: 'delivered', last_error: null, next_attempt_at: null, delivered_at: end });
  const limit = d.attempt_limit ?? MAX_ATTEMPTS;
  const lastError = r.error ?? 'failed';
  if (attempts >= limit) return extended(common, { status: 'permanent_failure', last_error: lastError, next_attempt_at: null });
  const inCycle = attempts - (limit - MAX_ATTEMPTS);
  const delays = config.webhookRetryDelays;
  const delayMs = delays[Math.min(Math.max(inCycle - 1, 0), delays.length - 1)] * 1000;
  const next = new Date(r.endedAt.getTime() + Math.max(delayMs, r.retryAfterMs ?? 0)).toISOString();
  return extended(common, { status: 'retry_scheduled', last_error: lastError, next_attempt_at: next });
}

/**
 * Writes an attempt's outcome, in the caller's transaction, only while `owner` still holds the lease
 * (false otherwise: another worker took over, and its record counts). A retry of a webhook deactivated
 * while the attempt was in flight is not scheduled. Then the endpoint's health follows the result.
 */
export async function recordAttempt(tx: Db, config: Config, d: deliveries.QueuedDelivery, owner: string, r: AttemptResult): Promise<boolean> {
  const set = outcome(config, d, r);
  if (set.status === 'retry_scheduled' && !(await queue.isWebhookActive(tx, d.tenant_id, d.webhook_id))) {
    Object.assign(set, { status: 'permanent_failure', last_error: `${set.last_error}; webhook deactivated`, next_attempt_at: null });
  }
  if (!(await deliveries.finishDelivery(tx, d, owner, set))) return false;
  await trackHealth(tx, config, d.tenant_id, d.webhook_id, r);
  webhookAttempts.inc({ outcome: set.status });
  return true;
}

/**
 * Endpoint health (C.4): a success ends a failing streak; a failure starts one (at the end of that
 * attempt) unless one runs. A failed attempt ending WEBHOOK_DISABLE_AFTER_HOURS or more after the start
 * of the streak deactivates the webhook with `disabled_reason`, ends its waiting deliveries, and raises
 * `webhook.disabled` (data.webhook as GET /webhooks/:id shows it) for the tenant's other webhooks, all in
 * this transaction.
 */
export async function trackHealth(tx: Db, config: Config, tenantId: string, webhookId: string, r: AttemptResult): Promise<void> {
  if (r.success) {
    await repo.clearFailing(tx, tenantId, webhookId);
    return;
  }
  const end = r.endedAt.toISOString();
  const hook = await repo.markFailing(tx, tenantId, webhookId, end);
  if (!hook || hook.is_active !== 1 || hook.failing_since === null) return;
  const failingMs = r.endedAt.getTime() - Date.parse(hook.failing_since);
  if (failingMs < config.webhookDisableAfterHours * 3_600_000) return;
  const reason = `no successful delivery since ${hook.failing_since} (WEBHOOK_DISABLE_AFTER_HOURS=${config.webhookDisableAfterHours}); last error: ${r.error ?? 'failed'}`;
  if (!(await repo.disableWebhook(tx, tenantId, webhookId, reason, end))) return;
  await deliveries.cancelWaitingDeliveries(tx, tenantId, webhookId, 'webhook disabled after failing too long', end);
  const disabled = (await repo.findWebhook(tx, tenantId, webhookId))!;
  // Emitted after the deactivation, so the outbox queues it for the tenant's other active webhooks only.
  await recordEvent(tx, { tenantId, actor: SYSTEM_ACTOR }, 'webhook.disabled', toWebhook(config.secretKey(), disabled));
}
