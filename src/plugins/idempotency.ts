import { createHash, hash } from 'node:crypto';
import fp from 'fastify-plugin';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { openTransaction, restoreSavepointState, savepointState, type Database, type Db, type OpenTransaction, type SavepointState } from '../db/index.js';
import { prepared } from '../db/prepared.js';
import type { IdempotencyKeysTable } from '../db/tables/idempotency.js';
import { ApiError, errorBody, errors } from '../errors.js';
import { clientErrorOf } from '../db/errors.js';
import { decryptSecret, encryptSecret, subkey } from '../util/crypto.js';
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
/** `status_code` of a claim whose outbound handler is still running (never a stored answer). */
const PENDING = 0;

/**
 * The 400s of a request refused as sent (its body or headers did not pass the checks): C.3 stores nothing for
 * them, so that a corrected retry with the same key runs. Any other 400 is a business error of a request that
 * ran (the spec's `duplicate_proposal_for_deal`), stored like a 409.
 */
const REFUSED_AS_SENT = new Set(['validation_failed', 'invalid_json', 'invalid_format', 'invalid_url', 'invalid_event', 'invalid_status', 'invalid_cursor', 'invalid_request', 'bad_request']);

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

// Compiled once: every idempotent request runs both.
const lookupQuery = prepared((q: Db, tenantId: string, keyId: string, idemKey: string) =>
  q
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status_code', 'body', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('key_id', '=', keyId)
    .where('idem_key', '=', idemKey),
);
const insertAnswer = prepared(
  (q: Db, tenant_id: string, key_id: string, idem_key: string, fingerprint: string, status_code: number, body: string | null, created_at: string) =>
    q.insertInto('idempotency_keys').values({ tenant_id, key_id, idem_key, fingerprint, status_code, body, created_at }),
);

/** A signed 64-bit advisory lock id for (API key, idempotency key). */
export function lockId(keyId: string, idemKey: string): string {
  const h = createHash('sha256').update(`crm-idempotency\0${keyId}\0${idemKey}`).digest();
  return h.readBigInt64BE(0).toString();
}

/**
 * Stored answers are sealed at rest: a POST /webhooks or rotate-secret answer holds the whole `whsec_…`, and any
 * answer may hold personal data, kept for IDEMPOTENCY_TTL_HOURS. AES-256-GCM (`encryptSecret`) under a key of
 * its own derived from CRM_SECRET_KEY; the additional data binds the text to its row (tenant, API key,
 * idempotency key) and to the row's request and status, so a sealed answer copied into another row, or a row
 * whose fingerprint or status was edited, does not open.
 */
const SEAL_LABEL = 'crm/idempotency-answer/v1';
const SEALED_PREFIX = 'v1.';

function answerAad(tenantId: string, keyId: string, idemKey: string, fingerprint: string, status: number): string {
  return `${SEAL_LABEL}\0${tenantId}\0${keyId}\0${idemKey}\0${fingerprint}\0${status}`;
}

export class StoredAnswerUnreadable extends Error {}

/** `body` as stored: sealed. A missing body (no content) stays null: there is nothing to hide. */
export function sealAnswer(key: Buffer, run: Pick<Run, 'tenantId' | 'keyId' | 'idemKey' | 'fingerprint'>, status: number, body: string | null): string | null {
  if (body === null) return null;
  return encryptSecret(key, body, answerAad(run.tenantId, run.keyId, run.idemKey, run.fingerprint, status));
}

/**
 * The answer's body from its stored form. Rows stored before sealing (plain JSON, which never begins with
 * `v1.`) are replayed as they are: they expire with the TTL. A sealed body that does not open (another
 * CRM_SECRET_KEY, or an edited row) cannot be replayed, and running the request again could repeat its change
 * (a second contact): the replay fails (500) rather than guess, until the row expires.
 */
export function openAnswer(key: Buffer, row: { tenantId: string; keyId: string; idemKey: string; fingerprint: string; status: number }, stored: string): string {
  if (!stored.startsWith(SEALED_PREFIX)) return stored;
  try {
    return decryptSecret(key, stored, answerAad(row.tenantId, row.keyId, row.idemKey, row.fingerprint, row.status));
  } catch {
    throw new StoredAnswerUnreadable(
      'the stored answer of an Idempotency-Key cannot be decrypted with the configured CRM_SECRET_KEY',
    );
  }
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
  /** PostgreSQL: the state to restore when an error answer rolls back to the run's savepoint. */
  savepoint?: SavepointState;
}

