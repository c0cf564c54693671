import type { Database } from '../db/index.js';
import { deleteOldDeliveries, deleteOldEvents } from '../modules/events/retention.repo.js';
import { registerIntervalLoop } from './index.js';

const DAY_MS = 86_400_000;

export interface RetentionResult {
  deliveries: number;
  events: number;
}

/**
 * One retention pass (CONTRACT C.4): webhook delivery records older than DELIVERY_RETENTION_DAYS, then
 * events older than EVENT_RETENTION_DAYS, in batches of `batch` rows, each its own short statement,
 * pausing after each batch at least as long as it took, so requests waiting for the (SQLite) connection
 * go first: API latency does not move while a backlog of millions is deleted (bench/retention.ts). Deliveries go first, and only finished ones: an event
 * is never deleted while one of its deliveries is pending or scheduled for a retry. Idempotency records
 * have their own sweep (workers/idempotency.ts).
 */
export async function retentionPass(
  database: Database,
  opts: { eventRetentionDays: number; deliveryRetentionDays: number; batch?: number; now?: number },
): Promise<RetentionResult> {
  const now = opts.now ?? Date.now();
  const batch = opts.batch ?? 100;
  const deliveriesBefore = new Date(now - opts.deliveryRetentionDays * DAY_MS).toISOString();
  const eventsBefore = new Date(now - opts.eventRetentionDays * DAY_MS).toISOString();
  const out: RetentionResult = { deliveries: 0, events: 0 };
  for (const [kind, del, cutoff] of [
    ['deliveries', deleteOldDeliveries, deliveriesBefore],
    ['events', deleteOldEvents, eventsBefore],
  ] as const) {
    for (;;) {
      const started = performance.now();
      const n = await del(database.db, cutoff, batch);
      out[kind] += n;
      if (n < batch) break;
      // At most half of the time: on SQLite a batch holds the one write connection (and this thread), so
      // back-to-back batches would queue every request behind them.
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(performance.now() - started))));
    }
  }
  return out;
}

registerIntervalLoop('retention', (config) => config.retentionIntervalMs, async ({ database, config, log }) => {
  const r = await retentionPass(database, { eventRetentionDays: config.eventRetentionDays, deliveryRetentionDays: config.deliveryRetentionDays });
  if (r.deliveries || r.events) log.debug(r, 'events and deliveries past their retention deleted');
});
