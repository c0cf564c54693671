import { createHash, hash } from 'node:crypto';
import fp from 'fastify-plugin';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { openTransaction, type Database, type Db, type OpenTransaction, type SavepointState } from '../db/index.js';
import { rollbackToSavepoint, savepoint, tryAdvisoryXactLock } from '../db/locks.js';
import * as repo from '../modules/shared/idempotency.repo.js';
import { errorBody, errors } from '../errors.js';
import { clientErrorOf } from '../db/errors.js';
import { answerKeyOf, openAnswer, sealAnswer } from '../modules/shared/idempotency-answers.js';
import { canonicalJson } from '../util/json.js';
import { routeHooks } from '../http/route-hooks.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The transaction an idempotent POST runs in (C.3); `ctxOf` runs the handler on it. */
    idempotencyTx: Db | null;
    /** This plugin's state of the request's run (a `Run`); a decoration is cheaper than a WeakMap. */
    idempotencyRun: unknown;
  }
  interface FastifyContextConfig {
    /**
     * The handler waits on the network (a webhook test): it runs outside the idempotency transaction,
     * which would otherwise hold SQLite's one writer for the whole call (see `begin`).
     */
    idempotencyOutbound?: boolean;
  }
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
const REPLAYED_DOC_NAME = 'Idempotent-Replayed';
const REPLAYED_DOC = {
  type: 'string',
  enum: ['true'],
  description: '`true` when this answer is the stored answer of an earlier request with the same `Idempotency-Key`; absent otherwise',
};
const KEY_PATTERN = '^[\\x21-\\x7E]{1,255}$';
const SAVEPOINT = 'idempotent_run';
const { PENDING } = repo;

/**
 * The 400s of a request refused as sent (its body or headers did not pass the checks): C.3 stores nothing for
 * them, so that a corrected retry with the same key runs. Any other 400 is a business error of a request that
 * ran (the spec's `duplicate_proposal_for_deal`), stored like a 409.
 */
const REFUSED_AS_SENT = new Set([
  'validation_failed',
  'invalid_json',
  'invalid_format',
  'invalid_url',
  'invalid_event',
  'invalid_status',
  'invalid_cursor',
  'invalid_request',
  'bad_request',
]);

/**
 * Answers a request that ran kept for a replay: success, and the business errors of a request that
 * did run (404 a reference missing, 409 a conflict, 422 a rule, a 400 whose `error` is not a refusal of the
 * request as sent). Refusals mean the request was not acceptable as sent, so a corrected retry with the same
 * key must run (C.3); 5xx changed nothing (rolled back), so the retry may run too. `body` is the answer's JSON
 * text (read only for a 400).
 */
export function storesAnswer(status: number, body?: string | null): boolean {
  if (status === 400) return body != null && !REFUSED_AS_SENT.has(errorCodeOf(body));
  return (status >= 200 && status < 400) || status === 404 || status === 409 || status === 422;
}

function errorCodeOf(body: string): string {
  try {
    const code = (JSON.parse(body) as { error?: unknown }).error;
    return typeof code === 'string' ? code : 'validation_failed';
  } catch {
    return 'validation_failed';
  }
}

export const IDEMPOTENCY_DOC =
  'Optional. 1–255 visible ASCII characters (0x21–0x7E), else 400 `validation_failed`. The first request with a key ' +
  'runs, and its status and body are stored with its change, in the same transaction, for 24 hours (by default) ' +
  'per API key. A repeat with the same method, path and body answers the stored status and body with ' +
  '`Idempotent-Replayed: true` and changes nothing; with another method, path or body it is 422 ' +
  '`idempotency_key_reused`; while the first is still running it is 409 `idempotency_key_in_use` with `Retry-After: 1`. ' +
  'Stored: successes and the business errors of a request that ran (404, 409, 422, and a 400 such as ' +
  '`duplicate_proposal_for_deal`, as Stripe does). Not stored: refusals before the request ran (401, 403, 429, and the ' +
  '400s of a request refused as sent: `validation_failed`, `invalid_json` and the other `invalid_*`) and 5xx (nothing ' +
  'changed): a retry with the same key runs. ' +
  'Replays count against the rate limit.';

function fingerprint(req: FastifyRequest): string {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  return hash('sha256', `${req.method}\n${path}\n${canonicalJson(req.body)}`, 'hex');
}

