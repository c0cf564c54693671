import type { Generated } from 'kysely';

/**
 * The event log's position of each event (migrations 006 and 008, CONTRACT C.4): `seq` grows with every
 * insert, and within a tenant it is the commit order of the events' transactions (db/event-log.ts).
 */
export interface EventLogColumns {
  seq: Generated<number>;
}
