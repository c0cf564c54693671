import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { isPostgres } from '../../db/dialect.js';
import { DELIVERY_CHANNEL, notifyDeliveriesQueued } from '../../events/outbox.js';
import type { WebhookDeliveriesTable } from '../../db/tables/webhooks.js';
import type { WebhookRow } from './webhooks.repo.js';
import { extended } from '../../util/objects.js';

/**
 * The delivery queue, as the workers see it.
 * NOTE: unlike every other repo, the claim scans across tenants: the queue is shared by all tenants and
 * a worker serves them all (index `webhook_deliveries__due`). Everything after the claim is keyed by
 * (tenant_id, id) again.
 */
export type QueuedDelivery = WebhookDeliveriesTable;

// NOTE: written as a literal, not bound values: only then can SQLite (and PostgreSQL's generic plans)
// prove the condition of the partial index `webhook_deliveries__due` and use it instead of a full scan.
const WAITING = sql<boolean>`status in ('pending', 'retry_scheduled')`;

export interface ClaimOptions {
  postgres: boolean;
  /** Lease token written on the claimed rows; every later write checks it. */
  owner: string;
  now: string;
  leaseUntil: string;
  limit: number;
}

/**
 * Claims up to `limit` due deliveries (pending or retry_scheduled, next attempt due, no live lease) by
 * writing a lease on them, in one statement (one short transaction).
 * - PostgreSQL: the candidate rows are locked with `FOR UPDATE SKIP LOCKED`, so concurrent workers claim
 *   disjoint sets without waiting for each other; a row claimed meanwhile fails the re-check of the
 *   WHERE clause that PostgreSQL makes on the newest row version, so it is never leased twice.
 * - SQLite: one writer at a time, so `UPDATE … WHERE (tenant_id, id) IN (SELECT … LIMIT n) RETURNING` is atomic.
 */
export async function claimDue(db: Db, o: ClaimOptions): Promise<QueuedDelivery[]> {
  return db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: o.owner, lease_until: o.leaseUntil })
    .where(({ eb, refTuple }) => {
      let due = eb
        .selectFrom('webhook_deliveries')
        .select(['tenant_id', 'id'])
        .where(WAITING)
        .where('next_attempt_at', '<=', o.now)
        .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', o.now)]))
        .orderBy('next_attempt_at')
        .limit(o.limit);
      if (o.postgres) due = due.forUpdate().skipLocked();
      return eb(refTuple('tenant_id', 'id'), 'in', due.$asTuple('tenant_id', 'id'));
    })
    // The same conditions again on the row being updated: under PostgreSQL's READ COMMITTED the outer
    // UPDATE re-evaluates them on the latest committed version of each row.
    .where(WAITING)
    .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', o.now)]))
    .returningAll()
    .execute();
}

export type AttemptTarget = Pick<WebhookRow, 'id' | 'url' | 'is_active' | 'headers' | 'secret_enc'>;

export interface AttemptContext {
  webhook: AttemptTarget | undefined;
  payload: string | undefined;
}

/** The webhook and event payload of each claimed delivery, in one query for the whole batch. */
export async function loadAttemptContexts(db: Db, batch: QueuedDelivery[]): Promise<Map<string, AttemptContext>> {
  const out = new Map<string, AttemptContext>();
  if (batch.length === 0) return out;
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .leftJoin('webhooks as w', (j) => j.onRef('w.tenant_id', '=', 'd.tenant_id').onRef('w.id', '=', 'd.webhook_id'))
    .leftJoin('events as e', (j) => j.onRef('e.tenant_id', '=', 'd.tenant_id').onRef('e.id', '=', 'd.event_id'))
    .select(['d.id as delivery_id', 'w.id as webhook_id', 'w.url', 'w.is_active', 'w.headers', 'w.secret_enc', 'e.payload'])
    .where(({ eb, refTuple, tuple }) => eb(refTuple('d.tenant_id', 'd.id'), 'in', batch.map((d) => tuple(d.tenant_id, d.id))))
    .execute();
  for (const r of rows) {
    out.set(r.delivery_id, {
      webhook: r.webhook_id === null ? undefined : { id: r.webhook_id, url: r.url!, is_active: r.is_active!, headers: r.headers!, secret_enc: r.secret_enc! },
      payload: r.payload ?? undefined,
    });
  }
  return out;
}

export async function isWebhookActive(db: Db, tenantId: string, webhookId: string): Promise<boolean> {
  const row = await db.selectFrom('webhooks').select('is_active').where('tenant_id', '=', tenantId).where('id', '=', webhookId).executeTakeFirst();
  return row?.is_active === 1;
}

export type DeliveryUpdate = Partial<Pick<
  WebhookDeliveriesTable,
  'status' | 'status_code' | 'response_snippet' | 'duration_ms' | 'attempts' | 'last_error' | 'next_attempt_at' | 'delivered_at' | 'updated_at'
>>;

/** Records the outcome and drops the lease, only while the lease is still ours. */
export async function finishDelivery(db: Db, d: QueuedDelivery, owner: string, set: DeliveryUpdate): Promise<boolean> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set(extended(set, { lease_owner: null, lease_until: null }))
    .where('tenant_id', '=', d.tenant_id)
    .where('id', '=', d.id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Gives a claimed delivery back untouched (shutdown): due again at once for any worker. */
export async function releaseDelivery(db: Db, d: QueuedDelivery, owner: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: null, lease_until: null })
    .where('tenant_id', '=', d.tenant_id)
    .where('id', '=', d.id)
    .where('lease_owner', '=', owner)
    .execute();
}

/** A delivery whose webhook is gone (deleted while the event was being written): it goes too. */
export async function dropDelivery(db: Db, d: QueuedDelivery, owner: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('tenant_id', '=', d.tenant_id).where('id', '=', d.id).where('lease_owner', '=', owner).execute();
}

/**
 * Leases one delivery for a manual retry (POST …/deliveries/:deliveryId/retry), whatever its status, and
 * gives it one more attempt than it may make: a waiting delivery keeps its automatic attempts, an ended
 * one (delivered or permanent_failure) gets exactly this one. Only while nobody holds a live lease and the
 * row is as it was read (`attempts`, `status`); undefined otherwise (an attempt is in flight).
 */
export async function leaseForRetry(
  db: Db,
  d: Pick<QueuedDelivery, 'tenant_id' | 'id' | 'status' | 'attempts' | 'attempt_limit'>,
  o: { owner: string; now: string; leaseUntil: string; maxAttempts: number },
): Promise<QueuedDelivery | undefined> {
  const waiting = d.status === 'pending' || d.status === 'retry_scheduled';
  const limit = waiting ? Math.max(d.attempt_limit ?? o.maxAttempts, d.attempts) + 1 : d.attempts + 1;
  return db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: o.owner, lease_until: o.leaseUntil, attempt_limit: limit })
    .where('tenant_id', '=', d.tenant_id)
    .where('id', '=', d.id)
    .where('status', '=', d.status)
    .where('attempts', '=', d.attempts)
    .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', o.now)]))
    .returningAll()
    .executeTakeFirst();
}

/**
 * Wakes the delivery workers once the caller's transaction commits (deliveries made due again by a
 * recovery): NOTIFY on PostgreSQL (delivered on commit only), the in-process loop on SQLite. Workers
 * also poll, so a missed wake-up only delays.
 */
export async function wakeWorkers(db: Db): Promise<void> {
  if (isPostgres(db)) await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
  else setImmediate(notifyDeliveriesQueued);
}
