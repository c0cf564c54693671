import { sql, type Insertable } from 'kysely';
import type { Db } from '../db/index.js';
import { forUpdateSkipLocked, type SqlDialect } from '../db/dialect.js';
import { notify } from '../db/notify.js';
import type { WebhookDeliveriesTable } from '../db/tables/webhooks.js';
import { extended } from '../util/objects.js';

/**
 * The delivery queue (table `webhook_deliveries`), and its only writer: the outbox queues a delivery per
 * subscribed webhook with each event (events/outbox.ts), the workers claim and settle them
 * (workers/webhooks.ts, modules/webhooks/webhooks.attempts.ts), the webhooks API records a test, retries,
 * recovers, cancels and deletes them (modules/webhooks), retention removes old ones (workers/retention.ts).
 * Reads for the API's delivery history stay with the webhooks repo.
 *
 * NOTE: unlike every repo, the claim scans across tenants: the queue is shared by all tenants and a
 * worker serves them all (index `webhook_deliveries__due`). Everything after the claim is keyed by
 * (tenant_id, id) again.
 */
export type QueuedDelivery = WebhookDeliveriesTable;

/** The channel delivery workers LISTEN on (PostgreSQL). */
export const DELIVERY_CHANNEL = 'crm_deliveries';

/** Listeners told after commit that deliveries are due (the in-process worker wakes at once). */
const wakeups = new Set<() => void>();
export function onDeliveriesQueued(fn: () => void): () => void {
  wakeups.add(fn);
  return () => wakeups.delete(fn);
}
function notifyDeliveriesQueued(): void {
  for (const fn of wakeups) fn();
}

/**
 * Wakes the delivery workers once the caller's transaction commits, never before:
 * - PostgreSQL: NOTIFY inside the transaction (db/notify.ts); PostgreSQL delivers it on commit only (and
 *   drops it on rollback), to every `crm worker`/`crm serve` process LISTENing, on any machine.
 * - SQLite: the in-process loop is woken now. Its claim query cannot run before the commit: Kysely's
 *   SQLite driver has one connection, held by this transaction until it ends, so the claim waits for it.
 * Workers also poll (about every 500 ms), so a missed wake-up (another process on SQLite) only delays.
 */
export async function wakeWorkers(db: Db): Promise<void> {
  if (!(await notify(db, DELIVERY_CHANNEL))) setImmediate(notifyDeliveriesQueued);
}

/** Rows per INSERT: well under every driver's limit on bound parameters. */
const CHUNK = 200;

/** Queues deliveries (or records a webhook test's), in the caller's transaction; wakes nobody (wakeWorkers). */
export async function insertDeliveries(tx: Db, rows: readonly Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await tx
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + CHUNK))
      .execute();
  }
}

// NOTE: written as a literal, not bound values: only then can SQLite (and PostgreSQL's generic plans)
// prove the condition of the partial index `webhook_deliveries__due` and use it instead of a full scan.
const WAITING = sql<boolean>`status in ('pending', 'retry_scheduled')`;

export interface ClaimOptions {
  dialect: SqlDialect;
  /** Lease token written on the claimed rows; every later write checks it. */
  owner: string;
  now: string;
  leaseUntil: string;
  limit: number;
}

/**
 * Claims up to `limit` due deliveries (pending or retry_scheduled, next attempt due, no live lease) by
 * writing a lease on them, in one statement (one short transaction).
 * - PostgreSQL: the candidate rows are locked with `FOR UPDATE SKIP LOCKED` (forUpdateSkipLocked), so
 *   concurrent workers claim disjoint sets without waiting for each other; a row claimed meanwhile fails
 *   the re-check of the WHERE clause that PostgreSQL makes on the newest row version, so it is never
 *   leased twice.
 * - SQLite: one writer at a time, so `UPDATE … WHERE (tenant_id, id) IN (SELECT … LIMIT n) RETURNING` is atomic.
 */
export async function claimDue(db: Db, o: ClaimOptions): Promise<QueuedDelivery[]> {
  return (
    db
      .updateTable('webhook_deliveries')
      .set({ lease_owner: o.owner, lease_until: o.leaseUntil })
      .where(({ eb, refTuple }) => {
        const due = eb
          .selectFrom('webhook_deliveries')
          .select(['tenant_id', 'id'])
          .where(WAITING)
          .where('next_attempt_at', '<=', o.now)
          .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', o.now)]))
          .orderBy('next_attempt_at')
          .limit(o.limit);
        return eb(refTuple('tenant_id', 'id'), 'in', forUpdateSkipLocked(o.dialect, due).$asTuple('tenant_id', 'id'));
      })
      // The same conditions again on the row being updated: under PostgreSQL's READ COMMITTED the outer
      // UPDATE re-evaluates them on the latest committed version of each row.
      .where(WAITING)
      .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', o.now)]))
      .returningAll()
      .execute()
  );
}

export type DeliveryUpdate = Partial<
  Pick<
    WebhookDeliveriesTable,
    'status' | 'status_code' | 'response_snippet' | 'duration_ms' | 'attempts' | 'last_error' | 'next_attempt_at' | 'delivered_at' | 'updated_at'
  >
>;

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

/**
 * POST /webhooks/:id/recover: every `permanent_failure` delivery of the webhook created at or after
 * `since` is due again now, with `moreAttempts` more automatic attempts than it has made (C.4). Webhook
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

/** The delivery history goes with its webhook. */
export async function deleteDeliveriesOf(db: Db, tenantId: string, webhookId: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('tenant_id', '=', tenantId).where('webhook_id', '=', webhookId).execute();
}

/**
 * Retention: deletes up to `batch` delivery records created before `cutoff` that are finished (delivered
 * or permanent_failure), oldest first; returns how many. One short statement on the index
 * webhook_deliveries__created.
 */
export async function deleteOldDeliveries(db: Db, cutoff: string, batch: number): Promise<number> {
  const oldest = db
    .selectFrom('webhook_deliveries')
    .select(['tenant_id', 'id'])
    .where('created_at', '<', cutoff)
    .where('status', 'not in', ['pending', 'retry_scheduled'])
    .orderBy('created_at')
    .limit(batch);
  const r = await db
    .deleteFrom('webhook_deliveries')
    .where(sql<boolean>`(tenant_id, id) in (${oldest})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * D.5: what the receivers of these events answered is forgotten (a receiver may echo the body it got, which held an
 * erased person): their deliveries' `response_snippet` is cleared. The deliveries themselves stay; pending ones
 * send the events' payloads as they are now, without the erased values.
 */
export async function forgetResponses(db: Db, tenantId: string, eventIds: readonly string[]): Promise<void> {
  for (let i = 0; i < eventIds.length; i += 500) {
    await db
      .updateTable('webhook_deliveries')
      .set({ response_snippet: null })
      .where('tenant_id', '=', tenantId)
      .where('event_id', 'in', eventIds.slice(i, i + 500))
      .execute();
  }
}
