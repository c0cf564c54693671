import { sql } from 'kysely';
import { dialectOf } from './dialect.js';
import type { Database } from './database.js';
import type { Db } from './types.js';
import { listen, type Listener, type ListenLog } from './listen.js';

/**
 * NOTIFY `channel` with `payload`, in the caller's transaction when `db` is one: PostgreSQL delivers it
 * on commit only (and drops it on rollback), to every process LISTENing (listenTo). Nothing on SQLite,
 * which has no such channel: callers wake their in-process listeners themselves. Answers whether a
 * notification was sent.
 */
export async function notify(db: Db, channel: string, payload = ''): Promise<boolean> {
  if (!dialectOf(db).notifies) return false;
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
  return true;
}

/**
 * One LISTEN connection on `channel` (db/listen.ts) when the database has one (PostgreSQL); null
 * otherwise (SQLite: in-process wake-ups only).
 */
export function listenTo(
  database: Pick<Database, 'dialect' | 'pool'>,
  channel: string,
  onNotify: (payload: string) => void,
  onReconnect: () => void,
  log: ListenLog,
): Listener | null {
  if (!database.dialect.notifies || !database.pool) return null;
  return listen(database.pool, channel, onNotify, onReconnect, log);
}
