import { CompiledQuery, createQueryId, type Compilable, type RootOperationNode } from 'kysely';
import type { Db } from './index.js';

/**
 * A query built and compiled once per dialect, then run with new parameter values. Building and
 * compiling a Kysely query costs tens of microseconds — more than SQLite needs to answer a point
 * read — so the hottest reads (a record by id) skip it.
 *
 * `build` receives placeholder values and must use each exactly where a value goes; the compiled
 * parameters are then re-bound by position. Only for queries whose shape never depends on the values.
 */
export function prepared<A extends unknown[], R>(build: (db: Db, ...args: A) => Compilable<R>) {
  const byAdapter = new WeakMap<object, { sql: string; slots: number[]; query: RootOperationNode }>();
  return async (db: Db, ...args: A): Promise<R[]> => {
    const adapter = db.getExecutor().adapter;
    let plan = byAdapter.get(adapter);
    if (!plan) {
      const markers = args.map((_, i) => `\u0000arg${i}\u0000`);
      const compiled = build(db, ...(markers as unknown as A)).compile();
      const slots = compiled.parameters.map((p) => markers.indexOf(p as string));
      if (slots.some((s) => s < 0)) throw new Error('prepared(): every parameter must come from an argument');
      plan = { sql: compiled.sql, slots, query: CompiledQuery.raw(compiled.sql).query };
      byAdapter.set(adapter, plan);
    }
    // The compiled query as CompiledQuery.raw makes it, less the three freezes and the node built anew.
    const query: CompiledQuery<R> = { sql: plan.sql, query: plan.query, parameters: plan.slots.map((s) => args[s]), queryId: createQueryId() };
    const result = await db.executeQuery<R>(query);
    return result.rows;
  };
}
