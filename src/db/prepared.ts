import { createQueryId, type CompiledQuery, type Compilable, type RootOperationNode } from 'kysely';
import type pg from 'pg';
import type { Db } from './types.js';

/** The SQL of every prepared() query, with the name of its PostgreSQL prepared statement. */
const statementNames = new Map<string, string>();

/** Sessions whose prepared statements went stale (see useNamedStatements). */
const unnamed = new WeakSet<pg.ClientBase>();

/**
 * PostgreSQL: makes the prepared() queries of this session named prepared statements, parsed and planned
 * once per session instead of on every call (node-postgres keeps the names a session has prepared; Kysely
 * sends text and values only, so the name is added here, for every session of the pool, on connect).
 * NOTE: a transaction-mode connection pooler between the server and PostgreSQL must carry prepared
 * statements across server sessions (PgBouncer 1.21+ with max_prepared_statements); see the README.
 */
export function useNamedStatements(client: pg.ClientBase): void {
  const query = client.query;
  client.query = function (this: pg.ClientBase, text: unknown, values?: unknown, callback?: unknown) {
    const name =
      typeof text === 'string' && typeof values !== 'function' && callback === undefined && !unnamed.has(this) ? statementNames.get(text) : undefined;
    if (!name) return (query as (...a: unknown[]) => unknown).apply(this, arguments as unknown as unknown[]);
    return (query as (config: pg.QueryConfig) => Promise<unknown>)
      .call(this, { name, text: text as string, values: values as unknown[] })
      .catch((err: { code?: string }) => {
        // "cached plan must not change result type": a column a prepared statement reads changed type under it
        // (a migration run by a newer server during a rolling deploy). The statement fails once; this
        // session then runs its queries unnamed, and sessions opened later prepare them anew.
        if (err?.code === '0A000') unnamed.add(this);
        throw err;
      });
  } as typeof client.query;
}

/**
 * A query compiled once with stand-ins (markers) where some values go, to be run again with other values:
 * `slots[i]` is the index of the marker that parameter i holds, or -1 where it is the query's own value.
 */
export interface SlottedQuery {
  sql: string;
  query: RootOperationNode;
  parameters: readonly unknown[];
  slots: number[];
}

/** Finds each marker among the compiled parameters (compared by identity or value). */
export function slotted(compiled: CompiledQuery, markers: readonly unknown[]): SlottedQuery {
  return { sql: flatSql(compiled.sql), query: compiled.query, parameters: compiled.parameters, slots: compiled.parameters.map((p) => markers.indexOf(p)) };
}

/**
 * The text of `sql` as one flat string, for a statement kept for reuse (a plan, a shape, a statement cache's key).
 *
 * NOTE: Kysely's compiler appends a statement piece by piece (`sql += piece`), and V8 keeps such a string as a
 * rope: a 32-byte node per piece, hundreds to thousands per statement, which nothing that reads the statement
 * later flattens (better-sqlite3 and the sockets read ropes as they are). After the full bench, the server's
 * heap held 290,000 rope nodes, 8.8 MiB of its 51 MiB of live objects, almost all under kept statements.
 * V8 has no call that flattens a string; a string that JSON.parse makes is a new flat one (Number(), the
 * `flatstr` trick, leaves a rope as it is on Node 20). Once per statement kept.
 */
export function flatSql(sql: string): string {
  return JSON.parse(JSON.stringify(sql)) as string;
}

/** The query with each marker's parameter replaced by `values[marker]`: the SQL and values Kysely would give. */
export function rebound<R>(q: SlottedQuery, values: readonly unknown[]): CompiledQuery<R> {
  // As CompiledQuery.raw makes it, less the three freezes and the node built anew; a query id of its own.
  return compiledWith<R>(q, boundValues(q, values));
}

function boundValues(q: SlottedQuery, values: readonly unknown[]): unknown[] {
  return q.slots.map((slot, i) => (slot < 0 ? q.parameters[i] : values[slot]));
}

function compiledWith<R>(q: SlottedQuery, parameters: unknown[]): CompiledQuery<R> {
  return { sql: q.sql, query: q.query, parameters, queryId: createQueryId() };
}

/** Runs a statement at once when its connection is idle, or answers undefined (the caller goes through Kysely). */
export type DirectRunner = (sql: string, parameters: unknown[]) => unknown[] | undefined;

const directRunners = new WeakMap<Db, DirectRunner>();

/**
 * prepared()'s statements on `db` itself (not on its transactions, which are other instances) try `runner`
 * first: SQLite's main connection (FastSqliteDriver.runNow in index.ts).
 */
export function runDirectly(db: Db, runner: DirectRunner): void {
  directRunners.set(db, runner);
}

const transactionRunners = new WeakMap<Db, () => DirectRunner | undefined>();

/**
 * prepared()'s statements on a transaction of `db` try the runner `runnerNow` gives as that transaction starts
 * (transactionStarted): SQLite's main connection while that transaction holds it (FastSqliteDriver.memberRunner).
 */
export function runDirectlyInTransactions(db: Db, runnerNow: () => DirectRunner | undefined): void {
  transactionRunners.set(db, runnerNow);
}

/** Called by withTx and openTransaction (index.ts) first thing in the callback of `tx`, a transaction of `db`. */
export function transactionStarted(db: Db, tx: Db): void {
  const runner = transactionRunners.get(db)?.();
  if (runner) directRunners.set(tx, runner);
}

/** Called by withTx and openTransaction (index.ts) once `tx` has ended (index.ts forgetTransaction says why). */
export function transactionEnded(tx: Db): void {
  directRunners.delete(tx);
}

/** Whether `tx` still has a runner (tests). */
export function hasDirectRunner(tx: Db): boolean {
  return directRunners.has(tx);
}

/**
 * A query built and compiled once per dialect, then run with new parameter values. Building and
 * compiling a Kysely query costs tens of microseconds — more than SQLite needs to answer a point
 * read — so the hottest reads (a record by id) skip it.
 *
 * `build` receives placeholder values and must use each exactly where a value goes; the compiled
 * parameters are then re-bound by position. Only for queries whose shape never depends on the values.
 */
export function prepared<A extends unknown[], R>(build: (db: Db, ...args: A) => Compilable<R>) {
  const byAdapter = new WeakMap<object, SlottedQuery>();
  return async (db: Db, ...args: A): Promise<R[]> => {
    const adapter = db.getExecutor().adapter;
    let plan = byAdapter.get(adapter);
    if (!plan) {
      const markers = args.map((_, i) => `\u0000arg${i}\u0000`);
      plan = slotted(build(db, ...(markers as unknown as A)).compile(), markers);
      if (plan.slots.some((s) => s < 0)) throw new Error('prepared(): every parameter must come from an argument');
      if (!statementNames.has(plan.sql)) statementNames.set(plan.sql, `crm_${statementNames.size + 1}`);
      byAdapter.set(adapter, plan);
    }
    const parameters = boundValues(plan, args);
    const direct = directRunners.get(db)?.(plan.sql, parameters);
    if (direct) return direct as R[];
    const result = await db.executeQuery<R>(compiledWith<R>(plan, parameters));
    return result.rows;
  };
}
