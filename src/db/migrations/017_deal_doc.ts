import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';
import { rebuildWithStoredColumn } from './014_record_doc.js';

/**
 * `doc` on deals: the deal as the API answers it (deals.service.ts toDeal) with `"contact":null` and
 * `"company":null` where its expansions go, one JSON object stored in the row by the database itself, a STORED
 * generated column, as migration 014 gave contacts and companies. The list and the single read splice the
 * contact's and the company's stored `doc` into it (deals.service.ts dealsJson).
 *
 * Why: a page of 50 deals read 20 values a deal from the driver (~0.25 µs each on SQLite), built 50 objects and
 * serialized them again; the stored column is one value a deal (bench/journal/).
 *
 * How it stays right: as 014, the database computes it on every INSERT and UPDATE of the row, whatever writes it
 * (the tag triggers of migration 013 included). The value is the cents divided by 100 in double precision, as
 * money.ts fromCents divides them: the same double, written by SQLite with the fewest digits that read back the
 * same (1234.5, 10.0) and by PostgreSQL's float8 output likewise (1234.5, 10); JSON.parse reads what
 * JSON.stringify would have written. PostgreSQL's json_build_object writes `"key" : value`, with spaces: the splice
 * looks for either form. test/db/json-records.test.ts reads every deal against toDeal, key order included.
 */
const FIELDS: readonly [key: string, sqlite: string, postgres: string][] = [
  ['id', 'id', 'id'],
  ['title', 'title', 'title'],
  ['pipelineId', 'pipeline_id', 'pipeline_id'],
  ['stageId', 'stage_id', 'stage_id'],
  ['value', 'value_cents / 100.0', 'value_cents::float8 / 100'],
  ['currency', 'currency', 'currency'],
  ['contactId', 'contact_id', 'contact_id'],
  ['contact', 'null', 'null'],
  ['companyId', 'company_id', 'company_id'],
  ['company', 'null', 'null'],
  ['ownerId', 'owner_id', 'owner_id'],
  ['expectedCloseDate', 'expected_close_date', 'expected_close_date'],
  ['customProperties', 'json(custom_properties)', 'custom_properties::json'],
  ['tags', 'json(tag_ids)', 'tag_ids::json'],
  ['isWon', "json(iif(is_won = 1, 'true', 'false'))", 'is_won = 1'],
  ['isLost', "json(iif(is_lost = 1, 'true', 'false'))", 'is_lost = 1'],
  ['closedAt', 'closed_at', 'closed_at'],
  ['lossReasonId', 'loss_reason_id', 'loss_reason_id'],
  ['lossNotes', 'loss_notes', 'loss_notes'],
  ['createdAt', 'created_at', 'created_at'],
  ['updatedAt', 'updated_at', 'updated_at'],
];

/** The columns the PostgreSQL function reads, with their types (001_initial, 013). */
const PG_COLUMNS: readonly [name: string, type: string][] = [
  ['id', 'text'],
  ['title', 'text'],
  ['pipeline_id', 'text'],
  ['stage_id', 'text'],
  ['value_cents', 'bigint'],
  ['currency', 'text'],
  ['contact_id', 'text'],
  ['company_id', 'text'],
  ['owner_id', 'text'],
  ['expected_close_date', 'text'],
  ['custom_properties', 'text'],
  ['tag_ids', 'text'],
  ['is_won', 'integer'],
  ['is_lost', 'integer'],
  ['closed_at', 'text'],
  ['loss_reason_id', 'text'],
  ['loss_notes', 'text'],
  ['created_at', 'text'],
  ['updated_at', 'text'],
];

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'sqlite') {
    await rebuildWithStoredColumn(db, 'deals', 'doc', `json_object(${FIELDS.map(([key, expr]) => `'${key}', ${expr}`).join(', ')})`);
    return;
  }
  // As 014: json_build_object is only STABLE; over text, bigint, integer and float8 (whose output depends only on
  // extra_float_digits, which this service never changes) its result depends on its arguments alone.
  const body = FIELDS.map(([key, , expr]) => `'${key}'::text, ${expr}`).join(', ');
  const params = PG_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ');
  await sql
    .raw(`create function crm_deals_doc(${params}) returns text language sql immutable parallel safe as $f$ select json_build_object(${body})::text $f$`)
    .execute(db);
  await sql
    .raw(`alter table deals add column doc text not null generated always as (crm_deals_doc(${PG_COLUMNS.map(([n]) => n).join(', ')})) stored`)
    .execute(db);
}
