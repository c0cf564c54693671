/**
 * Where data-dependent statements run, and how long they may take (DESIGN §4, CONTRACT A.2
 * `QUERY_TIMEOUT_MS`).
 *
 * Which statements run where
 * - On the main connection (the event loop on SQLite): point reads and writes by primary or unique
 *   key, and reads bounded by a page (the tags of 50 records, the expansions of a deal, and a list page that
 *   walks its own index to a bounded depth: listing/planner.ts `walksIndex`). Their cost does not depend on how
 *   much data a tenant has, and a hop would cost more than the statement (a page of 50 on SQLite: a
 *   170–300 µs statement; with the hop, the server's CPU per page was ~1.6 times as much, and one tenant's
 *   pages ran one at a time).
 * - Also on the main connection: a bounded probe of a filtered page of contacts, companies or deals (listing/planner.ts
 *   ListingSpec.probes): at most PROBE_ROWS entries of an index walk, each row tested against a filter of a
 *   few comparisons, in one statement that tells whether they held the page. When they do not, the page goes
 *   to the read pool like any other.
 * - On the read pool, a page by number of contacts, companies or deals whose total is not cached reads the
 *   list once for both, up to COUNTED_ROWS rows (db/pages.ts compileCounted); a longer list's total is counted
 *   apart, as before.
 * - Through `Reads` (this module): every statement whose cost grows with the data — other list pages,
 *   search and filters, totals, dynamic-list recalculation. They run on a small pool of read
 *   connections with a deadline per statement that also covers the wait for a free connection:
 *   - SQLite: each connection lives in its own child process (WAL lets readers run beside the writer).
 *     Processes rather than worker threads because a thread cannot be stopped inside a native call:
 *     `worker.terminate()` on a thread running a 38 s SQLite statement resolved only after those 38 s,
 *     with the core busy all along, while SIGKILL frees it at once (and the dead reader's WAL lock with
 *     it). Past the deadline, or when the client goes away, the process is killed and a fresh one takes
 *     its place. A statement still running after 50 ms runs at the lowest CPU priority until it answers
 *     (sqlite-reader.ts), so a heavy scan takes only the CPU nobody else needs.
 *   - PostgreSQL: a pool of its own whose sessions carry `statement_timeout` as a backstop; past the
 *     deadline, or when the client goes away, the backend is cancelled (`pg_cancel_backend`).
 * - Fairness: one tenant may run at most `perTenant` statements at once (half the pool), so another
 *   tenant always finds a free connection; more than `maxQueuedPerTenant` waiting is refused with 429.
 *
 * A `Reads` bound to a transaction runs on it directly (the transaction's own uncommitted writes must be
 * visible), as does one over an in-memory SQLite database, which no other process can open.
 */
import type { CompiledQuery, Compilable, RawBuilder } from 'kysely';
import { errors } from '../errors.js';
import type { Db } from './types.js';

export interface Reads {
  /** The query builder (also the main connection, for what stays there). */
  readonly db: Db;
  /**
   * Whether these statements run on a read pool, away from the main connection (the listing planner runs a bounded
   * probe on the main connection first only then: without a pool, every statement is already on it).
   */
  readonly pooled: boolean;
  all<O>(query: Compilable<O> | RawBuilder<O>): Promise<O[]>;
  first<O>(query: Compilable<O> | RawBuilder<O>): Promise<O | undefined>;
}

/** One read connection of a pool: runs one statement at a time. */
export interface ReadSlot {
  run(sql: string, params: readonly unknown[]): Promise<unknown[]>;
  /** Abandons the statement in flight (its `run` rejects); the slot is usable again afterwards. */
  cancel(): void;
  /** Opens the connection ahead of the first statement. */
  warm(): void;
  close(): Promise<void>;
}

export interface ReadPoolOptions {
  timeoutMs: number;
  /** Statements one tenant may run at once (default: half the pool, at least 1). */
  perTenant?: number;
  /** Statements one tenant may have waiting (default 200); beyond, 429. */
  maxQueuedPerTenant?: number;
}

/** Tells when nobody waits for an answer any more (the client's connection closed). */
export interface AbortSource {
  readonly aborted: boolean;
  /**
   * When the request arrived (epoch ms), if known: its reads' deadline runs from then, so time it spent
   * before its first statement (waiting for its turn to read a large body, the main connection) counts too.
   */
  readonly startedAt?: number;
  /** Calls `onAbort` when it happens; returns the function that stops listening. */
  subscribe(onAbort: () => void): () => void;
}

/** Raised to a statement abandoned because its client went away (no one reads the answer). */
export class QueryAbandoned extends Error {}

interface Job {
  tenantId: string;
  sql: string;
  params: readonly unknown[];
  resolve(rows: unknown[]): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
  slot?: ReadSlot;
  done: boolean;
  unlisten?: () => void;
}

/**
 * Fair scheduler over a fixed set of read slots. Jobs wait in one FIFO; a free slot takes the oldest job
 * whose tenant is under its share. The deadline runs from submission.
 */
export class ReadPool {
  private readonly free: ReadSlot[];
  private readonly queue: Job[] = [];
  private readonly running = new Map<string, number>();
  private readonly queued = new Map<string, number>();
  private readonly perTenant: number;
  private readonly maxQueued: number;
  private closed = false;
  /** Statements stopped at their deadline or because their client went away (for tests and metrics). */
  cancelled = 0;