/** A signed 64-bit advisory lock id for (API key, idempotency key). */
export function lockId(keyId: string, idemKey: string): string {
  const h = createHash('sha256').update(`crm-idempotency\0${keyId}\0${idemKey}`).digest();
  return h.readBigInt64BE(0).toString();
}

interface Run {
  open: OpenTransaction;
  /** Outbound mode: the claim is committed as PENDING and the answer written after the handler. */
  pending: boolean;
  slot: string;
  tenantId: string;
  keyId: string;
  idemKey: string;
  fingerprint: string;
  /** Set once the transaction is committed or rolled back. */
  ended: boolean;
  /** The transaction's state at the run's savepoint, where the dialect sets one (see IdempotentRuns.claim). */
  savepoint?: SavepointState;
}

/** A POST that changes data: a POST whose scopes are all `:read` (search, batch read) changes nothing. */
function isMutatingPost(route: RouteOptions): boolean {
  const methods = [route.method].flat();
  if (!methods.includes('POST') || !route.url.startsWith('/api/v1/') || route.config?.public) return false;
  const scopes = route.config?.scopes ?? [];
  return scopes.some((s) => !s.endsWith(':read'));
}

/**
 * C.3: the same key on another method is a reuse. PATCH and DELETE are idempotent by nature and store
 * nothing, but a key already spent on a POST is refused on them rather than silently ignored.
 */
function isKeyedUpdate(route: RouteOptions): boolean {
  const methods = [route.method].flat();
  return route.url.startsWith('/api/v1/') && !route.config?.public && methods.some((m) => m === 'PATCH' || m === 'PUT' || m === 'DELETE');
}

const hours = (h: number) => h * 3_600_000;

export interface IdempotencyOptions {
  database: Database;
  ttlHours: number;
  /** How long a PENDING claim holds its key; past it the claimant is taken for dead (a crash). */
  outboundLeaseMs: number;
}

/** The answer's body as onSend sees it: text, null when there is none, undefined for a stream (never stored). */
function bodyText(payload: unknown): string | null | undefined {
  return typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload == null ? null : undefined;
}

/**
 * The answer written when an idempotent request's transaction could not commit: the change was not made, so
 * the client must not see it as done. A database that went away (or a crossed writer) is the contract's 503
 * (409) with Retry-After, as anywhere else; anything else a 500.
 */
function commitFailure(req: FastifyRequest, reply: FastifyReply, err: unknown): string {
  const known = clientErrorOf(err);
  reply.header('content-type', 'application/json; charset=utf-8');
  reply.removeHeader(REPLAYED_HEADER);
  if (known) {
    req.log.warn({ err }, 'idempotent request could not be committed');
    for (const [k, v] of Object.entries(known.headers)) reply.header(k, v);
    reply.code(known.statusCode);
    return JSON.stringify(errorBody(known));
  }
  req.log.error({ err }, 'idempotent request could not be committed');
  reply.code(500);
  return JSON.stringify(errorBody(errors.internal(String(req.id))));
}

const runOf = (req: FastifyRequest) => req.idempotencyRun as Run | null;

/**
 * The idempotent requests of one app, in four steps: `begin` claims the key (or answers a replay, 409 or 422)
 * before the handler; `finish` stores the answer with the change in onSend; `settlePending` does it for an
 * outbound route, whose claim committed before the handler; `abandon` ends a run that never reached onSend.
 * `inFlight` holds the keys this process is running.
 */
class IdempotentRuns {
  private readonly inFlight = new Set<string>();
  private readonly db: Db;
  private readonly ttlMs: number;
  /** The dialect's locks: the advisory lock across processes, and a savepoint to roll an error answer back to. */
  private readonly locks: boolean;
  private readonly savepoints: boolean;
  private sealKey: Buffer | undefined;

  constructor(
    private readonly opts: IdempotencyOptions,
    private readonly secretKey: () => Buffer,
  ) {
    this.db = opts.database.db;
    this.ttlMs = hours(opts.ttlHours);
    this.locks = opts.database.dialect.locksRows;
    this.savepoints = opts.database.dialect.cheapSavepoints;
  }

  // Derived at first use: the key is the configuration's to load (and to refuse when missing).
  private answerKey(): Buffer {
    return (this.sealKey ??= answerKeyOf(this.secretKey()));
  }

