import { sql } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Db } from './types.js';
import { prepared } from './prepared.js';
import type { CarriedRows } from './transactions.js';

/**
 * How the event log keeps "a client polling `after=<last id>` never skips an event" (CONTRACT C.4).
 *
 * A reader continues after the position (`seq`) of the last event it read, so positions must be handed
 * out in commit order: an event committed after a reader went past its position would be skipped for
 * good. Each transaction's events are therefore written when it is about to commit (events/outbox.ts,
 * db/index.ts deferWrite), under a lock of the tenant's log held until the commit:
 * - SQLite serializes writers (BEGIN IMMEDIATE holds the write lock to the commit): insertion order is
 *   commit order already.
 * - PostgreSQL commits concurrent transactions in any order, and hands out identity values when rows are
 *   inserted. `lockEventLogs` takes a transaction-level advisory lock per tenant before the insert; the
 *   next writer of the tenant's log waits for it until this transaction has committed (PostgreSQL makes
 *   a commit visible before it releases the transaction's locks), so within a tenant every event with a
 *   lower `seq` is committed and visible before a higher one is.
 *
 * Readers never wait on anything: every committed event is readable at once, and one tenant's long
 * transaction (a bulk import) delays no other tenant's log, nor its own until it commits. The lock is
 * held only from the deferred insert to the commit (a few statements); tenants are locked in sorted
 * order, so two transactions that write the logs of several tenants cannot deadlock.
 *
 * NOTE: the previous design ordered by (inserting transaction id, seq) and let a reader see only the
 * events of transactions older than every transaction in flight. It was exact, but any long write
 * transaction of the database, of any tenant, held every tenant's log back for its whole duration.
 */
export async function lockEventLogs(tx: Db, tenantIds: readonly string[]): Promise<void> {
  if (!isPostgres(tx)) return;
  for (const tenantId of [...tenantIds].sort()) {
    // The two-key form is a lock space apart from the one-key (bigint) locks of idempotency keys.
    await sql`select pg_advisory_xact_lock(${EVENT_LOG_LOCK}, hashtext(${tenantId}))`.execute(tx);
  }
}

/** An event as the log stores it. */
export interface LoggedEvent {
  tenantId: string;
  id: string;
  type: string;
  payload: string;
  createdAt: string;
}

/**
 * PostgreSQL, the one event of one tenant that nearly every write raises: the log's lock (lockEventLogs),
 * the insert and the NOTIFY of the tenant's waiting readers (events/signal.ts) in one statement, one round
 * trip instead of three, while the lock is held. The insert reads its row from the lock's, so the lock is
 * taken before the row is formed and its `seq` drawn.
 */
export async function insertLoggedEvent(tx: Db, e: LoggedEvent, carried?: CarriedRows): Promise<void> {
  if (!carried) return void (await lockedInsert(tx, EVENT_LOG_LOCK, e.tenantId, e.id, e.type, e.payload, e.createdAt, EVENTS_CHANNEL));
  const columns = Object.keys(carried.rows[0]);
  const values = carried.rows.flatMap((r) => columns.map((c) => r[c]));
  await carryingInsert(carried.table, columns, carried.rows.length)(
    tx,
    EVENT_LOG_LOCK,
    e.tenantId,
    e.id,
    e.type,
    e.payload,
    e.createdAt,
    EVENTS_CHANNEL,
    ...values,
  );
}

/** Whether insertLoggedEvent writes `carried` along with an event: one table's rows (a change's audit entry), a few. */
export const canCarry = (carried: CarriedRows[]) => carried.length === 1 && carried[0].rows.length <= 4;

/**
 * The statement of lockedInsert with other rows inserted by it too (a data-modifying CTE): the change's audit entry
 * written in the event's round trip. A statement per shape (table, columns, rows), compiled once.
 * NOTE: the statement's parts all see one snapshot and run in no promised order; the rows are independent.
 */
const carryingInserts = new Map<string, ReturnType<typeof prepared<unknown[], unknown>>>();
function carryingInsert(table: string, columns: string[], rows: number) {
  const shape = `${table}(${columns.join()})x${rows}`;
  let insert = carryingInserts.get(shape);
  if (!insert) {
    insert = prepared((tx: Db, ...v: unknown[]) => {
      const [lock, tenantId, id, type, payload, createdAt, channel] = v;
      const tuples = Array.from({ length: rows }, (_, r) => sql`(${sql.join(columns.map((_, c) => sql`${v[7 + r * columns.length + c]}`))})`);
      return {
        compile: () =>
          sql`with locked as (select pg_advisory_xact_lock(${lock}, hashtext(${tenantId})) as held),
    carried as (insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) values ${sql.join(tuples)}),
    inserted as (
      insert into events (tenant_id, id, type, payload, created_at)
      select ${tenantId}, ${id}, ${type}, ${payload}, ${createdAt} from locked
      returning 1 as one
    )
    select pg_notify(${channel}, ${tenantId}) from inserted`.compile(tx),
      };
    });
    carryingInserts.set(shape, insert);
  }
  return insert;
}

const lockedInsert = prepared((tx: Db, lock: number, tenantId: string, id: string, type: string, payload: string, createdAt: string, channel: string) => ({
  compile: () =>
    sql`with locked as (select pg_advisory_xact_lock(${lock}, hashtext(${tenantId})) as held),
    inserted as (
      insert into events (tenant_id, id, type, payload, created_at)
      select ${tenantId}, ${id}, ${type}, ${payload}, ${createdAt} from locked
      returning 1 as one
    )
    select pg_notify(${channel}, ${tenantId}) from inserted`.compile(tx),
}));

/** First key of the event log's advisory locks ('CRME'); the second is a hash of the tenant id. */
const EVENT_LOG_LOCK = 0x43524d45;

/** The channel an event-writing transaction NOTIFYs (payload: the tenant id), delivered at its commit. */
export const EVENTS_CHANNEL = 'crm_events';