/** A POST that changes data: a POST whose scopes are all `:read` (search, batch read) changes nothing. */
function isMutatingPost(route: RouteOptions): boolean {
  const methods = [route.method].flat();
  if (!methods.includes('POST') || !route.url.startsWith('/api/v1/') || route.config?.public) return false;
  const scopes = route.config?.scopes ?? [];
  return scopes.some((s) => !s.endsWith(':read'));
}

const hours = (h: number) => h * 3_600_000;

export interface IdempotencyOptions {
  database: Database;
  ttlHours: number;
  /** How long a PENDING claim holds its key; past it the claimant is taken for dead (a crash). */
  outboundLeaseMs: number;
}

/**
 * Idempotency keys (CONTRACT C.3).
 *
 * Runs after authentication, the rate limit, the scope check and validation (B.1 order), so refused
 * requests never reach it and a replay still counts against the limit. For a mutating POST with the
 * header, a preHandler opens a transaction and claims the key; the handler runs on that transaction
 * (`ctxOf` picks it up, and the services' `withTx` joins it); onSend, which sees the status and the
 * serialized body, stores them in the same transaction and commits before a byte is written. So the
 * change and its stored answer commit together: a crash loses both or neither.
 *
 * A repeat while the first still runs is refused at once, never queued:
 * - in this process by a map of keys in flight (on SQLite the one connection would otherwise queue
 *   the repeat behind the first and replay it, which is also right, but C.3 asks for 409);
 * - across PostgreSQL processes by `pg_try_advisory_xact_lock` on a hash of (key id, idempotency
 *   key), which fails at once instead of waiting on the first transaction's uncommitted row, and is
 *   released by its commit, after which the stored row is visible to the next statement;
 * - across SQLite processes BEGIN IMMEDIATE serializes writers, so the repeat waits for the first to
 *   commit and then replays its stored answer.
 */
