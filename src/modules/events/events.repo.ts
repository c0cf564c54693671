import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Listing } from '../../listing/descriptor.js';
import { TEST_EVENT } from '../../events/catalog.js';

/** Where an event sits in the log: its `seq`, the commit order within the tenant (db/event-log.ts). */
export type EventPosition = number;

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
    .select('seq')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('type', '<>', TEST_EVENT)
    .executeTakeFirst();
  return row && Number(row.seq);
}

function matching(db: Db, tenantId: string, f: EventFilter) {
  // The pings of `POST /webhooks/:id/test` share the table but are no change of the tenant's data.
  let base = db.selectFrom('events').where('tenant_id', '=', tenantId).where('type', '<>', TEST_EVENT);
  if (f.types) base = base.where('type', 'in', f.types);
  if (f.after !== undefined) base = base.where('seq', '>', f.after);
  return base;
}

/** The events of the tenant matching the filter, for the listing layer (keyset on seq, one range of events__log). */
export function eventListing(db: Db, tenantId: string, f: EventFilter) {
  const base = matching(db, tenantId, f);
  const select = (qb: typeof base) => qb.select(['id', 'type', 'payload', 'seq']);
  return { base, select };
}

/** The event log (GET /events): oldest first, by its position (`seq`, unique). */
export const EVENT_LISTING: Listing<EventFilter, 'position'> = {
  sort: { position: { column: 'seq', nullable: false } },
  query: eventListing,
  idColumn: 'seq',
};

/** `text` as a LIKE pattern that matches it anywhere, its wildcards escaped (with `\\`). */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The tenant's events whose payload holds one of `needles` (D.5: an erased contact's id, e-mail, phone). */
export function eventsMentioning(db: Db, tenantId: string, needles: readonly string[]) {
  return db
    .selectFrom('events')
    .select(['id', 'payload'])
    .where('tenant_id', '=', tenantId)
    .where(({ or }) => or(needles.map((n) => sql<boolean>`payload like ${containing(n)} escape '\\'`)))
    .execute();
}

/** Replaces an event's payload (D.5: the same event, its erased values gone). */
export async function rewritePayload(db: Db, tenantId: string, id: string, payload: string): Promise<void> {
  await db.updateTable('events').set({ payload }).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}