  constructor(
    private readonly slots: ReadSlot[],
    private readonly opts: ReadPoolOptions,
  ) {
    this.free = [...slots];
    this.perTenant = opts.perTenant ?? Math.max(1, Math.floor(slots.length / 2));
    this.maxQueued = opts.maxQueuedPerTenant ?? 200;
  }

  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  /** Opens every connection now, so the first requests do not pay for it (servers and tests; not the CLI). */
  warm(): void {
    for (const s of this.slots) s.warm();
  }

  /**
   * Runs one statement for a tenant. `deadline` (epoch ms) is the request's: a request that runs several
   * statements (a page, then its total) shares one QUERY_TIMEOUT_MS between them.
   */
  run(tenantId: string, sql: string, params: readonly unknown[], signal?: AbortSource, deadline?: number): Promise<unknown[]> {
    if (this.closed) return Promise.reject(new Error('read pool closed'));
    const budget = deadline === undefined ? this.opts.timeoutMs : deadline - Date.now();
    if (budget <= 0) return Promise.reject(errors.queryTimeout(this.opts.timeoutMs));
    if (signal?.aborted) return Promise.reject(new QueryAbandoned('client gone'));
    if ((this.queued.get(tenantId) ?? 0) >= this.maxQueued) return Promise.reject(errors.tooManyQueries(this.maxQueued));
    return new Promise((resolve, reject) => {
      const job: Job = { tenantId, sql, params, resolve, reject, done: false, timer: undefined as unknown as NodeJS.Timeout };
      job.timer = setTimeout(() => this.abandon(job, errors.queryTimeout(this.opts.timeoutMs)), budget);
      if (signal) job.unlisten = signal.subscribe(() => this.abandon(job, new QueryAbandoned('client gone')));
      this.queue.push(job);
      this.queued.set(tenantId, (this.queued.get(tenantId) ?? 0) + 1);
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.free.length > 0) {
      const i = this.queue.findIndex((j) => (this.running.get(j.tenantId) ?? 0) < this.perTenant);
      if (i < 0) return;
      const [job] = this.queue.splice(i, 1);
      this.dec(this.queued, job.tenantId);
      this.running.set(job.tenantId, (this.running.get(job.tenantId) ?? 0) + 1);
      const slot = this.free.pop()!;
      job.slot = slot;
      slot.run(job.sql, job.params).then(
        (rows) => this.finish(job, slot, null, rows),
        (err) => this.finish(job, slot, err, null),
      );
    }
  }

  private finish(job: Job, slot: ReadSlot, err: unknown, rows: unknown[] | null): void {
    this.dec(this.running, job.tenantId);
    if (!this.closed) this.free.push(slot);
    this.settle(job, err, rows);
    this.dispatch();
  }

  /** Deadline passed or client gone: answer now; a running statement is cancelled, its slot freed when it stops. */
  private abandon(job: Job, err: Error): void {
    if (job.done) return;
    if (job.slot) {
      this.cancelled++;
      job.slot.cancel();
    } else {
      const i = this.queue.indexOf(job);
      if (i >= 0) {
        this.queue.splice(i, 1);
        this.dec(this.queued, job.tenantId);
      }
    }
    this.settle(job, err, null);
  }

  private settle(job: Job, err: unknown, rows: unknown[] | null): void {
    if (job.done) return;
    job.done = true;
    clearTimeout(job.timer);
    job.unlisten?.();
    if (err) job.reject(err);
    else job.resolve(rows!);
  }

  private dec(map: Map<string, number>, key: string): void {
    const n = (map.get(key) ?? 0) - 1;
    if (n <= 0) map.delete(key);
    else map.set(key, n);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job, new Error('read pool closed'), null);
    await Promise.all(this.slots.map((s) => s.close()));
  }
}

type Query<O> = Compilable<O> | RawBuilder<O>;

/** Query builders compile themselves; raw `sql` needs the database to compile against. */
function compile<O>(db: Db, query: Query<O>): CompiledQuery<O> {
  return 'isRawBuilder' in query ? query.compile(db) : query.compile();
}

/** Reads that run directly on a connection or transaction (no pool, no deadline). */
export function directReads(db: Db): Reads {
  return {
    db,
    pooled: false,
    all: async <O>(query: Query<O>) => (await db.executeQuery(compile(db, query))).rows as O[],
    first: async <O>(query: Query<O>) => (await db.executeQuery(compile(db, query))).rows[0] as O | undefined,
  };
}

/**
 * Reads of one tenant (one request) through the pool; `signal` aborts them when the client goes away.
 * The deadline starts when the request arrived (`signal.startedAt`), else with the first statement, and
 * covers every later one of the same request: a request is answered by QUERY_TIMEOUT_MS, whatever it waited for.
 */
export function pooledReads(db: Db, pool: ReadPool, tenantId: string, signal?: AbortSource): Reads {
  let deadline: number | undefined;
  const all = async <O>(query: Query<O>): Promise<O[]> => {
    const { sql, parameters } = compile(db, query);
    deadline ??= (signal?.startedAt ?? Date.now()) + pool.timeoutMs;
    return (await pool.run(tenantId, sql, parameters, signal, deadline)) as O[];
  };
  return {
    db,
    pooled: true,
    all,
    first: async <O>(query: Query<O>) => (await all(query))[0],
  };
}
