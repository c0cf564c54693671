import { sql, type RawBuilder } from 'kysely';
import type { DialectName } from './dialect.js';

/**
 * Which events a reader of the log may see yet (CONTRACT C.4: a client polling `after=<last id>` never
 * skips an event).
 *
 * Events are read in the order (txid, seq), never by `seq` or time alone:
 * - SQLite serializes writers (BEGIN IMMEDIATE holds the write lock to the commit), so insertion order
 *   is commit order; `txid` is always 0 and `seq` decides.
 * - PostgreSQL commits concurrent transactions in any order: transaction A may insert seq 10, B seq 11,
 *   and B commit first. A reader that returned 11 then would skip 10 for good. So a reader only sees the
 *   events of transactions older than every transaction still in flight:
 *   `txid < pg_snapshot_xmin(pg_current_snapshot())` (refined below to this database's transactions).
 *   Every such transaction has ended, so that set is final; every transaction that may still add events
 *   has an xid ≥ that bound (xids are handed out in increasing order), so it sorts after everything
 *   already read. Ordering by `seq` alone would not be
 *   enough even with this bound: A (xid 100) may insert seq 11 after B (xid 101) inserted seq 10, and
 *   A be readable while B is not. Ordering by (txid, seq) makes the readable set a prefix.
 *   `pg_current_xact_id()` answers the top-level transaction inside savepoints too.
 *   The price: an event becomes readable once every transaction that started before its own has
 *   ended (writes here are short; statement_timeout bounds them).
 */
export function eventVisible(dialect: DialectName): RawBuilder<boolean> | undefined {
  return dialect === 'postgres' ? sql<boolean>`txid < ${readableBound}` : undefined;
}

/**
 * The bound of the previous comment, computed once per statement, counting only this database's
 * transactions. NOTE: `pg_snapshot_xmin` alone counts every transaction of the cluster: a long
 * transaction in another database (a migration, a bulk load) held every event back for its duration
 * (seen in tests sharing one server). Here the in-progress xids of the statement's snapshot are kept
 * unless pg_stat_activity (read after the snapshot) shows them running in another database; the lowest
 * kept, or the snapshot's xmax when none is, is the bound. Every misjudgement errs on the safe side: an
 * xid that ended between the snapshot and the read, a prepared transaction, a session whose xid is
 * hidden, all still hold events back. Costs a few microseconds when nothing is in flight (the activity
 * is read only for in-progress xids).
 */
const readableBound = sql`(
  select least(min(pg_snapshot_xmax(s)::text::bigint), min(x::text::bigint))
  from pg_current_snapshot() s
  left join lateral pg_snapshot_xip(s) x on not exists (
    select 1 from pg_stat_get_activity(null) a
    where a.backend_xid = x::xid and a.datid <> (select oid from pg_database where datname = current_database())
  )
)`;

/** The channel an event-writing transaction NOTIFYs (payload: the tenant id), delivered at its commit. */
export const EVENTS_CHANNEL = 'crm_events';
