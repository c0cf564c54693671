import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Stored answers of `POST`s sent with an `Idempotency-Key` (CONTRACT C.3), written in the transaction
 * of the change they answer. Keyed by the API key, not only the tenant: two integrations of one tenant
 * choosing the same idempotency key never see each other's answers. `created_at` drives the TTL sweep.
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await sql`create table idempotency_keys (
    tenant_id text not null,
    key_id text not null,
    idem_key text not null,
    fingerprint text not null,
    status_code integer not null,
    body text,
    created_at text not null,
    primary key (tenant_id, key_id, idem_key)
  )`.execute(db);
  await sql`create index idempotency_keys__created on idempotency_keys (created_at)`.execute(db);
}
