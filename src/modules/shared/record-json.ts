import { sql } from 'kysely';
import { inIdSet, onlyId, preparedByIdSet } from '../../db/batch.js';
import { dialectOf, type SqlDialect } from '../../db/dialect.js';
import type { Db } from '../../db/index.js';
import { prepared } from '../../db/prepared.js';

/**
 * The tables whose rows store their record as the API answers it (`doc`, migration 014; deals 017, their contact
 * and company null: deals.repo.ts dealRecordSql and spliceDeals put them in).
 */
export type DocTable = 'contacts' | 'companies' | 'deals';

/**
 * A record of `table` as the API answers it: the JSON object its row stores (`doc`, a generated column the
 * database keeps on every write, migration 014; http/replies.ts sendJsonText), with `deletedAt` appended in
 * listings with includeDeleted (C.1), and `mergedIntoId` for a merged contact or company (D.2). test/db/json-records.test.ts reads it against the resource's mapper.
 */
export function recordJson(dialect: SqlDialect, table: DocTable, withDeleted: boolean) {
  if (!withDeleted) return sql<string>`${sql.ref(`${table}.doc`)}`;
  const deleted = dialect.jsonAppend(`${table}.doc`, 'deletedAt', sql.ref(`${table}.deleted_at`));
  if (table === 'deals') return deleted;
  // A contact or company a merge folded into another (D.2) shows `mergedIntoId` too (migration 023).
  const merged = sql.ref(`${table}.merged_into_id`);
  return sql<string>`(case when ${merged} is null then ${deleted} else ${dialect.jsonAppend(deleted, 'mergedIntoId', merged)} end)`;
}

/**
 * The live record of `table` with an id, as recordJson gives it (undefined when missing or soft-deleted): one
 * statement compiled once, for the single read's route.
 */
export function liveRecordJsonById(table: DocTable) {
  const query = prepared((db: Db, tenantId: string, id: string) =>
    db
      .selectFrom(table as 'contacts')
      .select(recordJson(dialectOf(db), table, false).as('json'))
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null),
  );
  return async (db: Db, tenantId: string, id: string): Promise<string | undefined> => (await query(db, tenantId, id))[0]?.json;
}

/**
 * The live records of `table` among `ids` (any order; missing and soft-deleted ones absent), as recordJson gives
 * them, by id: one statement compiled once, for other resources' expansions (a page of deals).
 */
export function liveRecordJsonByIds(table: DocTable) {
  const query = preparedByIdSet((db: Db, tenantId: string, ids: unknown) =>
    db
      .selectFrom(table as 'contacts')
      .select(['id', recordJson(dialectOf(db), table, false).as('json')])
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .where(inIdSet(db, 'id', ids)),
  );
  // One id (a page whose deals share their contact) runs the single read's kind of statement.
  const one = liveRecordJsonById(table);
  return async (db: Db, tenantId: string, ids: readonly string[]): Promise<Map<string, string>> => {
    if (ids.length === 0) return new Map();
    const id = onlyId(ids);
    if (id !== undefined) {
      const json = await one(db, tenantId, id);
      return new Map(json === undefined ? [] : [[id, json]]);
    }
    return new Map((await query(db, tenantId, ids)).map((r) => [r.id, r.json]));
  };
}
