import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Db } from './types.js';
import type { DB } from './tables/schema.js';

/**
 * The place of a row in an append-only table whose rows are inserted in `created_at` order and never re-dated
 * (idempotency_keys): its key columns and its creation time.
 */
export interface InsertionOrdered<T extends keyof DB> {
  table: T;
  /** The primary key's columns, for PostgreSQL's delete by key. */
  key: readonly (keyof DB[T] & string)[];
  createdAt: keyof DB[T] & string;
}

/**
 * Deletes up to `batch` of the oldest rows of `t` created before `cutoff`, in one statement; returns how many.
 *
 * SQLite: the oldest rows are the first in rowid order (rows are inserted in `created_at` order, so no index on
 * it is needed: migration 010), so the statement looks at the first `batch` rows and deletes those past the
 * cutoff; fewer than `batch` deleted means the window held a younger row, and every later row is younger too.
 * PostgreSQL has no such order: the oldest rows are found by the `created_at` index and deleted by key.
 */
export async function deleteOldestInserted<T extends keyof DB>(db: Db, t: InsertionOrdered<T>, cutoff: string, batch: number): Promise<number> {
  // The table is a parameter: Kysely's types cannot follow a table name chosen by the caller.
  const q = db as unknown as Kysely<any>;
  const table: string = t.table;
  const key: readonly string[] = t.key;
  const createdAt: string = t.createdAt;
  if (!isPostgres(db)) {
    const window = q
      .selectFrom(table)
      .select(sql`rowid`.as('r'))
      .orderBy(sql`rowid`)
      .limit(batch);
    const r = await q
      .deleteFrom(table)
      .where(sql`rowid`, 'in', window)
      .where(createdAt, '<', cutoff)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
  const oldest = q.selectFrom(table).select(key).where(createdAt, '<', cutoff).orderBy(createdAt).limit(batch);
  const columns = sql.join(key.map((c) => sql.ref(c)));
  const r = await q
    .deleteFrom(table)
    .where(sql<boolean>`(${columns}) in (${oldest})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
