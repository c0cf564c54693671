import type { Insertable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { SortColumn } from '../shared/listing.js';
import type { EventsTable, WebhookDeliveriesTable, WebhooksTable } from '../../db/tables/webhooks.js';

export type WebhookRow = WebhooksTable;
export type DeliveryRow = Omit<WebhookDeliveriesTable, 'lease_owner' | 'lease_until' | 'tenant_id' | 'attempt_limit'>;

const DELIVERY_COLUMNS = [
  'id',
  'webhook_id',
  'event_id',
  'event',
  'status',
  'status_code',
  'response_snippet',
  'duration_ms',
  'attempts',
  'last_error',
  'next_attempt_at',
  'delivered_at',
  'created_at',
  'updated_at',
] as const;

export function findWebhook(db: Db, tenantId: string, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export function listWebhooks(db: Db, tenantId: string): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
}

export async function insertWebhook(db: Db, row: WebhookRow): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

export async function updateWebhook(db: Db, tenantId: string, id: string, set: Partial<WebhookRow>): Promise<number> {
  const r = await db.updateTable('webhooks').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function deleteWebhook(db: Db, tenantId: string, id: string): Promise<number> {
  const r = await db.deleteFrom('webhooks').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** The delivery history goes with its webhook. */
export async function deleteDeliveriesOf(db: Db, tenantId: string, webhookId: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('tenant_id', '=', tenantId).where('webhook_id', '=', webhookId).execute();
}

/**
 * Ends every delivery of the webhook still waiting for an attempt: `permanent_failure` with `reason`.
 * Deliveries whose attempt is in flight right now (a live lease) are left to their worker, which checks
 * the webhook again before scheduling a retry.
 */
export async function cancelWaitingDeliveries(db: Db, tenantId: string, webhookId: string, reason: string, now: string): Promise<number> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'permanent_failure', last_error: reason, next_attempt_at: null, lease_owner: null, lease_until: null, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .where('status', 'in', ['pending', 'retry_scheduled'])
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export interface DeliveryFilter {
  status?: string;
  event?: string;
}

/** GET /webhooks/:id/deliveries for the listing layer: newest first by (created_at, id) (index `webhook_deliveries__webhook_page`). */
export function deliveryListing(db: Db, tenantId: string, webhookId: string, f: DeliveryFilter) {
  let base = db.selectFrom('webhook_deliveries').where('tenant_id', '=', tenantId).where('webhook_id', '=', webhookId);
  if (f.status !== undefined) base = base.where('status', '=', f.status);
  if (f.event !== undefined) base = base.where('event', '=', f.event);
  return { base, select: (qb: typeof base) => qb.select(DELIVERY_COLUMNS) };
}

export const DELIVERY_SORT: SortColumn = { column: 'created_at', nullable: false };

export function findDelivery(db: Db, tenantId: string, webhookId: string, id: string): Promise<(DeliveryRow & { attempt_limit: number | null }) | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .select([...DELIVERY_COLUMNS, 'attempt_limit'])
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * POST /webhooks/:id/recover: every `permanent_failure` delivery of the webhook created at or after
 * `since` is due again now, with MAX_ATTEMPTS more automatic attempts than it has made (C.4). Webhook
 * tests are never retried automatically, so they stay as they are; a manual retry in flight (live
 * lease) is left to finish.
 */
export async function recoverFailed(db: Db, tenantId: string, webhookId: string, since: string, now: string, moreAttempts: number): Promise<number> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ status: 'retry_scheduled', next_attempt_at: now, attempt_limit: eb('attempts', '+', moreAttempts), updated_at: now }))
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'permanent_failure')
    .where('created_at', '>=', since)
    .where('event', '!=', 'webhook.test')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Automatic deactivation after failing too long (C.4): only while still active, so one worker wins. */
export async function disableWebhook(db: Db, tenantId: string, id: string, reason: string, now: string): Promise<boolean> {
  const r = await db
    .updateTable('webhooks')
    .set({ is_active: 0, disabled_reason: reason, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('is_active', '=', 1)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** A success ends a failing streak. */
export async function clearFailing(db: Db, tenantId: string, id: string): Promise<void> {
  await db.updateTable('webhooks').set({ failing_since: null }).where('tenant_id', '=', tenantId).where('id', '=', id).where('failing_since', 'is not', null).execute();
}

/** A failure starts a failing streak unless one is running; answers the webhook as it is now. */
export async function markFailing(db: Db, tenantId: string, id: string, at: string): Promise<WebhookRow | undefined> {
  await db.updateTable('webhooks').set({ failing_since: at }).where('tenant_id', '=', tenantId).where('id', '=', id).where('failing_since', 'is', null).execute();
  return findWebhook(db, tenantId, id);
}

export async function insertEvent(db: Db, row: EventsTable): Promise<void> {
  await db.insertInto('events').values(row).execute();
}

export async function insertDelivery(db: Db, row: Insertable<WebhookDeliveriesTable>): Promise<void> {
  await db.insertInto('webhook_deliveries').values(row).execute();
}
