import { setImmediate as loopTurn } from 'node:timers/promises';
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { dialectOf } from '../../db/dialect.js';
import { clientErrorOf } from '../../db/errors.js';
import { withSavepoint, withTx, type Tx } from '../../db/index.js';
import { BULK_CHANGE_ROWS, noteBulkChange } from '../../db/statistics.js';
import { DomainError } from '../../domain/errors.js';
import { ApiError, errorBody, errors } from '../../errors.js';
import { ctxOf, inTx, type Ctx } from '../../http/context.js';
import { answer } from '../../http/replies.js';
import { errorResponses } from '../../http/schemas.js';
import { compileBodySchema, PER_ITEM, validationError, validationErrorWithData, type DataValueRules, type ValueRules } from '../../http/validation.js';
import { extended } from '../../util/objects.js';

/**
 * Batch operations (CONTRACT C.2) for any resource that declares a `BatchResource`: create, update,
 * upsert, read and delete of 1–100 inputs in one call and one transaction.
 *
 * Each input is validated against the single call's own body schema and applied by the single call's
 * own service function, so an input behaves exactly as that call would: the same rules, the same events
 * (raised in the same transaction), and on failure the same status and error body. Partial success (the
 * default) undoes a failed input's writes alone and goes on (a savepoint per input, taken only once an input
 * has failed: runBatch); `atomic: true` fails the whole call with the first failing input's answer and
 * changes nothing.
 */

/** A natural key an upsert may match on, as the single call normalizes it. */
export interface UpsertKey {
  /** The stored form of a value (throws DomainError when invalid: the create then reports it). */
  normalize(value: string): string;
  /** The live record holding the stored value. */
  find(ctx: Ctx, value: string): Promise<string | undefined>;
}

export interface BatchResource<R extends { id: string } = { id: string }> {
  /** URL segment (`/contacts/batch/create`) and scope prefix (`contacts:write`; `batch/read`: `contacts:read`). */
  path: string;
  /** OpenAPI tag and operation ids: `createContactsBatch`. */
  tag: string;
  /** "contact", for messages. */
  noun: string;
  schemas: { record: TSchema; create: TObject; update: TObject };
  /** The value rules of the single calls' bodies (C.5): a refused input names every invalid field, as they do. */
  valueRules: ValueRules;
  /** The same for the rules that read the tenant's data (`customProperties`). */
  dataValueRules?: DataValueRules;
  create(ctx: Ctx, input: any): Promise<R>;
  update(ctx: Ctx, id: string, input: any): Promise<R>;
  remove(ctx: Ctx, id: string): Promise<void>;
  byIds(ctx: Ctx, ids: string[]): Promise<Map<string, R>>;
  /** Keys an upsert matches on besides `id` (contacts: email, phone; companies: cnpj, domain). */
  upsertKeys: Record<string, UpsertKey>;
}

export const BATCH_MAX = 100;

interface ItemResult {
  index: number;
  status: number;
  id?: string;
  record?: unknown;
  action?: 'created' | 'updated';
  error?: Record<string, unknown>;
}

export interface BatchAnswer {
  status: 200 | 207;
  body: { results: ItemResult[]; succeeded: number; failed: number };
}

type Applied = Omit<ItemResult, 'index'>;

/** The answer a failed input gets, as the single call's error handler would give it; else a real failure. */
function itemError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const refused = clientErrorOf(err);
  if (refused) return refused;
  throw err;
}

/** C.2: an atomic batch answers its first failure with `details[].field` prefixed by the input. */
function atInput(err: ApiError, index: number): ApiError {
  const details = err.extra.details as { field: string; message: string }[] | undefined;
  if (!details) return err;
  const prefix = `inputs[${index}]`;
  const prefixed = details.map((d) => ({ ...d, field: d.field ? (d.field.startsWith('[') ? prefix + d.field : `${prefix}.${d.field}`) : prefix }));
  return errors.withDetails(err, prefixed);
}

/**
 * Inputs applied between two turns of the event loop. NOTE: on SQLite a batch of 100 creates is ~9 ms of
 * synchronous work, and libuv accepts one new connection per turn of the loop (libuv#3696): under a stream
 * of batches from 50 clients, a client's new connection waited up to 5 s to be accepted (any tenant's;
 * bench/journal/). A turn every 10 inputs (~1 ms) lets the loop accept it, and read and answer
 * other requests, meanwhile; the transaction stays open (the writer waits for it, readers do not).
 */
const YIELD_EVERY = 10;

