import { sql } from 'kysely';
import { dialectOf, type SqlDialect } from '../../db/dialect.js';
import type { Db } from '../../db/index.js';
import { prepared } from '../../db/prepared.js';
import type { TaggedTable } from './record-tags.js';

/** Where a field of a record's JSON comes from: a column of its table, or a column holding JSON (custom properties, `tag_ids`). */
export type JsonField = readonly [key: string, source: string | { json: string }];

/**
 * A record of `table` as the API answers it, one JSON object built by the database (SqlDialect.jsonObject;
 * http/replies.ts sendJsonText): `fields` in the order of the resource's mapper (`toContact`…), then
 * `deletedAt` in listings with includeDeleted (C.1). test/db/json-records.test.ts reads it against the mapper.
 */
export function recordJson(dialect: SqlDialect, table: TaggedTable, fields: readonly JsonField[], withDeleted: boolean) {
  const entries = fields.map(([key, source]) => {
    if (typeof source === 'string') return [key, sql.ref(`${table}.${source}`)] as const;
    return [key, dialect.storedJson(`${table}.${source.json}`)] as const;
  });
  if (withDeleted) entries.push(['deletedAt', sql.ref(`${table}.deleted_at`)] as const);
  return dialect.jsonObject(entries);
}

/**
 * The live record of `table` with an id, as recordJson builds it (undefined when missing or soft-deleted): one
 * statement compiled once, for the single read's route.
 */
export function liveRecordJsonById(table: TaggedTable, fields: readonly JsonField[]) {
  const query = prepared((db: Db, tenantId: string, id: string) =>
    db
      .selectFrom(table as 'contacts')
      .select(recordJson(dialectOf(db), table, fields, false).as('json'))
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null),
  );
  return async (db: Db, tenantId: string, id: string): Promise<string | undefined> => (await query(db, tenantId, id))[0]?.json;
}
