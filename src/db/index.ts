/**
 * The public entry of src/db for the rest of the service: the query builder's types, createDatabase, migrate and
 * transactions. Modules inside src/db import the file that defines what they use, never this one.
 */
export type { Db, Tx } from './types.js';
export type { Database, DatabaseConfig, DbOptions } from './database.js';
export { createDatabase } from './create.js';
export { WAL_AUTOCHECKPOINT_PAGES } from './sqlite-open.js';
export { READ_SNAPSHOT_MAX_MS } from './sqlite-fast-driver.js';
export { migrate } from './migrate.js';
export {
  afterCommit,
  committed,
  deferWrite,
  flushDeferred,
  heldTransactionState,
  oncePerTransaction,
  openTransaction,
  restoreSavepointState,
  savepointState,
  withSavepoint,
  withTx,
  type DeferredWrites,
  type OpenTransaction,
  type SavepointState,
} from './transactions.js';
