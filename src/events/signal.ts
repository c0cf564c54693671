import { dialectOf } from '../db/dialect.js';
import { notify } from '../db/notify.js';
import { afterCommit, oncePerTransaction, type Db } from '../db/index.js';
import { EVENTS_CHANNEL } from '../db/event-log.js';

/** In-process listeners told a tenant's events committed (the event log's waiting requests). */
const listeners = new Set<(tenantId: string) => void>();

export function onEventsCommitted(fn: (tenantId: string) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function eventsCommitted(tenantId: string): void {
  for (const fn of listeners) fn(tenantId);
}

/**
 * Tells every waiting reader of the tenant's event log, once the caller's transaction commits (never
 * before: a reader woken early would find nothing and wait on), and once per transaction and tenant
 * however many events it writes:
 * - PostgreSQL: NOTIFY inside the transaction (db/notify.ts), which PostgreSQL delivers at commit (and
 *   drops on rollback) to the one LISTEN connection of every server process (events/waiters.ts).
 * - SQLite: in process, after the commit (db/index.ts afterCommit).
 */
export async function signalEvents(tx: Db, tenantId: string): Promise<void> {
  if (dialectOf(tx).notifies) {
    await oncePerTransaction(tx, `events-notify\0${tenantId}`, async () => {
      await notify(tx, EVENTS_CHANNEL, tenantId);
    });
    return;
  }
  afterCommit(tx, `events\0${tenantId}`, () => eventsCommitted(tenantId));
}
