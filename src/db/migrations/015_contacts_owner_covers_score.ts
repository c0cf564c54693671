import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * `score` appended to `contacts__owner` (tenant_id, owner_id, created_at, id), so that the index the spec's
 * search walks (`POST /contacts/search` with `ownerId eq` and `score gte`, spec 4.1; listing.ts probes it on
 * SQLite) holds the score of each entry: the probe tests the score on the index entries and reads the row of
 * the contacts that pass only (listing.ts walkCoversFilter), instead of the row of every contact it walks. On the
 * bench's search (~200 entries walked for a page of 50, ~150 of them failing the score): server CPU per search
 * 348–352 → 290–295 µs, 2,905–2,918 → 3,457–3,523 searches/s (bench/journal/).
 *
 * Same name, same rows and the same leading columns, so every plan that used the index still does (list-index
 * and sqlite-stats tests); a write of a contact's score now also moves its entry in this index, which already
 * moved in `contacts__score` and `contacts__owner_score`. PostgreSQL takes it too, so both schemas stay one.
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  for (const statement of [
    sql`drop index contacts__owner`,
    sql`create index contacts__owner on contacts (tenant_id, owner_id, created_at, id, score) where deleted_at is null`,
  ]) {
    await statement.execute(db);
  }
}
