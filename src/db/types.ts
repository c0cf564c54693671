/**
 * The query builder's types, at the bottom of src/db's import graph: every module of the folder may import them,
 * and they import nothing of the folder but the table types.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from './tables/schema.js';

export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;
