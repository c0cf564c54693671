import type { Db } from '../../db/index.js';
import type { Listing, SortColumn } from '../../listing/descriptor.js';
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

export interface DeliveryFilter {
  status?: string;
  event?: string;
}

/** GET /webhooks/:id/deliveries for the listing layer: newest first by (created_at, id) (index `webhook_deliveries__webhook_page`). */
function deliveryListing(db: Db, tenantId: string, webhookId: string, f: DeliveryFilter) {
  let base = db.selectFrom('webhook_deliveries').where('tenant_id', '=', tenantId).where('webhook_id', '=', webhookId);
  if (f.status !== undefined) base = base.where('status', '=', f.status);
  if (f.event !== undefined) base = base.where('event', '=', f.event);
  return { base, select: (qb: typeof base) => qb.select(DELIVERY_COLUMNS) };
}

const DELIVERY_SORT: SortColumn = { column: 'created_at', nullable: false };

/** The deliveries of a webhook (GET /webhooks/:id/deliveries), newest first. */
export const DELIVERY_LISTING: Listing<DeliveryFilter & { webhookId: string }, 'createdAt'> = {
  sort: { createdAt: DELIVERY_SORT },
  query: (db, tenantId, f) => deliveryListing(db, tenantId, f.webhookId, f),
};

export function findDelivery(db: Db, tenantId: string, webhookId: string, id: string): Promise<(DeliveryRow & { attempt_limit: number | null }) | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .select([...DELIVERY_COLUMNS, 'attempt_limit'])
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .executeTakeFirst();
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
  await db
    .updateTable('webhooks')
    .set({ failing_since: null })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('failing_since', 'is not', null)
    .execute();
}

/** A failure starts a failing streak unless one is running; answers the webhook as it is now. */
export async function markFailing(db: Db, tenantId: string, id: string, at: string): Promise<WebhookRow | undefined> {
  await db
    .updateTable('webhooks')
    .set({ failing_since: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('failing_since', 'is', null)
    .execute();
  return findWebhook(db, tenantId, id);
}

export async function insertEvent(db: Db, row: EventsTable): Promise<void> {
  await db.insertInto('events').values(row).execute();
}
