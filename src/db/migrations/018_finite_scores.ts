import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Scores that no read may carry (CONTRACT B.2: what a write answers is what every later read carries).
 *
 * Before B.2 was enforced at the edge (http/body-checks.ts), a `score` of `1e309` was parsed to Infinity and
 * stored as it was: the write answered `"score": null` (JSON has no Infinity), while the stored record (`doc`,
 * migration 014) said `9.0e+999` on SQLite and `"Infinity"` on PostgreSQL, which breaks typed clients on whole
 * pages. Such a score becomes null, what its write answered; a NaN, which no JSON body carries, is cleared all the
 * same on PostgreSQL (SQLite stores none). Every other stored number was written through JSON.stringify
 * (custom properties, events, which write null for either) or checked finite (deals and proposals, in cents). A -0
 * never reached a table: both drivers bind it as 0.
 *
 * `updated_at` stays: the value is the one the API answered when it was written.
 */
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') {
    await sql`update contacts set score = null where score in ('Infinity'::float8, '-Infinity'::float8, 'NaN'::float8)`.execute(db);
  } else {
    await sql`update contacts set score = null where score > 1.7976931348623157e308 or score < -1.7976931348623157e308`.execute(db);
  }
}