  private isLive(stored: repo.StoredAnswer): boolean {
    return Date.parse(stored.created_at) + (stored.status_code === PENDING ? this.opts.outboundLeaseMs : this.ttlMs) > Date.now();
  }

  /** preHandler of a mutating POST with the header: the run begins, or a stored answer is given. */
  async begin(req: FastifyRequest, reply: FastifyReply, pending: boolean): Promise<FastifyReply | undefined> {
    const idemKey = req.headers[IDEMPOTENCY_HEADER];
    if (typeof idemKey !== 'string') return; // absent (a malformed one was refused by validation)
    const run = await this.open(req, idemKey, pending);
    try {
      return await this.claim(req, reply, run);
    } catch (err) {
      await this.end(req, run, false).catch(() => {});
      throw err;
    }
  }

  /** Takes the key in this process and opens the run's transaction. */
  private async open(req: FastifyRequest, idemKey: string, pending: boolean): Promise<Run> {
    const { tenantId, keyId } = req.principal;
    const slot = `${keyId}\0${idemKey}`;
    if (this.inFlight.has(slot)) throw errors.idempotencyKeyInUse();
    const print = fingerprint(req);
    // NOTE: the key is looked up once, inside the transaction: a first request (the common case) pays one
    // read, and a replay takes the write transaction briefly and rolls it back.
    this.inFlight.add(slot);
    try {
      const open = await openTransaction(this.db);
      return { open, pending, slot, tenantId, keyId, idemKey, fingerprint: print, ended: false };
    } catch (err) {
      this.inFlight.delete(slot);
      throw err;
    }
  }

  /** In the run's transaction: the key's lock across processes, its stored row, then the claim. */
  private async claim(req: FastifyRequest, reply: FastifyReply, run: Run): Promise<FastifyReply | undefined> {
    const { tx } = run.open;
    // Where the dialect locks at all (PostgreSQL): without row locks (SQLite), BEGIN IMMEDIATE has already
    // serialized the writers, and the lock id's hash would be paid for nothing on every idempotent POST.
    if (this.locks && !(await tryAdvisoryXactLock(tx, lockId(run.keyId, run.idemKey)))) throw errors.idempotencyKeyInUse();
    // Again inside the transaction: another process may have committed since the first look.
    const stored = await repo.findAnswer(tx, run.tenantId, run.keyId, run.idemKey);
    if (stored && this.isLive(stored)) {
      await this.end(req, run, false);
      return this.replay(stored, run, reply);
    }
    // Past its TTL but not swept yet, or a claim left by a crash: the key is free again.
    if (stored) await repo.deleteAnswer(tx, run);
    if (run.pending) {
      // NOTE: C.3 gap — a webhook test waits up to WEBHOOK_TIMEOUT_MS on the destination. Inside the
      // transaction that would stall every write of the process on SQLite, so the claim is committed
      // first (repeats see it: 409) and the answer stored after; a crash in between leaves a claim
      // that expires after outboundLeaseMs, and the retry then sends another test ping (harmless).
      await repo.insertAnswer(tx, run.tenantId, run.keyId, run.idemKey, run.fingerprint, PENDING, null, new Date().toISOString());
      await run.open.commit();
      req.idempotencyRun = run;
      return undefined;
    }
    // Business errors roll back to here and are still stored (see storesAnswer). On SQLite the
    // savepoint's sub-journal (a copy of every page the handler touches) was a third of what storing an
    // answer cost; an error answer there rolls the whole transaction back instead (see undoChange).
    if (this.savepoints) run.savepoint = await savepoint(tx, SAVEPOINT);
    req.idempotencyRun = run;
    req.idempotencyTx = tx;
    return undefined;
  }

  /** A live record answers the request: a replay, a reuse (422) or a claim still running (409). */
  private replay(stored: repo.StoredAnswer, run: Run, reply: FastifyReply): FastifyReply {
    if (stored.fingerprint !== run.fingerprint) throw errors.idempotencyKeyReused();
    if (stored.status_code === PENDING) throw errors.idempotencyKeyInUse();
    if (stored.body === null) return reply.code(stored.status_code).header(REPLAYED_HEADER, 'true').send();
    const body = openAnswer(this.answerKey(), { ...run, status: stored.status_code }, stored.body);
    reply.code(stored.status_code).header(REPLAYED_HEADER, 'true');
    return reply.header('content-type', 'application/json; charset=utf-8').send(body);
  }

