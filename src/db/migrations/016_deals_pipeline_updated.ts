import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * `deals__pipeline_updated` (tenant_id, pipeline_id, updated_at, id, is_won, is_lost, stage_id) over live deals: a
 * list of deals filtered by pipeline (`GET /deals?pipelineId=`, spec 4.3; a board's column reads it), in its default
 * order (`updated_at`, ties by id), walks that pipeline's entries only (listing.ts walksTimeIndex, DEAL_WALK), and
 * tests `isWon`, `isLost` and `stageId` on the entries it walks, reading the row of the deals that pass only
 * (listing.ts walkCoversFilter). Before, the page walked `deals__updated` over every deal of the tenant and read
 * each row to test its pipeline and state: up to ~600 rows for page 10, which at 100,000 deals the writer's page
 * cache does not hold (bench/RESULTS.md, 2026-11-29: ×1.35–1.40 the cost of the same page at 2,000 deals).
 *
 * Migration 011 left deals without such an index because `updated_at` moves on every update of a deal, so every
 * update now moves an entry here too, as it already did in `deals__updated`. PostgreSQL takes it too, so both
 * schemas stay one.
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await sql`create index deals__pipeline_updated on deals (tenant_id, pipeline_id, updated_at, id, is_won, is_lost, stage_id) where deleted_at is null`.execute(db);
}
