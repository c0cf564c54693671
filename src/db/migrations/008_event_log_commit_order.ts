import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * The event log is read in `seq` order alone (db/event-log.ts): events are now written at commit, under
 * a per-tenant lock, so `seq` is commit order within a tenant on both databases and `txid` goes.
 * - SQLite: `txid` was always 0; `seq` is already the order.
 * - PostgreSQL: existing events are renumbered in their old order (txid, seq), so that a client holding
 *   a position (an event id) goes on exactly where it was; new events are numbered after all of them.
 */
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const statements = [
    sql`drop index events__log`,
    ...(dialect === 'postgres'
      ? [
          sql`update events set seq = o.n from (select tenant_id, id, row_number() over (order by txid, seq) as n from events) o
            where events.tenant_id = o.tenant_id and events.id = o.id`,
          sql`select setval(pg_get_serial_sequence('events', 'seq'), (select coalesce(max(seq), 0) + 1 from events), false)`,
        ]
      : []),
    sql`alter table events drop column txid`,
    // Reading after a position is one index range, whatever the size of the log.
    sql`create index events__log on events (tenant_id, seq)`,
  ];
  for (const s of statements) await s.execute(db);
}