  /** Commits or rolls back the run's transaction, once, and frees its key. */
  private async end(req: FastifyRequest, run: Run, commit: boolean): Promise<void> {
    if (run.ended) return;
    run.ended = true;
    req.idempotencyTx = null;
    try {
      if (commit) await run.open.commit();
      else await run.open.rollback();
    } finally {
      this.inFlight.delete(run.slot);
    }
  }

  /** onSend: the answer is stored with the change and both commit before a byte is written (or neither). */
  async finish(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const run = runOf(req);
    if (!run || run.ended) return payload;
    req.idempotencyRun = null;
    const status = reply.statusCode;
    const body = bodyText(payload);
    if (run.pending) {
      await this.settlePending(req, run, status, body);
      return payload;
    }
    if (!storesAnswer(status, body)) {
      await this.end(req, run, false);
      return payload;
    }
    try {
      await this.store(req, run, status, body);
      return payload;
    } catch (err) {
      await this.end(req, run, false).catch(() => {});
      // Written here rather than thrown, because onSend errors would run the send pipeline (and this hook) again.
      return commitFailure(req, reply, err);
    }
  }

  /** Stores the answer in the run's transaction and commits it (an error answer without the request's writes). */
  private async store(req: FastifyRequest, run: Run, status: number, body: string | null | undefined): Promise<void> {
    // A stream cannot be kept for a replay: refuse to commit rather than store a wrong answer.
    if (body === undefined) throw new Error('idempotent route answered a stream');
    if (status >= 400 && !(await this.undoChange(run))) return this.end(req, run, true);
    const sealed = sealAnswer(this.answerKey(), run, status, body);
    await repo.insertAnswer(run.open.tx, run.tenantId, run.keyId, run.idemKey, run.fingerprint, status, sealed, new Date().toISOString());
    await this.end(req, run, true);
  }

  /**
   * Undoes a failed request's writes before its error answer is stored: back to the run's savepoint, or without
   * one the whole transaction, and the answer goes in a new one. False when, in between, another process
   * stored an answer for the key: that answer stands.
   */
  private async undoChange(run: Run): Promise<boolean> {
    if (run.savepoint) {
      await rollbackToSavepoint(run.open.tx, SAVEPOINT, run.savepoint);
      return true;
    }
    // NOTE: C.3 on SQLite — this process still holds the key (inFlight), so no repeat runs in between here;
    // another process on the same file could.
    await run.open.rollback();
    run.open = await openTransaction(this.db);
    return (await repo.findAnswer(run.open.tx, run.tenantId, run.keyId, run.idemKey)) === undefined;
  }

  /** Outbound mode: the handler's own transactions have committed; the claim becomes the answer. */
  async settlePending(req: FastifyRequest, run: Run, status: number, body: string | null | undefined): Promise<void> {
    run.ended = true;
    try {
      if (body !== undefined && storesAnswer(status, body)) await repo.settleClaim(this.db, run, status, sealAnswer(this.answerKey(), run, status, body));
      else await repo.dropClaim(this.db, run);
    } catch (err) {
      // The change is committed either way; the claim expires after its lease.
      req.log.error({ err }, 'idempotent answer could not be stored');
    } finally {
      this.inFlight.delete(run.slot);
    }
  }

  /** onResponse, a safety net: a response that ended without passing onSend must not leave the transaction open. */
  readonly abandon = (req: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    const run = runOf(req);
    if (!run || run.ended) return done();
    req.idempotencyRun = null;
    (run.pending ? this.settlePending(req, run, 500, undefined) : this.end(req, run, false)).catch(() => {}).finally(done);
  };

  /** preHandler of PATCH, PUT and DELETE: a key spent on a POST within the TTL is refused (isKeyedUpdate). */
  readonly refuseReuse = async (req: FastifyRequest): Promise<void> => {
    const idemKey = req.headers[IDEMPOTENCY_HEADER];
    if (typeof idemKey !== 'string' || idemKey === '') return;
    const at = await repo.answeredAt(this.db, req.principal.tenantId, req.principal.keyId, idemKey);
    if (at !== undefined && Date.parse(at) + this.ttlMs > Date.now()) throw errors.idempotencyKeyReused();
  };
}

