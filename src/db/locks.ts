import { sql } from 'kysely';
import { dialectOf } from './dialect.js';
import { restoreSavepointState, savepointState, type SavepointState } from './transactions.js';
import type { Db } from './types.js';

/**
 * Takes the transaction-scoped advisory lock `id` (a signed 64-bit integer, as text or bigint) without
 * waiting: true when taken (held until the transaction ends), false when another transaction holds it.
 * PostgreSQL: `pg_try_advisory_xact_lock`. SQLite has no advisory locks and needs none: a write
 * transaction there holds the whole database, so the lock is always "taken".
 */
export async function tryAdvisoryXactLock(tx: Db, id: string | bigint): Promise<boolean> {
  if (!dialectOf(tx).locksRows) return true;
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${String(id)}::bigint) as ok`.execute(tx);
  return rows[0]?.ok === true;
}

/**
 * Sets the savepoint `name` in the transaction `tx` and returns the transaction's state at that point
 * (the writes it has queued), for rollbackToSavepoint. Runs on both dialects; whether a caller should
 * prefer a savepoint to a whole rollback is the dialect's `cheapSavepoints`.
 */
export async function savepoint(tx: Db, name: string): Promise<SavepointState> {
  await sql`savepoint ${sql.id(name)}`.execute(tx);
  return savepointState(tx);
}

/**
 * Rolls the transaction back to the savepoint `name` (which stays set), dropping the writes queued
 * since and the facts the transaction remembered (restoreSavepointState) when `state` is given.
 */
export async function rollbackToSavepoint(tx: Db, name: string, state?: SavepointState): Promise<void> {
  await sql`rollback to savepoint ${sql.id(name)}`.execute(tx);
  if (state) restoreSavepointState(tx, state);
}

/** Releases the savepoint `name` (its changes stay part of the transaction). */
export async function releaseSavepoint(tx: Db, name: string): Promise<void> {
  await sql`release savepoint ${sql.id(name)}`.execute(tx);
}