/**
 * Thrown out of the first pass of a partial-success batch when an input fails (runBatch): that pass is undone
 * and the batch runs again with a savepoint per input.
 */
const INPUT_FAILED = Symbol('a batch input failed');

/**
 * Runs every input in one transaction; see the module comment.
 *
 * A savepoint per input lets a failed input undo its own writes and the batch go on (partial success), but on
 * SQLite it made a batch of 100 creates ~1.35 times as costly: every page an input changes is copied to the
 * savepoint's journal first (in process, 124–135 µs per contact with it, 91–95 µs without). So the batch first
 * runs without them. When every input succeeds (the common case), that is the answer. When one fails, that
 * pass is undone as a whole, and the batch runs again from the start with a savepoint per input: the answer,
 * the writes and the events are those of the second pass alone, so a failing batch costs at most twice the
 * work. An atomic batch needs no savepoint at all: its first failure undoes everything.
 */
export async function runBatch<I>(
  ctx: Ctx,
  inputs: I[],
  atomic: boolean,
  apply: (ctx: Ctx, input: I) => Promise<Applied>,
  idOf: (input: I) => string | undefined = () => undefined,
): Promise<BatchAnswer> {
  const pass = (savepoints: boolean) => async (tx: Tx) => {
    const tctx = inTx(ctx, tx);
    const out: ItemResult[] = [];
    for (let index = 0; index < inputs.length; index++) {
      if (index > 0 && index % YIELD_EVERY === 0) await loopTurn();
      const input = inputs[index];
      try {
        out.push({ index, ...(savepoints ? await withSavepoint(tx, () => apply(tctx, input), 'batch_input') : await apply(tctx, input)) });
      } catch (err) {
        const failure = itemError(err);
        if (atomic) throw atInput(failure, index);
        if (!savepoints) throw INPUT_FAILED;
        const id = idOf(input);
        out.push({ index, status: failure.statusCode, ...(id !== undefined ? { id } : {}), error: errorBody(failure) });
      }
    }
    return out;
  };
  let results: ItemResult[] | undefined;
  if (atomic) results = await withTx(ctx.db, pass(false));
  else {
    const first = () => withTx(ctx.db, pass(false));
    try {
      // Inside a caller's transaction (an Idempotency-Key's) withTx opens none, so the first pass gets a savepoint to be undone by.
      results = ctx.db.isTransaction ? await withSavepoint(ctx.db, first, 'batch') : await first();
    } catch (err) {
      if (err !== INPUT_FAILED) throw err;
    }
    results ??= await withTx(ctx.db, pass(true));
  }
  const failed = results.filter((r) => r.error).length;
  return { status: failed ? 207 : 200, body: { results, succeeded: results.length - failed, failed } };
}

/** An input as the single call's route checks its body: the same 400, value rules and data rules included. */
async function check(ctx: Ctx, validate: ValidateFunction, input: unknown, r: Pick<BatchResource, 'valueRules' | 'dataValueRules'>): Promise<void> {
  if (validate(input)) return;
  // Read now, before any await: Ajv keeps the issues on its (shared) function.
  const issues = validate.errors ?? [];
  throw r.dataValueRules
    ? await validationErrorWithData(issues, 'body', input, r.valueRules, r.dataValueRules, ctx)
    : validationError(issues, 'body', input, r.valueRules);
}

/** The input without its `id` (the address of an update), and that id, checked like a body field. */
function splitId(input: Record<string, unknown>, required: boolean): [string | undefined, Record<string, unknown>] {
  const { id, ...rest } = input;
  if (id === undefined && !required) return [undefined, rest];
  if (id === undefined) throw errors.field('id', 'is required');
  if (typeof id !== 'string') throw errors.field('id', 'must be a string');
  return [id, rest];
}

