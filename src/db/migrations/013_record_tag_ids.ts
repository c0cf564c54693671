import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * `tag_ids` on contacts, companies and deals: the record's tag ids as a sorted JSON array (`[]` for none), kept
 * by the database from `record_tags`, which stays the source of truth (filters by tag read it through its
 * indexes). Every read of a record (a page, a single read, an expansion) takes its tags from this column.
 *
 * Why: a page of 50 contacts ran a correlated subquery on `record_tags` per row to embed the tags; on SQLite
 * that was ~38 µs of a page statement's ~130 (bench/journal/), on PostgreSQL 50 index scans.
 *
 * How it stays right: triggers on `record_tags`, not the application, recompute the column of every record
 * whose tags an INSERT or DELETE touched — so no write path (the API's, a tag's delete, the CLI, the bench's
 * bulk seeding, a test's fixture) can leave it stale. `record_tags` rows are never updated (every column is
 * the key). A record's tags are written after its row exists (contacts/companies/deals services).
 * - SQLite: row triggers (one writer at a time, so nothing to race).
 * - PostgreSQL: statement triggers over transition tables (a bulk insert recomputes each record once). The
 *   recomputation is a VOLATILE function, so that when two transactions tag the same record at once the second,
 *   having waited for the first's row lock, reads the tags the first committed (READ COMMITTED takes a new
 *   snapshot per query of a volatile function; a subquery of the UPDATE itself would keep the statement's).
 *   test/db/record-tag-ids.test.ts races two such transactions.
 * The text is compact (`["a","b"]`) on both databases, sorted by code point (PostgreSQL: collate "C").
 */
const TAGGED = [
  ['contact', 'contacts'],
  ['company', 'companies'],
  ['deal', 'deals'],
] as const;

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  for (const [, table] of TAGGED) await sql`alter table ${sql.table(table)} add column tag_ids text not null default '[]'`.execute(db);
  if (dialect === 'postgres') await postgres(db);
  else await sqlite(db);
}

async function sqlite(db: Kysely<any>): Promise<void> {
  const of = (type: string, tenant: string, id: string) =>
    `(select json_group_array(v) from (select rt.tag_id as v from record_tags rt where rt.tenant_id = ${tenant} and rt.object_type = '${type}' and rt.object_id = ${id} order by rt.tag_id))`;
  for (const [type, table] of TAGGED) {
    for (const [event, row] of [
      ['insert', 'new'],
      ['delete', 'old'],
    ] as const) {
      await sql
        .raw(
          `create trigger record_tags__${event}__${table} after ${event} on record_tags when ${row}.object_type = '${type}' begin
  update ${table} set tag_ids = ${of(type, `${row}.tenant_id`, `${row}.object_id`)} where tenant_id = ${row}.tenant_id and id = ${row}.object_id;
end`,
        )
        .execute(db);
    }
    await sql
      .raw(
        `update ${table} set tag_ids = ${of(type, `${table}.tenant_id`, `${table}.id`)}
  where exists (select 1 from record_tags rt where rt.tenant_id = ${table}.tenant_id and rt.object_type = '${type}' and rt.object_id = ${table}.id)`,
      )
      .execute(db);
  }
}

async function postgres(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `create function crm_tag_ids(t text, ty text, o text) returns text language sql volatile as $f$
  select coalesce('[' || string_agg(to_json(tag_id)::text, ',' order by tag_id collate "C") || ']', '[]')
  from record_tags where tenant_id = t and object_type = ty and object_id = o
$f$`,
    )
    .execute(db);
  const updates = TAGGED.map(
    ([type, table]) =>
      `  update ${table} r set tag_ids = crm_tag_ids(r.tenant_id, '${type}', r.id)
    from (select distinct tenant_id, object_id from changed where object_type = '${type}') c
    where r.tenant_id = c.tenant_id and r.id = c.object_id;`,
  ).join('\n');
  await sql.raw(`create function crm_record_tags_sync() returns trigger language plpgsql as $f$\nbegin\n${updates}\n  return null;\nend\n$f$`).execute(db);
  await sql
    .raw(
      `create trigger record_tags__insert after insert on record_tags referencing new table as changed for each statement execute function crm_record_tags_sync()`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger record_tags__delete after delete on record_tags referencing old table as changed for each statement execute function crm_record_tags_sync()`,
    )
    .execute(db);
  for (const [type, table] of TAGGED) {
    await sql
      .raw(
        `update ${table} r set tag_ids = crm_tag_ids(r.tenant_id, '${type}', r.id)
  from (select distinct tenant_id, object_id from record_tags where object_type = '${type}') c
  where r.tenant_id = c.tenant_id and r.id = c.object_id`,
      )
      .execute(db);
  }
}