export const idempotencyPlugin = fp<IdempotencyOptions>(
  async (app, opts) => {
    const { db, dialect } = opts.database;
    const postgres = dialect.name === 'postgres';
    const ttlMs = hours(opts.ttlHours);
    const inFlight = new Set<string>();
    app.decorateRequest('idempotencyTx', null);
    app.decorateRequest('idempotencyRun', null);
    const runOf = (req: FastifyRequest) => req.idempotencyRun as Run | null;
    // Derived at first use: the key is the configuration's to load (and to refuse when missing).
    let sealKey: Buffer | undefined;
    const answerKey = () => (sealKey ??= subkey(app.config.secretKey(), SEAL_LABEL));

    async function end(req: FastifyRequest, run: Run, commit: boolean): Promise<void> {
      if (run.ended) return;
      run.ended = true;
      req.idempotencyTx = null;
      try {
        if (commit) await run.open.commit();
        else await run.open.rollback();
      } finally {
        inFlight.delete(run.slot);
      }
    }

    type Stored = Pick<IdempotencyKeysTable, 'fingerprint' | 'status_code' | 'body' | 'created_at'>;
    const lookup = async (q: Db, tenantId: string, keyId: string, idemKey: string): Promise<Stored | undefined> =>
      (await lookupQuery(q, tenantId, keyId, idemKey))[0];
    const isLive = (stored: Stored) =>
      Date.parse(stored.created_at) + (stored.status_code === PENDING ? opts.outboundLeaseMs : ttlMs) > Date.now();

    /** A live record answers the request: a replay, a reuse (422) or a claim still running (409). */
    function answer(stored: Stored, run: Run, reply: FastifyReply): FastifyReply {
      if (stored.fingerprint !== run.fingerprint) throw errors.idempotencyKeyReused();
      if (stored.status_code === PENDING) throw errors.idempotencyKeyInUse();
      if (stored.body === null) return reply.code(stored.status_code).header(REPLAYED_HEADER, 'true').send();
      const body = openAnswer(answerKey(), { ...run, status: stored.status_code }, stored.body);
      reply.code(stored.status_code).header(REPLAYED_HEADER, 'true');
      return reply.header('content-type', 'application/json; charset=utf-8').send(body);
    }

    async function begin(req: FastifyRequest, reply: FastifyReply, pending: boolean): Promise<FastifyReply | undefined> {
      const idemKey = req.headers[IDEMPOTENCY_HEADER];
      if (typeof idemKey !== 'string') return; // absent (a malformed one was refused by validation)
      const { tenantId, keyId } = req.principal;
      const slot = `${keyId}\0${idemKey}`;
      if (inFlight.has(slot)) throw errors.idempotencyKeyInUse();
      const fp = fingerprint(req);
      // NOTE: the key is looked up once, inside the transaction: a first request (the common case) pays one
      // read, and a replay takes the write transaction briefly and rolls it back.
      inFlight.add(slot);
      let open: OpenTransaction;
      try {
        open = await openTransaction(db);
      } catch (err) {
        inFlight.delete(slot);
        throw err;
      }
      const tx = open.tx;
      const run: Run = { open, pending, slot, tenantId, keyId, idemKey, fingerprint: fp, ended: false };
      try {
        if (postgres) {
          const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${lockId(keyId, idemKey)}::bigint) as ok`.execute(tx);
          if (!rows[0]?.ok) throw errors.idempotencyKeyInUse();
        }
        // Again inside the transaction: another process may have committed since the first look.
        const stored = await lookup(tx, tenantId, keyId, idemKey);
        if (stored && isLive(stored)) {
          await end(req, run, false);
          return answer(stored, run, reply);
        }
        if (stored) {
          // Past its TTL but not swept yet, or a claim left by a crash: the key is free again.
          await tx.deleteFrom('idempotency_keys').where('tenant_id', '=', tenantId).where('key_id', '=', keyId).where('idem_key', '=', idemKey).execute();
        }
        if (pending) {
          // NOTE: C.3 gap — a webhook test waits up to WEBHOOK_TIMEOUT_MS on the destination. Inside the
          // transaction that would stall every write of the process on SQLite, so the claim is committed
          // first (repeats see it: 409) and the answer stored after; a crash in between leaves a claim
          // that expires after outboundLeaseMs, and the retry then sends another test ping (harmless).
          await insertAnswer(tx, tenantId, keyId, idemKey, run.fingerprint, PENDING, null, new Date().toISOString());
          await open.commit();
          req.idempotencyRun = run;
          return undefined;
        }
        // Business errors roll back to here and are still stored (see storesAnswer). On SQLite the
        // savepoint's sub-journal (a copy of every page the handler touches) was a third of what storing an
        // answer cost; an error answer there rolls the whole transaction back instead (see finish).
        if (postgres) {
          await sql`savepoint ${sql.raw(SAVEPOINT)}`.execute(tx);
          run.savepoint = savepointState(tx);
        }
      } catch (err) {
        await end(req, run, false).catch(() => {});
        throw err;
      }
      req.idempotencyRun = run;
      req.idempotencyTx = tx;
      return undefined;
    }

    /** Outbound mode: the handler's own transactions have committed; the claim becomes the answer. */
    async function settlePending(req: FastifyRequest, run: Run, status: number, body: string | null | undefined): Promise<void> {
      run.ended = true;
      const row = db
        .updateTable('idempotency_keys')
        .where('tenant_id', '=', run.tenantId)
        .where('key_id', '=', run.keyId)
        .where('idem_key', '=', run.idemKey)
        .where('status_code', '=', PENDING);
      try {
        if (body !== undefined && storesAnswer(status, body)) await row.set({ status_code: status, body: sealAnswer(answerKey(), run, status, body) }).execute();
        else
          await db
            .deleteFrom('idempotency_keys')
            .where('tenant_id', '=', run.tenantId)
            .where('key_id', '=', run.keyId)
            .where('idem_key', '=', run.idemKey)
            .where('status_code', '=', PENDING)
            .execute();
      } catch (err) {
        // The change is committed either way; the claim expires after its lease.
        req.log.error({ err }, 'idempotent answer could not be stored');
      } finally {
        inFlight.delete(run.slot);
      }
    }

    async function finish(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
      const run = runOf(req);
      if (!run || run.ended) return payload;
      req.idempotencyRun = null;
      const status = reply.statusCode;
      const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload == null ? null : undefined;
      if (run.pending) {
        await settlePending(req, run, status, body);
        return payload;
      }
      if (!storesAnswer(status, body)) {
        await end(req, run, false);
        return payload;
      }
      try {
        // A stream cannot be kept for a replay: refuse to commit rather than store a wrong answer.
        if (body === undefined) throw new Error('idempotent route answered a stream');
        if (status >= 400 && postgres) {
          await sql`rollback to savepoint ${sql.raw(SAVEPOINT)}`.execute(run.open.tx);
          if (run.savepoint) restoreSavepointState(run.open.tx, run.savepoint);
        }
        else if (status >= 400) {
          // NOTE: C.3 on SQLite — the failed request's writes go with its transaction, and the answer is
          // stored in a new one. This process still holds the key (inFlight), so no repeat runs in between
          // here; another process on the same file could, and then its stored answer stands (see below).
          await run.open.rollback();
          run.open = await openTransaction(db);
          const stored = await lookup(run.open.tx, run.tenantId, run.keyId, run.idemKey);
          if (stored) {
            await end(req, run, true);
            return payload;
          }
        }
        const sealed = sealAnswer(answerKey(), run, status, body);
        await insertAnswer(run.open.tx, run.tenantId, run.keyId, run.idemKey, run.fingerprint, status, sealed, new Date().toISOString());
        await end(req, run, true);
        return payload;
      } catch (err) {
        await end(req, run, false).catch(() => {});
        // The change was not committed: the client must not see it as done. Written here rather than
        // thrown, because onSend errors would run the send pipeline (and this hook) again. A database that
        // went away (or a crossed writer) is the contract's 503 (409) with Retry-After, as anywhere else.
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
        return JSON.stringify(errorBody(new ApiError(500, 'internal_error', 'An unexpected error occurred', { requestId: String(req.id) })));
      }
    }

    // C.3: the same key on another method is a reuse. PATCH and DELETE are idempotent by nature and
    // store nothing, but a key already spent on a POST is refused on them rather than silently ignored.
    async function refuseReuse(req: FastifyRequest): Promise<void> {
      const idemKey = req.headers[IDEMPOTENCY_HEADER];
      if (typeof idemKey !== 'string' || idemKey === '') return;
      const stored = await db
        .selectFrom('idempotency_keys')
        .select('created_at')
        .where('tenant_id', '=', req.principal.tenantId)
        .where('key_id', '=', req.principal.keyId)
        .where('idem_key', '=', idemKey)
        .executeTakeFirst();
      if (stored && Date.parse(stored.created_at) + ttlMs > Date.now()) throw errors.idempotencyKeyReused();
    }

    app.addHook('onRoute', (route) => {
      const methods = [route.method].flat();
      if (
        route.url.startsWith('/api/v1/') &&
        !route.config?.public &&
        methods.some((m) => m === 'PATCH' || m === 'PUT' || m === 'DELETE')
      ) {
        route.preHandler = [...routeHooks(route.preHandler), refuseReuse] as typeof route.preHandler;
        return;
      }
      if (!isMutatingPost(route)) return;
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
      const pre = route.preHandler ? [route.preHandler].flat() : [];
      const pending = route.config?.idempotencyOutbound === true;
      route.preHandler = [...pre, (req: FastifyRequest, reply: FastifyReply) => begin(req, reply, pending)] as typeof route.preHandler;
      const onSend = route.onSend ? [route.onSend].flat() : [];
      route.onSend = [...onSend, (req, reply, payload) => finish(req, reply, payload)] as typeof route.onSend;
      // Safety net: a response that ended without passing onSend must not leave the transaction open.
      const onResponse = route.onResponse ? [route.onResponse].flat() : [];
      route.onResponse = [
        ...onResponse,
        // A callback hook, not an async one: nearly every request has nothing to do here.
        (req: FastifyRequest, _reply: FastifyReply, done: () => void) => {
          const run = runOf(req);
          if (!run || run.ended) return done();
          req.idempotencyRun = null;
          (run.pending ? settlePending(req, run, 500, undefined) : end(req, run, false)).catch(() => {}).finally(done);
        },
      ] as typeof route.onResponse;
    });
  },
  { name: 'idempotency', dependencies: ['auth'] },
);

/**
 * Deletes stored answers past the TTL, oldest first, `batch` rows per statement, so no statement
 * holds the writer long (SQLite) or locks many rows (PostgreSQL). Returns the rows deleted.
 *
 * SQLite: the oldest answers are the first rows in rowid order (migration 010), so each statement looks
 * at the first `batch` rows and deletes those past the TTL; a window holding a live row means every later
 * row is live too, and the pass ends. PostgreSQL: by the `created_at` index.
 */
export async function deleteExpiredIdempotencyKeys(database: Database, ttlHours: number, now = Date.now(), batch = 500): Promise<number> {
  const cutoff = new Date(now - hours(ttlHours)).toISOString();
  const { db } = database;
  const deleteBatch =
    database.dialect.name === 'sqlite'
      ? async () =>
          Number(
            (
              await db
                .deleteFrom('idempotency_keys')
                .where(sql`rowid`, 'in', db.selectFrom('idempotency_keys').select(sql`rowid`.as('r')).orderBy(sql`rowid`).limit(batch))
                .where('created_at', '<', cutoff)
                .executeTakeFirst()
            ).numDeletedRows,
          )
      : async () => {
          const oldest = db
            .selectFrom('idempotency_keys')
            .select(['tenant_id', 'key_id', 'idem_key'])
            .where('created_at', '<', cutoff)
            .orderBy('created_at')
            .limit(batch);
          const r = await db.deleteFrom('idempotency_keys').where(sql<boolean>`(tenant_id, key_id, idem_key) in (${oldest})`).executeTakeFirst();
          return Number(r.numDeletedRows);
        };
  let total = 0;
  for (;;) {
    const n = await deleteBatch();
    total += n;
    if (n < batch) return total;
    // Let requests waiting for the (SQLite) connection in between.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
