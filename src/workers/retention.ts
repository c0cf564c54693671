import type { Database } from '../db/index.js';
import { deleteOldDeliveries } from '../events/deliveries.js';
import { deleteOldEvents } from '../modules/events/retention.repo.js';
import { BULK_CHANGE_ROWS, noteBulkChange } from '../db/statistics.js';
import { withTx, type Db } from '../db/index.js';
import { purgeDeletedRows, type SoftDeleteTable } from '../db/live-rows.js';
import { SYSTEM_ACTOR } from '../http/context.js';
import { deleteOldAuditEntries } from '../modules/audit/audit.repo.js';
import { writeAuditNow } from '../modules/audit/audit.service.js';
import { intervalLoop } from './loop.js';

const DAY_MS = 86_400_000;

export interface RetentionResult {
  deliveries: number;
  events: number;
  /** Soft-deleted records purged for good (D.1), all tables together. */
  purged: number;
  /** Audit-log entries past AUDIT_RETENTION_DAYS (D.4). */
  audit: number;
}

/** The tables whose soft-deleted rows are purged past RESTORE_WINDOW_DAYS (D.1). */
const SOFT_DELETE_TABLES: readonly SoftDeleteTable[] = ['contacts', 'companies', 'deals', 'proposals', 'lists'];

/** The object type of each table's records, as their audit entries name it (`contact.purged`). */
const TYPE_OF: Record<SoftDeleteTable, string> = { contacts: 'contact', companies: 'company', deals: 'deal', proposals: 'proposal', lists: 'list' };

/**
 * One purge batch of `table`, with its rows' tag links and memberships, in one transaction with an audit entry
 * `<type>.purged` per record (actor `system`, D.1).
 */
const purgeOf = (table: SoftDeleteTable) => (db: Db, before: string, limit: number) =>
  withTx(db, async (tx) => {
    const rows = await purgeDeletedRows(tx, table, before, limit);
    for (const { tenant_id, id } of rows) {
      await writeAuditNow(tx, { tenantId: tenant_id, actor: SYSTEM_ACTOR }, [{ action: `${TYPE_OF[table]}.purged`, objectType: TYPE_OF[table], objectId: id }]);
    }
    return rows.length;
  });

/** SQLite (a database in this process): the longest a batch may hold the one writer (and this thread), in milliseconds. */
const SQLITE_BATCH_BUDGET_MS = 0.25;
const SQLITE_MIN_BATCH = 5;
const SQLITE_MAX_BATCH = 100;
/** PostgreSQL (a database server): the statements do not block this thread, and the old rows they lock are read by nobody. */
const POSTGRES_BATCH = 500;

/**
 * One retention pass (CONTRACT C.4): webhook delivery records older than DELIVERY_RETENTION_DAYS, then
 * events older than EVENT_RETENTION_DAYS, each batch its own short statement. Deliveries go first, and
 * only finished ones: an event is never deleted while one of its deliveries is pending or scheduled for a
 * retry. Then, with `restoreWindowDays`, the records soft-deleted longer ago than RESTORE_WINDOW_DAYS (D.1), with
 * their tag links and static-list memberships. Idempotency records have their own sweep (workers/idempotency.ts).
 *
 * API latency must not move while a backlog of millions is deleted (bench/retention.ts: p99 within 2×).
 * On SQLite a delete runs on this thread with the one write connection, so every request that arrives
 * meanwhile waits for it: a batch is sized to take about SQLITE_BATCH_BUDGET_MS (halved when one took
 * longer, grown while they take less than half), and is followed by a pause at least as long, so the
 * requests waiting go first (the time is taken once the connection is ours: waiting behind requests is
 * not the statement's cost). Fixed batches of 100 held the thread ~1 ms each and lifted the p99 of a point
 * read ×2.6 (bench/retention.ts, 4 connections, saturating); sized to the budget it stays within ×1.65–1.8
 * (saturating or 2,000 requests/s), deleting 4,000–12,000 events/s.
 */
export async function retentionPass(
  database: Database,
  opts: {
    eventRetentionDays: number;
    deliveryRetentionDays: number;
    restoreWindowDays?: number;
    auditRetentionDays?: number;
    batch?: number;
    now?: number;
    signal?: AbortSignal;
  },
): Promise<RetentionResult> {
  const now = opts.now ?? Date.now();
  const fixed = opts.batch ?? (database.dialect.inProcess ? undefined : POSTGRES_BATCH);
  const deliveriesBefore = new Date(now - opts.deliveryRetentionDays * DAY_MS).toISOString();
  const eventsBefore = new Date(now - opts.eventRetentionDays * DAY_MS).toISOString();
  const out: RetentionResult = { deliveries: 0, events: 0, purged: 0, audit: 0 };
  let batch = fixed ?? 20;
  const kinds: [keyof RetentionResult, (db: Db, before: string, limit: number) => Promise<number>, string][] = [
    ['deliveries', deleteOldDeliveries, deliveriesBefore],
    ['events', deleteOldEvents, eventsBefore],
  ];
  if (opts.restoreWindowDays !== undefined) {
    const deletedBefore = new Date(now - opts.restoreWindowDays * DAY_MS).toISOString();
    for (const table of SOFT_DELETE_TABLES) kinds.push(['purged', purgeOf(table), deletedBefore]);
  }
  if (opts.auditRetentionDays !== undefined) kinds.push(['audit', deleteOldAuditEntries, new Date(now - opts.auditRetentionDays * DAY_MS).toISOString()]);
  for (const [kind, del, cutoff] of kinds) {
    for (;;) {
      // Timed once the connection is ours: a wait behind requests for it is not the statement's cost.
      let took = 0;
      const n = await database.db.connection().execute(async (conn) => {
        const started = performance.now();
        const deleted = await del(conn, cutoff, batch);
        took = performance.now() - started;
        return deleted;
      });
      out[kind] += n;
      if (n < batch) break;
      // The rest waits for the next pass: a stop (or a shutdown) does not wait for a whole backlog.
      if (opts.signal?.aborted) return out;
      if (fixed === undefined) {
        if (took > SQLITE_BATCH_BUDGET_MS) batch = Math.max(SQLITE_MIN_BATCH, Math.floor(batch / 2));
        else if (took < SQLITE_BATCH_BUDGET_MS / 2) batch = Math.min(SQLITE_MAX_BATCH, Math.ceil(batch * 1.25));
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(took))));
    }
  }
  return out;
}

export const retentionLoop = intervalLoop(
  'retention',
  (config) => config.retentionIntervalMs,
  async ({ database, config, log }, signal) => {
    const r = await retentionPass(database, {
      eventRetentionDays: config.eventRetentionDays,
      deliveryRetentionDays: config.deliveryRetentionDays,
      restoreWindowDays: config.restoreWindowDays,
      auditRetentionDays: config.auditRetentionDays,
      signal,
    });
    if (r.deliveries || r.events || r.purged || r.audit) log.debug(r, 'events, deliveries, deleted records and audit entries past their retention deleted');
    if (r.purged >= BULK_CHANGE_ROWS) noteBulkChange(database.db, [...SOFT_DELETE_TABLES, 'record_tags', 'list_members'], r.purged);
    // A large purge: the planner statistics of the tables purged are refreshed soon (PostgreSQL: db/pg-stats.ts).
    if (r.deliveries + r.events >= BULK_CHANGE_ROWS) noteBulkChange(database.db, ['webhook_deliveries', 'events'], r.deliveries + r.events);
  },
);
