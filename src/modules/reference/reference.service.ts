import type { Ctx } from '../../http/context.js';
import * as repo from './reference.repo.js';
import type { LossReasonT, UserT } from './reference.schema.js';

/** GET /users (C.5): the tenant's users, to fill `ownerId`, `assignedToId` and the like. */
export async function listUsers(ctx: Ctx): Promise<UserT[]> {
  return repo.listUsers(ctx.db, ctx.dialect, ctx.tenantId);
}

/** GET /loss-reasons (C.5): the tenant's loss reasons, to fill a deal's `lossReasonId`. */
export async function listLossReasons(ctx: Ctx): Promise<LossReasonT[]> {
  return repo.listLossReasons(ctx.db, ctx.dialect, ctx.tenantId);
}
