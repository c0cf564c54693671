import type { Generated } from 'kysely';

/**
 * The event log's position of each event (migration 006, CONTRACT C.4): events are read in the order
 * (txid, seq). `seq` grows with every insert; `txid` is the inserting PostgreSQL transaction (0 on
 * SQLite, whose writers are serialized so that `seq` alone is commit order). See db/event-log.ts.
 */
export interface EventLogColumns {
  seq: Generated<number>;
  txid: Generated<number>;
}
