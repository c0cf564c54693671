import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * SQLite: the TTL sweep of stored idempotent answers walks the table in rowid order, which is the order
 * of `created_at` (a row is only ever inserted with the time of its request, and `created_at` is never
 * updated), so the `created_at` index goes. Every idempotent POST wrote one page of it to the WAL and
 * copied it at the next checkpoint: about 2 % of that POST's throughput. PostgreSQL has no such order
 * and keeps the index (plugins/idempotency.ts deleteExpiredIdempotencyKeys).
 */
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'sqlite') await sql`drop index idempotency_keys__created`.execute(db);
}
