import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';
import { SEARCH_SOURCES, SEARCH_TEXT, type SearchTable } from '../search-text.js';

/**
 * Search that ignores case and accents (CONTRACT C.5).
 *
 * 1. `search_text` on contacts, companies, deals, tags and proposals: the searched fields folded
 *    (db/search-text.ts), written by the repos on every insert and update. Existing rows are filled here in
 *    batches of BATCH rows, each in a savepoint, computed by the same JavaScript the repos use.
 * 2. PostgreSQL: `crm_fold(text)`, the SQL twin of domain/fold.mjs for filters on fields without a stored
 *    column (test/domain/fold.test.ts checks that both give the same text). It is frozen here: a change of
 *    foldText needs a later migration that replaces the function and refills `search_text`.
 *    SQLite's crm_fold is the JavaScript function itself, registered on each connection (db/index.ts).
 * 3. PostgreSQL: trigram indexes (pg_trgm, GIN) on `search_text` of the paginated lists, which answer
 *    `LIKE '%term%'` without reading every row of the tenant (bench/journal/ has the measurements).
 *    pg_trgm is a trusted extension (PostgreSQL ≥ 13): a database owner without superuser may create it.
 *    Where it cannot be created, the migration goes on without these indexes (searches then read the
 *    tenant's rows, as SQLite does) and says so on stderr; creating the extension and the indexes later
 *    is in the README.
 * 4. SQLite: the index of each list's default order (contacts and companies by creation, deals by update,
 *    proposals by creation) also holds search_text and deleted_at. LIKE '%term%' cannot seek in an index,
 *    but then (a) a page in the default order tests the search on index entries and reads only the
 *    matching rows, and (b) a search's total is an index-only scan of the tenant's entries instead of a
 *    visit of every row in the order of another index. 100k contacts, a rare full name: page 43 → 13 ms,
 *    total 250–450 → 16 ms. (deleted_at must be a column of the index for SQLite to count from it alone, the
 *    partial `where` is not enough.) A separate (tenant_id, search_text) index did as well for totals but
 *    is written at a random place on every insert: batch creates were 20 % slower; these indexes are
 *    appended to in time order. An FTS5 trigram table was considered and left out: see README "Search".
 */
const BATCH = 1_000;

/** Tables whose list is paginated and searched by a `LIKE '%term%'` worth an index (PostgreSQL: trigram). */
const INDEXED_TABLES: SearchTable[] = ['contacts', 'companies', 'deals', 'proposals'];

/** SQLite: the index of each list's default order (001, 004), rebuilt with search_text (see 4. above). */
const DEFAULT_ORDER_INDEXES = [
  ['contacts', 'contacts__created', 'created_at'],
  ['companies', 'companies__created', 'created_at'],
  ['deals', 'deals__updated', 'updated_at'],
  ['proposals', 'proposals__created', 'created_at'],
] as const;

