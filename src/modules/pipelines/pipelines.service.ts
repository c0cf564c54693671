import { errors } from '../../errors.js';
import type { Ctx } from '../../http/context.js';
import * as repo from './pipelines.repo.js';
import type { PipelineT, StageT } from './pipelines.schema.js';

/** What the deals module needs to know about a stage. */
export interface StageInfo {
  id: string;
  pipelineId: string;
  isWonStage: boolean;
  isLostStage: boolean;
}

function toStage(s: repo.StageRow): StageT {
  return {
    id: s.id,
    name: s.name,
    displayOrder: s.display_order,
    probability: Number(s.probability),
    isWonStage: s.is_won_stage === 1,
    isLostStage: s.is_lost_stage === 1,
  };
}

function toPipeline(p: repo.PipelineRow, stages: repo.StageRow[]): PipelineT {
  return { id: p.id, name: p.name, isDefault: p.is_default === 1, displayOrder: p.display_order, stages: stages.map(toStage) };
}

/** Every pipeline of the tenant with its stages, by displayOrder: two queries whatever the count. */
export async function listPipelines(ctx: Ctx): Promise<PipelineT[]> {
  const [pipelines, stages] = await Promise.all([repo.listPipelines(ctx.db, ctx.tenantId), repo.listStages(ctx.db, ctx.tenantId)]);
  const byPipeline = new Map<string, repo.StageRow[]>(pipelines.map((p) => [p.id, []]));
  for (const s of stages) byPipeline.get(s.pipeline_id)?.push(s);
  return pipelines.map((p) => toPipeline(p, byPipeline.get(p.id)!));
}

/** The pipeline with its stages, or undefined when it is not the tenant's. */
export async function findPipeline(ctx: Ctx, id: string): Promise<PipelineT | undefined> {
  const p = await repo.findPipeline(ctx.db, ctx.tenantId, id);
  if (!p) return undefined;
  return toPipeline(p, await repo.listStages(ctx.db, ctx.tenantId, id));
}

/** The pipeline with its stages; 404 `not_found` when it is not the tenant's. */
export async function getPipeline(ctx: Ctx, id: string): Promise<PipelineT> {
  const p = await findPipeline(ctx, id);
  if (!p) throw errors.notFound('Pipeline not found');
  return p;
}

/** A stage of the tenant with its pipeline and won/lost flags, or undefined. */
export async function getStage(ctx: Ctx, stageId: string): Promise<StageInfo | undefined> {
  const s = await repo.findStage(ctx.db, ctx.tenantId, stageId);
  if (!s) return undefined;
  return { id: s.id, pipelineId: s.pipeline_id, isWonStage: s.is_won_stage === 1, isLostStage: s.is_lost_stage === 1 };
}
