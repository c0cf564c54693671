import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Scores that no read may carry (CONTRACT B.2: what a write answers is what every later read carries).
 *
 * Before B.2 was enforced at the edge (http/body-checks.ts), a `score` of `1e309` was parsed to Infinity and
 * stored as it was: the write answered `"score": null` (JSON has no Infinity), while the stored record (`doc`,
 * migration 014) said `9.0e+999` on SQLite and `"Infinity"` on PostgreSQL, which breaks typed clients on whole
 * pages. Such a score becomes null, what its write answered. On PostgreSQL a `-0` kept its sign in `doc` (`-0`)
 * where the write answered `0`: it becomes 0. (SQLite stores -0.0 as 0 and cannot store NaN; PostgreSQL could hold
 * a NaN only from the same road, and it is cleared too.) Every other stored number was written through
 * JSON.stringify (custom properties, events) or in cents (deals, proposals), which never keep either.
 *
 * `updated_at` stays: the value is the one the API answered when it was written.
 */
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') {
    await sql`update contacts set score = null where score in ('Infinity'::float8, '-Infinity'::float8, 'NaN'::float8)`.execute(db);
    await sql`update contacts set score = 0 where score = 0 and score::text = '-0'`.execute(db);
  } else {
    await sql`update contacts set score = null where score > 1.7976931348623157e308 or score < -1.7976931348623157e308`.execute(db);
  }
}