// NOTE: the marks class and the letter maps are those of domain/fold.mjs (FOLD_MARKS, FOLD_LETTERS) written
// out, so that this released migration never changes with that file. ASCII text is lower-cased under the
// "C" collation (no locale can turn I into ı there); other text is lower-cased with ICU's root locale,
// which maps every script as JavaScript's toLowerCase does, whatever the database's own collation.
const foldFunction = (lowerCollation: string) =>
  sql.raw(`
create or replace function crm_fold(t text) returns text
language sql immutable parallel safe
as $fold$
  select case when octet_length(t) = char_length(t) then lower(t collate "C") collate "default"
  else normalize(
    replace(
      translate(
        regexp_replace(
          lower(normalize(t, NFKD) collate ${lowerCollation}),
          '[\\u0300-\\u036f\\u0483-\\u0489\\u0591-\\u05bd\\u05bf\\u05c1\\u05c2\\u05c4\\u05c5\\u05c7\\u0610-\\u061a\\u064b-\\u065f\\u0670\\u06d6-\\u06dc\\u06df-\\u06e4\\u06e7\\u06e8\\u06ea-\\u06ed\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u20d0-\\u20ff\\ufe20-\\ufe2f]',
          '', 'g'),
        'ςłøđħŧıƀɨ', 'σlodhtibi'),
      'ß', 'ss'),
    NFC) collate "default"
  end
$fold$`);

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  for (const table of Object.keys(SEARCH_SOURCES) as SearchTable[]) {
    await sql`alter table ${sql.table(table)} add column search_text text not null default ''`.execute(db);
    await backfill(db, dialect, table);
  }
  if (dialect !== 'postgres') {
    for (const [table, index, column] of DEFAULT_ORDER_INDEXES) {
      await sql`drop index ${sql.id(index)}`.execute(db);
      await sql`create index ${sql.id(index)} on ${sql.table(table)} (tenant_id, ${sql.ref(column)}, id, search_text, deleted_at) where deleted_at is null`.execute(
        db,
      );
    }
    return;
  }

  const icu = await sql<{ ok: number }>`select 1 as ok from pg_collation where collname = 'und-x-icu'`.execute(db);
  await foldFunction(icu.rows.length ? '"und-x-icu"' : '"default"').execute(db);
  if (!icu.rows.length) process.stderr.write('migration 009: PostgreSQL has no ICU collation; crm_fold lower-cases with the database collation\n');

  if (await createExtension(db, 'pg_trgm')) {
    for (const table of INDEXED_TABLES) {
      await sql`create index ${sql.id(`${table}__search_trgm`)} on ${sql.table(table)} using gin (search_text gin_trgm_ops)`.execute(db);
    }
  } else {
    process.stderr.write('migration 009: pg_trgm could not be created; searches read every row of the tenant (README "Search" tells how to add the indexes)\n');
  }
}

/** Fills `search_text` of every row of `table`, BATCH rows at a time in key order. */
async function backfill(db: Kysely<any>, dialect: DialectName, table: SearchTable): Promise<void> {
  const compose = SEARCH_TEXT[table] as (row: Record<string, unknown>) => string;
  let after: { tenant_id: string; id: string } | undefined;
  for (;;) {
    let q = db
      .selectFrom(table)
      .select(['tenant_id', 'id', ...SEARCH_SOURCES[table]])
      .orderBy('tenant_id')
      .orderBy('id')
      .limit(BATCH);
    if (after) q = q.where(sql<boolean>`(tenant_id, id) > (${after.tenant_id}, ${after.id})`);
    const rows = (await q.execute()) as { tenant_id: string; id: string }[];
    if (rows.length === 0) return;
    const values = rows.map((r) => [r.tenant_id, r.id, compose(r)] as const);
    await inSavepoint(db, async () => {
      if (dialect === 'postgres') {
        const list = sql.join(values.map(([t, i, s]) => sql`(${t}::text, ${i}::text, ${s}::text)`));
        await sql`update ${sql.table(table)} as r set search_text = v.s from (values ${list}) as v(t, i, s)
          where r.tenant_id = v.t and r.id = v.i`.execute(db);
      } else {
        for (const [t, i, s] of values) {
          await sql`update ${sql.table(table)} set search_text = ${s} where tenant_id = ${t} and id = ${i}`.execute(db);
        }
      }
    });
    after = rows[rows.length - 1];
  }
}

/**
 * A savepoint around `fn`: on SQLite (no transaction around migrations) each batch commits as one
 * transaction instead of one per row; on PostgreSQL it nests in the migration's transaction.
 */
async function inSavepoint(db: Kysely<any>, fn: () => Promise<void>, name = 'search_backfill'): Promise<boolean> {
  await sql`savepoint ${sql.id(name)}`.execute(db);
  try {
    await fn();
  } catch (err) {
    await sql`rollback to savepoint ${sql.id(name)}`.execute(db);
    await sql`release savepoint ${sql.id(name)}`.execute(db);
    throw err;
  }
  await sql`release savepoint ${sql.id(name)}`.execute(db);
  return true;
}

/** CREATE EXTENSION in a savepoint: false (the migration's transaction intact) when it is refused. */
async function createExtension(db: Kysely<any>, name: string): Promise<boolean> {
  try {
    return await inSavepoint(db, async () => void (await sql`create extension if not exists ${sql.id(name)}`.execute(db)), 'search_extension');
  } catch {
    return false;
  }
}
