import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * `doc` on contacts and companies: the live record as the API answers it (contacts.service.ts toContact,
 * companies.service.ts toCompany), one JSON object stored in the row by the database itself, a STORED
 * generated column. Pages, filters, searches and single reads send it as it is (modules/shared/record-json.ts).
 *
 * Why: building the 50 objects of a page with json_object at read time was about half of a page statement's
 * cost on SQLite (bench/journal/); a stored column is read as one value.
 *
 * How it stays right: the database computes it on every INSERT and every UPDATE of the row, whatever writes it
 * (the API, the tag triggers of migration 013 that rewrite `tag_ids`, the CLI, the bench's bulk seeding, a test's
 * fixture): no write path can leave it stale, and none has to know it exists.
 * - SQLite cannot add a STORED column to a table, so the table is rebuilt (its indexes read back from
 *   sqlite_master and recreated; nothing references these tables by foreign key, no trigger is on them).
 *   The new table is the old one's own definition, read back, with `doc` added: no column is restated here.
 *   json_object/json are deterministic, as a generated column requires. SQLite (3.38+) writes a REAL with the
 *   fewest digits that read back the same value (0.30000000000000004, 82.0): JSON.parse gives the number
 *   JSON.stringify would have written.
 * - PostgreSQL: json_build_object is only STABLE (a type's output may depend on settings), and a generated
 *   column needs IMMUTABLE. Every column here is text or double precision: text's output depends on no setting,
 *   and float8's only on extra_float_digits, which this service never changes (default: shortest exact). So the
 *   expression is wrapped in a function declared IMMUTABLE, which is true for these argument types.
 *
 * The shape is fixed here: a change of the API's contact or company (a new field) is a new migration that
 * redefines `doc`; test/db/json-records.test.ts reads every stored doc against the mapper.
 */
const CONTACT_FIELDS = [
  ['id', 'id'],
  ['firstName', 'first_name'],
  ['lastName', 'last_name'],
  ['email', 'email'],
  ['phone', 'phone'],
  ['companyId', 'company_id'],
  ['ownerId', 'owner_id'],
  ['tags', { json: 'tag_ids' }],
  ['customProperties', { json: 'custom_properties' }],
  ['score', 'score'],
  ['createdAt', 'created_at'],
  ['updatedAt', 'updated_at'],
] as const;

const COMPANY_FIELDS = [
  ['id', 'id'],
  ['name', 'name'],
  ['cnpj', 'cnpj'],
  ['website', 'website'],
  ['domain', 'domain'],
  ['phone', 'phone'],
  ['industry', 'industry'],
  ['ownerId', 'owner_id'],
  ['tags', { json: 'tag_ids' }],
  ['customProperties', { json: 'custom_properties' }],
  ['createdAt', 'created_at'],
  ['updatedAt', 'updated_at'],
] as const;

type Field = readonly [key: string, source: string | { readonly json: string }];

const TABLES = [
  ['contacts', CONTACT_FIELDS],
  ['companies', COMPANY_FIELDS],
] as const;

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  for (const [table, fields] of TABLES) {
    if (dialect === 'postgres') await postgres(db, table, fields);
    else await sqlite(db, table, fields);
  }
}

async function sqlite(db: Kysely<any>, table: string, fields: readonly Field[]): Promise<void> {
  const doc = `json_object(${fields.map(([key, source]) => `'${key}', ${typeof source === 'string' ? source : `json(${source.json})`}`).join(', ')})`;
  await rebuildWithStoredColumn(db, table, 'doc', doc);
}

/**
 * SQLite: `table` rebuilt with a STORED generated column `column` (text, not null) computed by `expression`, placed
 * before its primary key (SQLite cannot add a STORED column to a table). The new table is the old one's own
 * definition, read back, with the column added; its indexes are read back and recreated. Also migration 017.
 */
export async function rebuildWithStoredColumn(db: Kysely<any>, table: string, column: string, expression: string): Promise<void> {
  // The new table is the table as it stands (its CREATE TABLE, read back), with the column before its primary key.
  const [{ ddl }] = (await sql<{ ddl: string }>`select sql as ddl from sqlite_master where type = 'table' and name = ${table}`.execute(db)).rows;
  const key = /,\s*primary key \(tenant_id, id\)\s*\)\s*$/i;
  if (!key.test(ddl)) throw new Error(`unexpected definition of ${table}: ${ddl}`);
  const created = ddl
    .replace(/^create table "?\w+"?/i, `create table ${table}__new`)
    .replace(key, `,\n  ${column} text not null generated always as (${expression}) stored,\n  primary key (tenant_id, id)\n)`);
  const names = (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows.map((c) => c.name).join(', ');
  const indexes = await sql<{ sql: string }>`select sql from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(db);
  await sql.raw(created).execute(db);
  await sql.raw(`insert into ${table}__new (${names}) select ${names} from ${table}`).execute(db);
  await sql.raw(`drop table ${table}`).execute(db);
  // The tag triggers of migration 013 name the table in their bodies; the rename must leave them as they are.
  await sql.raw(`pragma legacy_alter_table = on`).execute(db);
  await sql.raw(`alter table ${table}__new rename to ${table}`).execute(db);
  await sql.raw(`pragma legacy_alter_table = off`).execute(db);
  for (const index of indexes.rows) await sql.raw(index.sql).execute(db);
}

async function postgres(db: Kysely<any>, table: string, fields: readonly Field[]): Promise<void> {
  const columns = fields.map(([, source]) => (typeof source === 'string' ? source : source.json));
  const types = columns.map((c) => (c === 'score' ? 'double precision' : 'text'));
  const fn = `crm_${table}_doc`;
  const body = fields.map(([key, source], i) => `'${key}'::text, ${typeof source === 'string' ? `$${i + 1}` : `$${i + 1}::json`}`).join(', ');
  await sql
    .raw(`create function ${fn}(${types.join(', ')}) returns text language sql immutable parallel safe as $f$ select json_build_object(${body})::text $f$`)
    .execute(db);
  await sql.raw(`alter table ${table} add column doc text not null generated always as (${fn}(${columns.join(', ')})) stored`).execute(db);
}
