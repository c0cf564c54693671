import type { Db } from '../../db/index.js';
import type { EventsTable, WebhookDeliveriesTable, WebhooksTable } from '../../db/tables/webhooks.js';

export type WebhookRow = WebhooksTable;
export type DeliveryRow = Omit<WebhookDeliveriesTable, 'lease_owner' | 'lease_until' | 'tenant_id'>;

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

export function listDeliveries(db: Db, tenantId: string, webhookId: string, limit: number): Promise<DeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function insertEvent(db: Db, row: EventsTable): Promise<void> {
  await db.insertInto('events').values(row).execute();
}

export async function insertDelivery(db: Db, row: WebhookDeliveriesTable): Promise<void> {
  await db.insertInto('webhook_deliveries').values(row).execute();
}
