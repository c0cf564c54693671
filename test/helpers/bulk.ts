import { sql } from 'kysely';
import type { Db } from '../../src/db/index.js';
import { FOLD_FUNCTION, isPostgres } from '../../src/db/dialect.js';
import { SEARCH_SEPARATOR } from '../../src/db/search-text.js';

/**
 * Large contact sets for cost tests, written with two `insert … select` statements over a recursive
 * series (one transaction, a few seconds for 100,000 rows on either dialect; the API would take minutes).
 * Contact `i` (1…n) has id `bk<i>`, the multi_select `multiKey` = [`v<i % 50>`, `w<i % 7>`] except
 * every 11th, which has no value, and the tags `tagsOf(i)` (every 10th has none). `search_text` is what the
 * contacts repo would write (db/search-text.ts), folded by the databases' own crm_fold.
 */
export const TAG_COUNT = 2000;
export const tagId = (k: number) => `tg${k}`;
export function tagsOf(i: number): string[] {
  if (i % 10 === 0) return [];
  const a = tagId(i % TAG_COUNT);
  const b = tagId((i * 7) % TAG_COUNT);
  return i % 3 === 0 && a !== b ? [a, b] : [a];
}
export const multiOf = (i: number): string[] | null => (i % 11 === 0 ? null : [`v${i % 50}`, `w${i % 7}`]);

export async function seedContacts(db: Db, tenantId: string, n: number, multiKey: string): Promise<void> {
  const key = multiKey.replace(/["\\]/g, '');
  await db.transaction().execute(async (tx) => {
    // Test set-up, not a request: 100,000 rows and their tags' trigger may take longer than the main pool's
    // statement timeout (a runaway's bound, 30 s) on a loaded two-core CI machine. The trigger joins its
    // transition table (no statistics) to contacts: in a database the whole suite has filled, a nested loop there
    // ran past 180 s, so the seed's transaction plans it without one.
    if (isPostgres(db)) {
      await sql`set local statement_timeout = 0`.execute(tx);
      await sql`set local enable_nestloop = off`.execute(tx);
    }
    await sql`
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${n})
      insert into contacts (tenant_id, id, first_name, last_name, email, phone, company_id, owner_id, score, custom_properties, created_at, updated_at, deleted_at, search_text)
      select cast(${tenantId} as text), 'bk' || i, 'First' || i, 'Last' || i, null, null, null, null, i % 100,
        case when i % 11 = 0 then '{}' else cast(${`{"${key}":["v`} as text) || (i % 50) || '","w' || (i % 7) || '"]}' end,
        '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', null,
        ${sql.raw(FOLD_FUNCTION)}('First' || i || ' Last' || i) || cast(${SEARCH_SEPARATOR} as text)
      from n`.execute(tx);
    // First tag of every contact but each 10th, then a second one for each 3rd (when it differs).
    await sql`
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${n})
      insert into record_tags (tenant_id, object_type, object_id, tag_id)
      select cast(${tenantId} as text), 'contact', 'bk' || i, 'tg' || (i % ${sql.lit(TAG_COUNT)}) from n where i % 10 <> 0
      union all
      select cast(${tenantId} as text), 'contact', 'bk' || i, 'tg' || ((i * 7) % ${sql.lit(TAG_COUNT)}) from n
      where i % 10 <> 0 and i % 3 = 0 and (i * 7) % ${sql.lit(TAG_COUNT)} <> i % ${sql.lit(TAG_COUNT)}`.execute(tx);
  });
  // PostgreSQL: the planner's statistics of the tables just written, as autovacuum would soon have them (the tags'
  // trigger rewrote the tagged contacts, migration 013: without them the planner guesses from the table's size).
  if (isPostgres(db)) await sql`analyze contacts, record_tags`.execute(db);
}

/** Removes what seedContacts wrote (PostgreSQL keeps one database across runs). */
export async function unseedContacts(db: Db, tenantId: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    if (isPostgres(db)) await sql`set local statement_timeout = 0`.execute(tx);
    await tx.deleteFrom('record_tags').where('tenant_id', '=', tenantId).where('object_type', '=', 'contact').where('object_id', 'like', 'bk%').execute();
    await tx.deleteFrom('contacts').where('tenant_id', '=', tenantId).where('id', 'like', 'bk%').execute();
  });
}
