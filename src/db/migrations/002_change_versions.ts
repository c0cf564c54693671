import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * A per-tenant, per-object-type counter bumped in the transaction of every write to contacts,
 * companies or deals (src/modules/shared/changes.ts). Exact list totals are cached against it.
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await sql`create table change_versions (
    tenant_id text not null,
    object_type text not null,
    version integer not null,
    primary key (tenant_id, object_type)
  )`.execute(db);
}
