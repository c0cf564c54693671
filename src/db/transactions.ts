/**
 * Transactions: withTx and openTransaction, and what this module keeps per transaction (afterCommit hooks,
 * once-per-transaction facts, deferred writes) with the savepoints that restore it.
 */
import { sql } from 'kysely';
import { hasDirectRunner, transactionEnded, transactionStarted } from './prepared.js';
import type { Db, Tx } from './types.js';

/** Runs fn in a transaction, or inside the caller's transaction when already in one. */
export async function withTx<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db as Tx);
  let tx: Tx | undefined;
  try {
    const result = await db.transaction().execute(async (t) => {
      tx = t;
      transactionStarted(db, t);
      const out = await fn(t);
      await flushDeferred(t);
      return out;
    });
    committed(tx);
    return result;
  } finally {
    if (tx) forgetTransaction(tx);
  }
}

/** A transaction left open across calls (an idempotent request's: opened in one hook, ended in another). */
export interface OpenTransaction {
  readonly tx: Tx;
  /** Makes the deferred writes, commits, then runs the afterCommit hooks (as withTx does). */
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

const ROLLBACK = Symbol('rollback');

/**
 * Opens a transaction that the caller ends with `commit()` or `rollback()`. Built on Kysely's
 * callback transaction, held open until the caller decides, rather than on `startTransaction()`:
 * a controlled transaction wraps every statement run in it in one more executor, and building it cost
 * about 3 µs of each idempotent POST.
 */
export function openTransaction(db: Db): Promise<OpenTransaction> {
  return new Promise((resolve, reject) => {
    let decide!: (commit: boolean) => void;
    const decision = new Promise<boolean>((r) => (decide = r));
    let tx: Tx | undefined;
    const done = db.transaction().execute(async (t) => {
      tx = t;
      transactionStarted(db, t);
      resolve({ tx: t, commit: () => finish(true), rollback: () => finish(false) });
      if (!(await decision)) throw ROLLBACK;
      await flushDeferred(t);
    });
    // Before the callback ran (BEGIN failed) the error is the opening's; after, it is finish's.
    done.catch((err) => {
      if (!tx) reject(err);
    });
    const finish = async (commit: boolean): Promise<void> => {
      decide(commit);
      try {
        await done;
        committed(tx);
      } catch (err) {
        if (err !== ROLLBACK) throw err;
      } finally {
        forgetTransaction(tx!);
      }
    };
  });
}

const commitHooks = new WeakMap<Db, Map<string, () => void>>();

/**
 * Drops what this module and prepared.ts keep per transaction, once it has ended (withTx, openTransaction).
 * NOTE: the entries are weak, but a WeakMap is weak to full collections only: V8's scavenges keep every
 * value of an entry whose key they have not yet found dead, so the facts, queued writes and statement runner
 * of each finished transaction were copied by the next scavenge. Under creates at one connection that was
 * ~56 KB a scavenge (130 → 74 KB survived, `--trace-gc-nvp`), and the pause 0.51 → 0.45 ms; a create's p99
 * at one connection 0.99–1.16 → 0.89–1.10 ms in the bench.
 */
function forgetTransaction(tx: Db): void {
  commitHooks.delete(tx);
  txFacts.delete(tx);
  deferred.delete(tx);
  transactionEnded(tx);
}

/** What this module and prepared.ts still keep for `tx` (tests: nothing once it has ended). */
export function heldTransactionState(tx: Db): string[] {
  const held: [string, boolean][] = [
    ['commitHooks', commitHooks.has(tx)],
    ['txFacts', txFacts.has(tx)],
    ['deferred', deferred.has(tx)],
    ['directRunner', hasDirectRunner(tx)],
  ];
  return held.filter(([, h]) => h).map(([name]) => name);
}

/**
 * Runs `fn` once the caller's transaction has committed (never on rollback); at once outside a
 * transaction. Hooks with the same `key` run once per transaction. For in-process signals that must not
 * run before the data is visible to other connections (the event log's waiting readers on SQLite).
 * A hook registered in a savepoint later rolled back still runs: hooks are wake-ups, never effects.
 */
export function afterCommit(db: Db, key: string, fn: () => void): void {
  if (!db.isTransaction) {
    fn();
    return;
  }
  let hooks = commitHooks.get(db);
  if (!hooks) commitHooks.set(db, (hooks = new Map()));
  if (!hooks.has(key)) hooks.set(key, fn);
}

/** Runs the afterCommit hooks of a transaction that just committed (withTx does it; so must any other commit). */
export function committed(tx: Db | undefined): void {
  const hooks = tx && commitHooks.get(tx);
  if (!hooks) return;
  commitHooks.delete(tx);
  for (const fn of hooks.values()) {
    try {
      fn();
    } catch {
      // a wake-up that fails must not turn a committed write into an error
    }
  }
}

const txFacts = new WeakMap<Db, Set<string>>();

/**
 * Runs `write` once per transaction for a given `fact` (for example "contacts of tenant T changed"):
 * a batch of 100 writes records it once, not 100 times. Outside a transaction it always runs. A rollback
 * to a savepoint forgets every fact of the transaction, so a write undone with it is made again.
 */
export async function oncePerTransaction(db: Db, fact: string, write: () => Promise<void>): Promise<void> {
  if (!db.isTransaction) return write();
  let facts = txFacts.get(db);
  if (facts?.has(fact)) return;
  await write();
  if (!facts) txFacts.set(db, (facts = new Set()));
  facts.add(fact);
}

/** Rows of one table, queued by a kind of deferred write that another kind's statement may write (see `carries`). */
export interface CarriedRows {
  table: string;
  rows: Record<string, unknown>[];
}

/** A kind of write deferred to the end of a transaction (see deferWrite). */
export interface DeferredWrites<T> {
  /**
   * Writes every item the transaction queued, in the order queued; runs once, just before the commit. `carried`:
   * the rows of the kinds queued before it, when `carries` said that this flush writes them too.
   */
  flush(tx: Tx, items: T[], carried?: CarriedRows[]): Promise<void>;
  /**
   * Written after every other kind, as the last statements before the commit: for a write that locks a
   * row every writer of a tenant updates (modules/shared/changes.ts), so the lock is held the shortest time.
   */
  last?: boolean;
  /** Its items are rows of `table` (`row` of each): a later kind that `carries` them may write them in its statement. */
  rowsOf?: { table: string; row(item: T): Record<string, unknown> };
  /**
   * Whether its flush of `items` writes `carried` (the rows of every kind queued before it) in its own statement,
   * one round trip for both: PostgreSQL writes a change's audit entry with its event (db/event-log.ts).
   */
  carries?(tx: Tx, items: T[], carried: CarriedRows[]): boolean;
}

const deferred = new WeakMap<Db, { kind: DeferredWrites<any>; item: unknown }[]>();

/**
 * Queues a write to be made at the end of the caller's transaction, just before it commits (withTx and
 * every other commit call flushDeferred). For writes whose position must follow commit order, such as
 * the event log's (events/outbox.ts): made at the end, they hold their lock only until the commit.
 * Outside a transaction the write is made at once, in a transaction of its own. A rollback to a
 * savepoint drops the writes queued after it (withSavepoint, restoreSavepointState).
 */
export async function deferWrite<T>(db: Db, kind: DeferredWrites<T>, item: T): Promise<void> {
  if (!db.isTransaction) return withTx(db, (tx) => deferWrite(tx, kind, item));
  let queue = deferred.get(db);
  if (!queue) deferred.set(db, (queue = []));
  queue.push({ kind, item });
}

/**
 * Makes the deferred writes of a transaction about to commit, grouped by kind in the order first queued,
 * the kinds marked `last` after the others.
 */
export async function flushDeferred(tx: Tx): Promise<void> {
  const queue = deferred.get(tx);
  if (!queue?.length) return;
  deferred.delete(tx);
  const byKind = new Map<DeferredWrites<any>, unknown[]>();
  for (const { kind, item } of queue) {
    const items = byKind.get(kind);
    if (items) items.push(item);
    else byKind.set(kind, [item]);
  }
  const kinds = [...byKind].filter(([kind]) => !kind.last);
  // A kind that can write the rows of every kind queued before it in its own statement does, in their place.
  const at = kinds.findIndex(([kind]) => kind.carries);
  let carried: CarriedRows[] | undefined;
  if (at > 0 && kinds.slice(0, at).every(([kind]) => kind.rowsOf)) {
    const rows = kinds.slice(0, at).map(([kind, items]) => ({ table: kind.rowsOf!.table, rows: items.map((i) => kind.rowsOf!.row(i)) }));
    if (kinds[at][0].carries!(tx, kinds[at][1], rows)) carried = rows;
  }
  for (const [i, [kind, items]] of kinds.entries()) {
    if (carried && i < at) continue;
    await kind.flush(tx, items, carried && i === at ? carried : undefined);
  }
  for (const [kind, items] of byKind) if (kind.last) await kind.flush(tx, items);
}

/** What a savepoint must restore in this module's per-transaction state when it is rolled back to. */
export interface SavepointState {
  deferred: number;
}

export function savepointState(tx: Db): SavepointState {
  return { deferred: deferred.get(tx)?.length ?? 0 };
}

/**
 * After `rollback to savepoint`: the writes queued since are dropped, and every remembered fact is
 * forgotten (what the transaction wrote may be undone, so facts it remembered may no longer hold).
 */
export function restoreSavepointState(tx: Db, state: SavepointState): void {
  txFacts.delete(tx);
  const queue = deferred.get(tx);
  if (queue && queue.length > state.deferred) queue.length = state.deferred;
}

/**
 * Runs fn inside a savepoint of the caller's transaction: a failure rolls back fn's changes only and
 * leaves the transaction usable (PostgreSQL refuses every later statement of a transaction with a
 * failed one otherwise). Savepoints nest; each is released once done so the stack stays flat.
 */
export async function withSavepoint<T>(tx: Db, fn: () => Promise<T>, name = 'step'): Promise<T> {
  const id = sql.id(name);
  await sql`savepoint ${id}`.execute(tx);
  const state = savepointState(tx);
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    restoreSavepointState(tx, state);
    // A failed rollback (the connection is gone) must not hide the error that caused it.
    await sql`rollback to savepoint ${id}`.execute(tx).catch(() => {});
    await sql`release savepoint ${id}`.execute(tx).catch(() => {});
    throw err;
  }
  await sql`release savepoint ${id}`.execute(tx);
  return result;
}