/** A mutating POST's schema: the Idempotency-Key header, its 409 and 422, and the replay header of stored answers. */
function documentPost(route: RouteOptions): void {
  const schema = (route.schema ??= {}) as Record<string, any>;
  schema.headers = Type.Object(
    {
      ...(schema.headers?.properties ?? {}),
      // Lower case: the validator compiler of app.ts sees header names as Node stores them.
      [IDEMPOTENCY_HEADER]: Type.Optional(Type.String({ pattern: KEY_PATTERN, minLength: 1, maxLength: 255, description: IDEMPOTENCY_DOC })),
    },
    { additionalProperties: true },
  );
  const response = (schema.response ??= {}) as Record<string, Record<string, unknown>>;
  const also = (status: number, text: string) => {
    const given = response[status];
    response[status] = given
      ? { ...given, description: `${String(given.description ?? 'Error')}; or ${text}` }
      : { $ref: 'Error#', description: text[0].toUpperCase() + text.slice(1) };
  };
  also(409, '`idempotency_key_in_use` (with `Retry-After: 1`): a request with this `Idempotency-Key` is still running');
  also(422, '`idempotency_key_reused`: this `Idempotency-Key` was used with another method, path or body');
  // Every answer that may be stored may come back as a replay (a copy: schemas are shared between routes).
  for (const status of Object.keys(response).map(Number)) {
    if (storesAnswer(status)) response[status] = { ...response[status], headers: { [REPLAYED_DOC_NAME]: REPLAYED_DOC } };
  }
}

/** A mutating POST's hooks, after its own: begin before the handler, finish in onSend, abandon in onResponse. */
function guardPost(route: RouteOptions, runs: IdempotentRuns): void {
  const pending = route.config?.idempotencyOutbound === true;
  route.preHandler = [
    ...routeHooks(route.preHandler),
    (req: FastifyRequest, reply: FastifyReply) => runs.begin(req, reply, pending),
  ] as typeof route.preHandler;
  route.onSend = [...routeHooks(route.onSend), (req, reply, payload) => runs.finish(req, reply, payload)] as typeof route.onSend;
  // A callback hook, not an async one: nearly every request has nothing to do here.
  route.onResponse = [...routeHooks(route.onResponse), runs.abandon] as typeof route.onResponse;
}

/**
 * Idempotency keys (CONTRACT C.3).
 *
 * Runs after authentication, the rate limit, the scope check and validation (B.1 order), so refused
 * requests never reach it and a replay still counts against the limit. For a mutating POST with the
 * header, a preHandler opens a transaction and claims the key; the handler runs on that transaction
 * (`ctxOf` picks it up, and the services' `withTx` joins it); onSend, which sees the status and the
 * serialized body, stores them in the same transaction and commits before a byte is written. So the
 * change and its stored answer commit together: a crash loses both or neither. The rows are the
 * idempotency repo's (modules/shared/idempotency.repo.ts).
 *
 * A repeat while the first still runs is refused at once, never queued:
 * - in this process by a map of keys in flight (on SQLite the one connection would otherwise queue
 *   the repeat behind the first and replay it, which is also right, but C.3 asks for 409);
 * - across PostgreSQL processes by an advisory lock on a hash of (key id, idempotency key)
 *   (db/locks.ts tryAdvisoryXactLock), which fails at once instead of waiting on the first transaction's
 *   uncommitted row, and is released by its commit, after which the stored row is visible to the next statement;
 * - across SQLite processes BEGIN IMMEDIATE serializes writers, so the repeat waits for the first to
 *   commit and then replays its stored answer.
 */
export const idempotencyPlugin = fp<IdempotencyOptions>(
  async (app, opts) => {
    const runs = new IdempotentRuns(opts, () => app.config.secretKey());
    app.decorateRequest('idempotencyTx', null);
    app.decorateRequest('idempotencyRun', null);
    app.addHook('onRoute', (route) => {
      if (isKeyedUpdate(route)) {
        route.preHandler = [...routeHooks(route.preHandler), runs.refuseReuse] as typeof route.preHandler;
      } else if (isMutatingPost(route)) {
        documentPost(route);
        guardPost(route, runs);
      }
    });
  },
  { name: 'idempotency', dependencies: ['auth'] },
);

/** The TTL sweep (workers/idempotency.ts), here too for callers that know it from this file. */
export { deleteExpiredIdempotencyKeys } from '../modules/shared/idempotency.repo.js';
