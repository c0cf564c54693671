import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * The audit log (CONTRACT D.4): one row per change, written in the change's transaction. Its key is the
 * tenant and the entry's time-ordered id, so the log newest first is one walk of it; `audit_log__object` serves
 * the `objectId` filter (a record's history), and `audit_log__occurred` the retention sweep across tenants.
 * Every other filter (actor, action, type, time) is tested on the entries of that walk. Kept to two indexes:
 * every write pays for them (D.4 allows the log 10 % of a create).
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await sql`create table audit_log (
    tenant_id text not null,
    id text not null,
    occurred_at text not null,
    action text not null,
    object_type text not null,
    object_id text,
    actor_type text not null,
    actor_id text,
    actor_name text,
    request_id text,
    ip text,
    user_agent text,
    changes text not null default '[]',
    primary key (tenant_id, id)
  )`.execute(db);
  await sql`create index audit_log__object on audit_log (tenant_id, object_id, id)`.execute(db);
  await sql`create index audit_log__occurred on audit_log (occurred_at)`.execute(db);
}
