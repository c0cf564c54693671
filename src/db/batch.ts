import { sql, type Compilable, type RawBuilder, type SqlBool } from 'kysely';
import { dialectOf } from './dialect.js';
import type { Db } from './types.js';
import { prepared } from './prepared.js';

/**
 * `IN (…)` lists are split so a statement's bound parameters stay far below SQLite's limit (32,766)
 * and PostgreSQL's (65,535), whatever the caller passes.
 */
export const IN_CHUNK = 500;

/** Runs `query` over de-duplicated `ids` in chunks and concatenates the rows. */
export async function selectInChunks<T>(ids: readonly string[], query: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const unique = [...new Set(ids)];
  const out: T[] = [];
  for (let i = 0; i < unique.length; i += IN_CHUNK) out.push(...(await query(unique.slice(i, i + IN_CHUNK))));
  return out;
}

/** The id when `ids` name exactly one (repeated or not), for the single-read fast paths; else undefined. */
export function onlyId(ids: readonly string[]): string | undefined {
  return ids.length > 0 && ids.every((id) => id === ids[0]) ? ids[0] : undefined;
}

/** Runs a write over de-duplicated `ids` in chunks. */
export async function forEachChunk(ids: readonly string[], write: (chunk: string[]) => Promise<unknown>): Promise<void> {
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += IN_CHUNK) await write(unique.slice(i, i + IN_CHUNK));
}

/**
 * `column` is one of a set of ids bound as ONE parameter, so the statement reads the same for any number
 * of ids: prepared() builds and compiles it once, PostgreSQL plans it once per session, and no list of
 * ids meets a bound-parameter limit. Build the query with preparedByIdSet, which binds the ids there.
 * SQLite: the ids as a JSON array, read by json_each (the planner probes the column's index once per id,
 * as for `in (?, ?, …)`); PostgreSQL: a `text[]` parameter, `= any(…)` (SqlDialect.inSet, which filters'
 * value lists use too).
 */
export function inIdSet(db: Db, column: string, ids: unknown): RawBuilder<SqlBool> {
  return dialectOf(db).inSet(sql.ref(column), ids) as RawBuilder<SqlBool>;
}

/** The value of inIdSet's parameter for `ids` on `db`'s database. */
export function idSet(db: Db, ids: readonly string[]): unknown {
  return dialectOf(db).stringSet(ids);
}

/**
 * prepared() for a query of one tenant over a set of ids: `build` puts its `ids` marker in an inIdSet; the
 * function returned takes the ids themselves (repeated ones sent once) and binds them as one value (idSet).
 */
export function preparedByIdSet<R>(build: (db: Db, tenantId: string, ids: unknown) => Compilable<R>) {
  const query = prepared(build);
  return (db: Db, tenantId: string, ids: readonly string[]): Promise<R[]> => query(db, tenantId, idSet(db, [...new Set(ids)]));
}
