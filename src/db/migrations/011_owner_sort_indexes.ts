import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * A list filtered by owner reads its page in the list's default order (contacts and companies:
 * `created_at`, ties broken by `id`). The owner indexes of 001 stopped short of that order — contacts at
 * `created_at`, companies at `owner_id` — so neither database could walk them for a page: SQLite walked
 * the `created_at` index instead, reading the row of every contact it passed to test its owner (with
 * `?page=20` of one owner's 25,000 contacts: 768 µs a page against 137 µs on the full index, measured on
 * the bench's data), and PostgreSQL sorted the owner's rows. Same names, so nothing else changes; the
 * index holds the same rows, so writes cost the same. Deals (default `updated_at`) keep theirs: an owner +
 * `updated_at` index would be rewritten by every update of a deal.
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  for (const statement of [
    sql`drop index contacts__owner`,
    sql`create index contacts__owner on contacts (tenant_id, owner_id, created_at, id) where deleted_at is null`,
    sql`drop index companies__owner`,
    sql`create index companies__owner on companies (tenant_id, owner_id, created_at, id) where deleted_at is null`,
  ]) {
    await statement.execute(db);
  }
}
