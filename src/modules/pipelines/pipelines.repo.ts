import type { Db } from '../../db/index.js';
import type { PipelinesTable, StagesTable } from '../../db/tables/config.js';

const PIPELINE_COLUMNS = ['id', 'name', 'is_default', 'display_order'] as const;
const STAGE_COLUMNS = ['id', 'pipeline_id', 'name', 'display_order', 'probability', 'is_won_stage', 'is_lost_stage'] as const;
export type PipelineRow = Pick<PipelinesTable, (typeof PIPELINE_COLUMNS)[number]>;
export type StageRow = Pick<StagesTable, (typeof STAGE_COLUMNS)[number]>;

export function listPipelines(db: Db, tenantId: string): Promise<PipelineRow[]> {
  return db.selectFrom('pipelines').select(PIPELINE_COLUMNS).where('tenant_id', '=', tenantId).orderBy('display_order').orderBy('id').execute();
}

export function findPipeline(db: Db, tenantId: string, id: string): Promise<PipelineRow | undefined> {
  return db.selectFrom('pipelines').select(PIPELINE_COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Stages of the tenant (of one pipeline when given), by pipeline then displayOrder. */
export function listStages(db: Db, tenantId: string, pipelineId?: string): Promise<StageRow[]> {
  let q = db.selectFrom('stages').select(STAGE_COLUMNS).where('tenant_id', '=', tenantId);
  if (pipelineId !== undefined) q = q.where('pipeline_id', '=', pipelineId);
  return q.orderBy('pipeline_id').orderBy('display_order').orderBy('id').execute();
}

export function findStage(db: Db, tenantId: string, id: string): Promise<StageRow | undefined> {
  return db.selectFrom('stages').select(STAGE_COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** A new pipeline and its stages (tenant configuration: `crm setup apply`). */
export async function insertPipeline(db: Db, pipeline: PipelinesTable, stages: StagesTable[]): Promise<void> {
  await db.insertInto('pipelines').values(pipeline).execute();
  await db.insertInto('stages').values(stages).execute();
}
