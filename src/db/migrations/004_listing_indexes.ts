import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Keyset pages (CONTRACT C.1) read an index range on (tenant_id, sort key, id). The default sorts and
 * `updatedAt` (incremental sync) of every paginated list get one where 001 had none.
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  for (const statement of [
    sql`create index companies__updated on companies (tenant_id, updated_at, id) where deleted_at is null`,
    sql`create index deals__created on deals (tenant_id, created_at, id) where deleted_at is null`,
    sql`create index proposals__updated on proposals (tenant_id, updated_at, id) where deleted_at is null`,
    sql`create index list_members__joined on list_members (tenant_id, list_id, created_at, object_id)`,
    sql`create index form_submissions__form_order on form_submissions (tenant_id, form_id, created_at, id)`,
  ]) {
    await statement.execute(db);
  }
}