const stringId = (input: unknown) => {
  const id = (input as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : undefined;
};

export interface BatchOps {
  create(ctx: Ctx, body: { inputs: unknown[]; atomic?: boolean }): Promise<BatchAnswer>;
  update(ctx: Ctx, body: { inputs: Record<string, unknown>[]; atomic?: boolean }): Promise<BatchAnswer>;
  upsert(ctx: Ctx, body: { idProperty: string; inputs: Record<string, unknown>[]; atomic?: boolean }): Promise<BatchAnswer>;
  read(ctx: Ctx, body: { ids: string[] }): Promise<{ results: unknown[]; missing: string[] }>;
  remove(ctx: Ctx, body: { ids: string[]; atomic?: boolean }): Promise<BatchAnswer>;
}

const created = (record: { id: string }): Applied => ({ status: 201, id: record.id, record });
const updated = (record: { id: string }): Applied => ({ status: 200, id: record.id, record });

/** Upsert by a natural key: match, else create; a create that loses a race to the same key updates. */
async function upsertByKey(r: BatchResource, ctx: Ctx, key: UpsertKey, idProperty: string, input: Record<string, unknown>): Promise<Applied> {
  const given = input[idProperty];
  if (typeof given !== 'string' || given.trim() === '') throw errors.field(idProperty, `is required to upsert by ${idProperty}`);
  let value: string | undefined;
  try {
    value = key.normalize(given);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    // Invalid: the create reports it exactly as POST would.
  }
  const match = value === undefined ? undefined : await key.find(ctx, value);
  if (match) return extended(updated(await r.update(ctx, match, input)), { action: 'updated' as const });
  try {
    // NOTE: on PostgreSQL a failed statement aborts the transaction, and the update below must run after it: the
    // create gets a savepoint. SQLite needs none, and it would make a created input ~1.5 times as costly (the
    // savepoint's journal): there the batch holds the write lock from its look-up on, so no other transaction can
    // commit the key in between and a failed create is never followed by that update (the input fails, and its
    // own savepoint, runBatch's, undoes whatever the create wrote).
    const create = () => r.create(ctx, input);
    const record = dialectOf(ctx.db).locksRows ? await withSavepoint(ctx.db, create, 'upsert_create') : await create();
    return extended(created(record), { action: 'created' as const });
  } catch (err) {
    // Another transaction committed the same key since the look-up (PostgreSQL waits for it on the
    // unique index, then reports the duplicate): the record now exists, so this input updates it.
    const winner = err instanceof ApiError && err.statusCode === 409 && value !== undefined ? await key.find(ctx, value) : undefined;
    if (!winner) throw err;
    return { ...updated(await r.update(ctx, winner, input)), action: 'updated' };
  }
}

/** The five batch operations of a resource, through its own service functions. */
export function batchOps(r: BatchResource): BatchOps {
  const validCreate = compileBodySchema(r.schemas.create);
  const validUpdate = compileBodySchema(r.schemas.update);
  return {
    create: (ctx, body) =>
      runBatch(ctx, body.inputs, body.atomic === true, async (c, input) => {
        await check(c, validCreate, input, r);
        return created(await r.create(c, input));
      }),

    update: (ctx, body) =>
      runBatch(
        ctx,
        body.inputs,
        body.atomic === true,
        async (c, input) => {
          const [id, patch] = splitId(input, true);
          await check(c, validUpdate, patch, r);
          return updated(await r.update(c, id!, patch));
        },
        stringId,
      ),

    upsert: (ctx, body) =>
      runBatch(ctx, body.inputs, body.atomic === true, upsertOne(r, validCreate, body.idProperty), body.idProperty === 'id' ? stringId : undefined),

    read: async (ctx, body) => {
      const ids = [...new Set(body.ids)];
      const found = await r.byIds(ctx, ids);
      return { results: ids.filter((id) => found.has(id)).map((id) => found.get(id)), missing: ids.filter((id) => !found.has(id)) };
    },

    remove: (ctx, body) =>
      runBatch(
        ctx,
        body.ids,
        body.atomic === true,
        async (c, id) => {
          await r.remove(c, id);
          return { status: 204, id };
        },
        (id) => id,
      ),
  };
}

/** How an upsert applies one input: by the natural key `idProperty`, or by `id` (update when given, else create). */
function upsertOne(r: BatchResource, validCreate: ValidateFunction, idProperty: string) {
  const key = idProperty === 'id' ? undefined : r.upsertKeys[idProperty];
  return async (c: Ctx, input: Record<string, unknown>): Promise<Applied> => {
    if (key) {
      await check(c, validCreate, input, r);
      return upsertByKey(r, c, key, idProperty, input);
    }
    // By id: an input with an id updates that record (404 when it does not exist); one without creates.
    const [id, rest] = splitId(input, false);
    await check(c, validCreate, rest, r);
    if (id === undefined) return { ...created(await r.create(c, rest)), action: 'created' };
    return { ...updated(await r.update(c, id, rest)), action: 'updated' };
  };
}

// ------------------------------------------------------------------------------------------------
// Routes

const Atomic = Type.Optional(
  Type.Boolean({
    description:
      '`true`: all or nothing. The first failing input fails the call with its own status and error body (`details[].field` prefixed `inputs[<i>].`) and nothing is changed. Default `false`: partial success',
  }),
);

const Ids = (what: string) =>
  Type.Array(Type.String(), { minItems: 1, maxItems: BATCH_MAX, description: `1–${BATCH_MAX} ${what} ids (another tenant's ids are simply not found)` });

function inputsOf(item: TSchema, what: string) {
  return Type.Array(item, {
    minItems: 1,
    maxItems: BATCH_MAX,
    [PER_ITEM]: true,
    description: `1–${BATCH_MAX} inputs, each ${what}. Each input is validated and applied on its own: a bad input fails alone, with the answer the single call would give`,
  });
}

function resultsSchema(r: BatchResource, upsert: boolean) {
  const Result = Type.Object({
    index: Type.Integer({ description: 'Position of the input' }),
    status: Type.Integer({ description: 'What the single call would have answered: 201 created, 200 updated, 204 deleted, or its error status' }),
    id: Type.Optional(Type.String({ description: `The ${r.noun}'s id (when known)` })),
    ...(upsert ? { action: Type.Optional(Type.Union([Type.Literal('created'), Type.Literal('updated')])) } : {}),
    record: Type.Optional(r.schemas.record),
    error: Type.Optional(Type.Ref('Error', { description: 'The error body the single call would have answered' })),
  });
  return Type.Object(
    { results: Type.Array(Result, { description: 'One per input, in input order' }), succeeded: Type.Integer(), failed: Type.Integer() },
    { description: '200 when every input succeeded; 207 when at least one failed (even all)' },
  );
}

/** What the batch routes of one resource share: its operations, and the parts of their documentation. */
interface BatchRoutes {
  r: BatchResource;
  ops: BatchOps;
  tags: string[];
  write: { scopes: string[] };
  plural: string;
  Results: TSchema;
  limits: string;
  example: Record<string, unknown>;
  answers(results: TSchema, ...errs: number[]): Record<number, unknown>;
  send(reply: FastifyReply, a: BatchAnswer): Promise<BatchAnswer['body']>;
}

/** Registers POST /<path>/batch/{create,update,upsert,read,delete} for a resource. */
export function registerBatchRoutes(app: FastifyInstance, r: BatchResource): void {
  const k: BatchRoutes = {
    r,
    ops: batchOps(r),
    tags: [r.tag],
    write: { scopes: [`${r.path}:write`] },
    plural: r.tag,
    Results: resultsSchema(r, false),
    limits: `1–${BATCH_MAX} inputs (400 \`validation_failed\` beyond); one call counts once against the rate limit; accepts \`Idempotency-Key\`.`,
    example: (r.schemas.create as { examples?: Record<string, unknown>[] }).examples?.[0] ?? {},
    answers: (results, ...errs) => ({ 200: results, 207: results, ...errorResponses(400, ...errs) }),
    send: (reply, a) => {
      // A large batch has its tables' planner statistics refreshed soon (PostgreSQL: db/pg-stats.ts).
      if (a.body.succeeded >= BULK_CHANGE_ROWS) noteBulkChange(reply.server.database.db, [r.path, 'record_tags'], a.body.succeeded);
      return answer(reply, a.status, a.body);
    },
  };
  createRoute(app, k);
  updateRoute(app, k);
  upsertRoute(app, k);
  readRoute(app, k);
  deleteRoute(app, k);
}

function createRoute(app: FastifyInstance, { r, ops, tags, write, plural, Results, limits, example, answers, send }: BatchRoutes): void {
  app.post(
    `/${r.path}/batch/create`,
    {
      config: write,
      schema: {
        tags,
        operationId: `create${plural}Batch`,
        summary: `Create ${r.noun}s in a batch`,
        description: `Requires scope \`${r.path}:write\`. Each input is a \`POST /${r.path}\` body and creates one ${r.noun} exactly as that call would (same rules, same events). ${limits}`,
        body: Type.Object(
          { inputs: inputsOf(r.schemas.create, `a \`POST /${r.path}\` body`), atomic: Atomic },
          { additionalProperties: false, examples: [{ inputs: [example] }] },
        ),
        response: answers(Results, 404, 409, 422),
      },
    },
    async (req, reply) => send(reply, await ops.create(ctxOf(req), req.body as any)),
  );
}

function updateRoute(app: FastifyInstance, { r, ops, tags, write, plural, Results, limits, answers, send }: BatchRoutes): void {
  const UpdateInput = Type.Object(
    { id: Type.String({ description: `The ${r.noun} to update` }), ...r.schemas.update.properties },
    { additionalProperties: false, description: `\`id\` plus a \`PATCH /${r.path}/:id\` body` },
  );
  app.post(
    `/${r.path}/batch/update`,
    {
      config: write,
      schema: {
        tags,
        operationId: `update${plural}Batch`,
        summary: `Update ${r.noun}s in a batch`,
        description: `Requires scope \`${r.path}:write\`. Each input is \`{ id, ...PATCH body }\` and updates like \`PATCH /${r.path}/:id\` (omitted fields stay). ${limits}`,
        body: Type.Object({ inputs: inputsOf(UpdateInput, '`{ id, ...PATCH body }`'), atomic: Atomic }, { additionalProperties: false }),
        response: answers(Results, 404, 409, 422),
      },
    },
    async (req, reply) => send(reply, await ops.update(ctxOf(req), req.body as any)),
  );
}

function upsertRoute(app: FastifyInstance, { r, ops, tags, write, plural, limits, example, answers, send }: BatchRoutes): void {
  const UpsertResults = resultsSchema(r, true);
  const keys = [...Object.keys(r.upsertKeys), 'id'];
  const UpsertInput = Type.Object(
    {
      id: Type.Optional(Type.String({ description: 'Only with `idProperty: "id"`: the record to update (404 when missing); absent: create' })),
      ...r.schemas.create.properties,
    },
    { additionalProperties: false, description: `A \`POST /${r.path}\` body (plus \`id\` when \`idProperty\` is \`id\`)` },
  );
  const keyDoc = Object.keys(r.upsertKeys).length
    ? `\`idProperty\` is ${Object.keys(r.upsertKeys)
        .map((k) => `\`${k}\``)
        .join(' or ')} (matched after the normalization the single call applies) or \`id\``
    : `${r.noun}s have no natural key: \`idProperty\` must be \`id\``;
  app.post(
    `/${r.path}/batch/upsert`,
    {
      config: write,
      schema: {
        tags,
        operationId: `upsert${plural}Batch`,
        summary: `Create or update ${r.noun}s by a unique property`,
        description:
          `Requires scope \`${r.path}:write\`. ${keyDoc}. An input whose key matches a live ${r.noun} updates it like a PATCH with the given fields ` +
          '(omitted fields stay; `action: "updated"`, status 200); otherwise it is created (`action: "created"`, status 201). Race-free: two calls ' +
          `upserting the same key at once give one ${r.noun}. Two inputs of one call with the same key behave as two calls in input order. ${limits}`,
        body: Type.Object(
          {
            idProperty: Type.Unsafe<string>({ type: 'string', enum: keys, description: 'The property inputs are matched on' }),
            inputs: inputsOf(UpsertInput, `a \`POST /${r.path}\` body`),
            atomic: Atomic,
          },
          { additionalProperties: false, examples: [{ idProperty: keys[0], inputs: [example] }] },
        ),
        response: answers(UpsertResults, 404, 409, 422),
      },
    },
    async (req, reply) => send(reply, await ops.upsert(ctxOf(req), req.body as any)),
  );
}

