import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { SqlDialect } from '../db/dialect.js';

/** What a service needs to act for a caller: the database and the caller's tenant and user. */
export interface Ctx {
  db: Db;
  dialect: SqlDialect;
  config: Config;
  tenantId: string;
  userId: string | null;
}

export function ctxOf(req: FastifyRequest): Ctx {
  const { database, config } = req.server;
  return { db: database.db, dialect: database.dialect, config, tenantId: req.principal.tenantId, userId: req.principal.userId };
}

/** The same context inside a transaction. */
export function inTx(ctx: Ctx, db: Db): Ctx {
  return { ...ctx, db };
}
