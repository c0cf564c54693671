import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * `deals__pipeline_updated` (tenant_id, pipeline_id, updated_at, id, is_won, is_lost, stage_id) over live deals: a
 * list of deals filtered by pipeline (`GET /deals?pipelineId=`, spec 4.3; a board's column reads it), in its default
 * order (`updated_at`, ties by id), walks that pipeline's entries only (listing.ts walksTimeIndex, PIPELINE_WALK), and
 * tests `isWon`, `isLost` and `stageId` on the entries it walks, reading the row of the deals that pass only
 * (listing.ts walkCoversFilter). Before, the page walked `deals__updated` over every deal of the tenant and read
 * each row to test its pipeline and state. On the bench's single pipeline, with the probe that cuts its page from
 * the entries (listing.ts compileProbe), a page costs 2–5 % less; with several pipelines, a page no longer walks the
 * other pipelines' deals (bench/journal/).
 *
 * Migration 011 left deals without such an index because `updated_at` moves on every update of a deal, so every
 * update now moves an entry here too, as it already did in `deals__updated`. PostgreSQL takes it too, so both
 * schemas stay one.
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await sql`create index deals__pipeline_updated on deals (tenant_id, pipeline_id, updated_at, id, is_won, is_lost, stage_id) where deleted_at is null`.execute(
    db,
  );
}
