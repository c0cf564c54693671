import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Database, Db } from '../db/index.js';
import type { SqlDialect } from '../db/dialect.js';
import { directReads, type AbortSource, type Reads } from '../db/reads.js';

/**
 * Who makes a change, as the audit log records it (CONTRACT D.4): an API key (its id and name), a public form
 * (its id), the operator's CLI, or the service itself (`system`: the workers, the demo data); and, for requests,
 * their id, address and user agent.
 */
export interface Actor {
  type: 'api_key' | 'public_form' | 'operator' | 'system';
  id: string | null;
  name: string | null;
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null, name: null, requestId: null, ip: null, userAgent: null };
export const OPERATOR_ACTOR: Actor = { type: 'operator', id: null, name: null, requestId: null, ip: null, userAgent: null };

/** What a service needs to act for a caller: the database and the caller's tenant and user. */
export interface Ctx {
  db: Db;
  /** Data-dependent reads (lists, search, totals): off the event loop, with a deadline (db/reads.ts). */
  reads: Reads;
  dialect: SqlDialect;
  config: Config;
  tenantId: string;
  userId: string | null;
  /** Who acts (the audit log's actor). */
  actor: Actor;
}

/**
 * The one way to make a context (requests, the public form, workers, the CLI). `signal` tells the read
 * pool that nobody waits for the answer any more.
 */
export function contextFor(
  database: Database,
  config: Config,
  tenantId: string,
  userId: string | null,
  signal?: AbortSource,
  actor: Actor = SYSTEM_ACTOR,
): Ctx {
  return new DatabaseCtx(database, config, tenantId, userId, signal, actor);
}

/**
 * A class, not an object literal with a getter and closures: one allocation per request, on the point
 * reads' path, where an allocation per request shows in the CPU per request. Its `reads` is on the prototype, so a copy (`{ ...ctx }`)
 * would lose it: make another context with contextFor or inTx instead.
 */
class DatabaseCtx implements Ctx {
  readonly db: Db;
  readonly dialect: SqlDialect;
  private made: Reads | undefined;

  constructor(
    private readonly database: Database,
    readonly config: Config,
    readonly tenantId: string,
    readonly userId: string | null,
    private readonly signal: AbortSource | undefined,
    readonly actor: Actor,
  ) {
    this.db = database.db;
    this.dialect = database.dialect;
  }

  /** Made on first use: point reads and writes, most requests, never need it. */
  get reads(): Reads {
    // Inside a caller's transaction (setup and demo in the CLI) everything runs on it.
    return (this.made ??= this.db.isTransaction ? directReads(this.db) : this.database.readsFor(this.tenantId, this.signal));
  }
}

/**
 * Aborts a request's statements when its client goes away before the answer is written, so a query
 * nobody waits for is stopped. Listens on the socket only while a statement runs (keep-alive sockets
 * outlive many requests).
 */
export function requestSignal(req: FastifyRequest): AbortSource {
  return new SocketSignal(req.raw.socket, req.receivedAt || undefined);
}

class SocketSignal implements AbortSource {
  constructor(
    private readonly socket: Socket | null | undefined,
    readonly startedAt: number | undefined,
  ) {}

  get aborted(): boolean {
    return this.socket?.destroyed ?? false;
  }

  subscribe(onAbort: () => void): () => void {
    const socket = this.socket;
    if (!socket) return () => {};
    if (socket.destroyed) {
      queueMicrotask(onAbort);
      return () => {};
    }
    socket.once('close', onAbort);
    return () => socket.off('close', onAbort);
  }
}

export function ctxOf(req: FastifyRequest): Ctx {
  const { tenantId, userId } = req.principal;
  const actor = keyActor(req);
  // An idempotent POST runs on the transaction that also stores its answer (plugins/idempotency.ts).
  if (req.idempotencyTx) return txContext(req.idempotencyTx, req.server.database.dialect, req.server.config, tenantId, userId, actor);
  return contextFor(req.server.database, req.server.config, tenantId, userId, requestSignal(req), actor);
}

/** The API key of a request as the audit log's actor (made on every request: plain fields, no copy of the headers). */
export function keyActor(req: FastifyRequest): Actor {
  return requestActor(req, 'api_key', req.principal.keyId, req.principal.keyName);
}

/** A request's actor: `type`, its id and name, and the request's id, address and user agent. */
export function requestActor(req: FastifyRequest, type: Actor['type'], id: string | null, name: string | null): Actor {
  const ua = req.headers['user-agent'];
  return { type, id, name, requestId: String(req.id), ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null };
}

/** The same context inside a transaction. */
export function inTx(ctx: Ctx, db: Db): Ctx {
  // Field by field: a spread would call the `reads` getter, which opens the read pool's handle for nothing.
  return txContext(db, ctx.dialect, ctx.config, ctx.tenantId, ctx.userId, ctx.actor);
}

function txContext(db: Db, dialect: SqlDialect, config: Config, tenantId: string, userId: string | null, actor: Actor): Ctx {
  return { db, reads: directReads(db), dialect, config, tenantId, userId, actor };
}