function readRoute(app: FastifyInstance, { r, ops, tags, plural }: BatchRoutes): void {
  app.post(
    `/${r.path}/batch/read`,
    {
      config: { scopes: [`${r.path}:read`] },
      schema: {
        tags,
        operationId: `read${plural}Batch`,
        summary: `Read ${r.noun}s by id`,
        description: `Requires scope \`${r.path}:read\`. Answers the live ${r.noun}s among \`ids\` as single reads return them, in the order of their ids (repeats once), and the ids not found (missing, deleted or of another tenant) in \`missing\`. At most ${BATCH_MAX} ids.`,
        body: Type.Object({ ids: Ids(r.noun) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ results: Type.Array(r.schemas.record), missing: Type.Array(Type.String()) }),
          ...errorResponses(400),
        },
      },
    },
    async (req) => ops.read(ctxOf(req), req.body as any),
  );
}

function deleteRoute(app: FastifyInstance, { r, ops, tags, write, plural, Results, limits, answers, send }: BatchRoutes): void {
  app.post(
    `/${r.path}/batch/delete`,
    {
      config: write,
      schema: {
        tags,
        operationId: `delete${plural}Batch`,
        summary: `Delete ${r.noun}s in a batch`,
        description: `Requires scope \`${r.path}:write\`. Soft-deletes each id as \`DELETE /${r.path}/:id\` would: status 204, or 404 for an id not found (also a repeat within the call). ${limits.replace('inputs', 'ids')}`,
        body: Type.Object({ ids: Ids(r.noun), atomic: Atomic }, { additionalProperties: false }),
        response: answers(Results, 404),
      },
    },
    async (req, reply) => send(reply, await ops.remove(ctxOf(req), req.body as any)),
  );
}
