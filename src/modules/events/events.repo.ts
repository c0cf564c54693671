import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import type { DialectName } from '../../db/dialect.js';
import { eventVisible } from '../../db/event-log.js';
import { TEST_EVENT } from '../../events/catalog.js';

/** Where an event sits in the log: read in the order (txid, seq) (db/event-log.ts). */
export interface EventPosition {
  txid: number;
  seq: number;
}

export interface EventFilter {
  /** Event keys to keep; undefined: every type of the catalog. */
  types?: string[];
  /** Strictly after this position. */
  after?: EventPosition;
}

export interface EventRow {
  id: string;
  type: string;
  payload: string;
  seq: number;
}

/** The log's position of one event of the tenant (a point read by primary key); undefined when absent. */
export async function findPosition(db: Db, tenantId: string, id: string): Promise<EventPosition | undefined> {
  const row = await db
    .selectFrom('events')
    .select(['txid', 'seq'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('type', '<>', TEST_EVENT)
    .executeTakeFirst();
  return row && { txid: Number(row.txid), seq: Number(row.seq) };
}

function matching(db: Db, tenantId: string, f: EventFilter) {
  // The pings of `POST /webhooks/:id/test` share the table but are no change of the tenant's data.
  let base = db.selectFrom('events').where('tenant_id', '=', tenantId).where('type', '<>', TEST_EVENT);
  if (f.types) base = base.where('type', 'in', f.types);
  if (f.after) base = base.where(sql<boolean>`(txid, seq) > (${f.after.txid}, ${f.after.seq})`);
  return base;
}

/**
 * The readable events of the tenant matching the filter, for the listing layer (keyset on (txid, seq),
 * one range of the index events__log).
 */
export function eventListing(db: Db, dialect: DialectName, tenantId: string, f: EventFilter) {
  let base = matching(db, tenantId, f);
  const visible = eventVisible(dialect);
  if (visible) base = base.where(visible);
  const select = (qb: typeof base) => qb.select(['id', 'type', 'payload', 'seq']);
  return { base, select };
}

/**
 * Whether events of these types are committed but not readable yet (PostgreSQL: an older transaction is
 * still in flight, db/event-log.ts); such events sort after every readable one. Undefined on SQLite,
 * where every committed event is readable.
 */
export function unreadableExists(db: Db, dialect: DialectName, tenantId: string, types: string[] | undefined) {
  const visible = eventVisible(dialect);
  if (!visible) return undefined;
  return matching(db, tenantId, { types })
    .where(sql<boolean>`not ${visible}`)
    .select(sql<number>`1`.as('one'))
    .limit(1);
}
