import { sql } from 'kysely';
import type { Db } from '../../db/index.js';

/** Deliveries still to be attempted: never deleted, nor the events they carry. */
const WAITING = ['pending', 'retry_scheduled'];

/**
 * Deletes up to `batch` events created before `cutoff`, oldest first, except those a delivery still
 * waits for (its attempt needs the payload); returns how many.
 */
export async function deleteOldEvents(db: Db, cutoff: string, batch: number): Promise<number> {
  const oldest = db
    .selectFrom('events as e')
    .select(['e.tenant_id', 'e.id'])
    .where('e.created_at', '<', cutoff)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries as d')
            .select(sql<number>`1`.as('one'))
            .whereRef('d.tenant_id', '=', 'e.tenant_id')
            .whereRef('d.event_id', '=', 'e.id')
            .where('d.status', 'in', WAITING),
        ),
      ),
    )
    .orderBy('e.created_at')
    .limit(batch);
  const r = await db
    .deleteFrom('events')
    .where(sql<boolean>`(tenant_id, id) in (${oldest})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
