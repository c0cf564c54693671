import type { Database, Db } from '../../db/index.js';
import { deleteOldestInserted } from '../../db/oldest-rows.js';
import { prepared } from '../../db/prepared.js';
import type { IdempotencyKeysTable } from '../../db/tables/idempotency.js';

/**
 * The stored answers of idempotent requests (CONTRACT C.3): the one writer of `idempotency_keys`, for the
 * idempotency plugin (plugins/idempotency.ts) and its TTL sweep (workers/idempotency.ts). A row is named by
 * (tenant, API key, idempotency key).
 */

/** `status_code` of a claim whose outbound handler is still running (never a stored answer). */
export const PENDING = 0;

export interface AnswerKey {
  tenantId: string;
  keyId: string;
  idemKey: string;
}

export type StoredAnswer = Pick<IdempotencyKeysTable, 'fingerprint' | 'status_code' | 'body' | 'created_at'>;

// Compiled once: every idempotent request runs both.
const lookupQuery = prepared((q: Db, tenantId: string, keyId: string, idemKey: string) =>
  q
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status_code', 'body', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('key_id', '=', keyId)
    .where('idem_key', '=', idemKey),
);

/** The row of an idempotency key, live or not. */
export async function findAnswer(db: Db, tenantId: string, keyId: string, idemKey: string): Promise<StoredAnswer | undefined> {
  return (await lookupQuery(db, tenantId, keyId, idemKey))[0];
}

/** Stores an answer (or a PENDING claim, `body` null); `body` comes sealed (plugins/idempotency.ts sealAnswer). */
export const insertAnswer = prepared(
  (q: Db, tenant_id: string, key_id: string, idem_key: string, fingerprint: string, status_code: number, body: string | null, created_at: string) =>
    q.insertInto('idempotency_keys').values({ tenant_id, key_id, idem_key, fingerprint, status_code, body, created_at }),
);

/** Deletes the row of an idempotency key (one past its TTL, or a claim left by a crash). */
export async function deleteAnswer(db: Db, k: AnswerKey): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('tenant_id', '=', k.tenantId).where('key_id', '=', k.keyId).where('idem_key', '=', k.idemKey).execute();
}

/** A PENDING claim becomes the stored answer (`body` sealed). */
export async function settleClaim(db: Db, k: AnswerKey, status: number, body: string | null): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .where('tenant_id', '=', k.tenantId)
    .where('key_id', '=', k.keyId)
    .where('idem_key', '=', k.idemKey)
    .where('status_code', '=', PENDING)
    .set({ status_code: status, body })
    .execute();
}

/** A PENDING claim whose answer is not kept goes: the key is free again. */
export async function dropClaim(db: Db, k: AnswerKey): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', k.tenantId)
    .where('key_id', '=', k.keyId)
    .where('idem_key', '=', k.idemKey)
    .where('status_code', '=', PENDING)
    .execute();
}

/** When the key's row was written, or undefined when there is none. */
export async function answeredAt(db: Db, tenantId: string, keyId: string, idemKey: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .select('created_at')
    .where('tenant_id', '=', tenantId)
    .where('key_id', '=', keyId)
    .where('idem_key', '=', idemKey)
    .executeTakeFirst();
  return row?.created_at;
}

const hours = (h: number) => h * 3_600_000;

/**
 * Deletes stored answers past the TTL, oldest first, `batch` rows per statement, so no statement holds the
 * writer long (SQLite) or locks many rows (PostgreSQL): db/oldest-rows.ts says how each finds the oldest.
 * Returns the rows deleted.
 */
export async function deleteExpiredIdempotencyKeys(database: Pick<Database, 'db'>, ttlHours: number, now = Date.now(), batch = 500): Promise<number> {
  const cutoff = new Date(now - hours(ttlHours)).toISOString();
  const rows = { table: 'idempotency_keys', key: ['tenant_id', 'key_id', 'idem_key'], createdAt: 'created_at' } as const;
  let total = 0;
  for (;;) {
    const n = await deleteOldestInserted(database.db, rows, cutoff, batch);
    total += n;
    if (n < batch) return total;
    // Let requests waiting for the (SQLite) connection in between.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The stored answers of a tenant that have a body (claims aside): erasure (D.5) looks into them. */
export function answersOfTenant(db: Db, tenantId: string) {
  return db
    .selectFrom('idempotency_keys')
    .select(['key_id', 'idem_key', 'fingerprint', 'status_code', 'body'])
    .where('tenant_id', '=', tenantId)
    .where('status_code', '<>', PENDING)
    .where('body', 'is not', null)
    .execute();
}

/** A stored answer replaced (`body` sealed for its new status): an erased record's answer becomes its 404 (D.5). */
export async function replaceAnswer(db: Db, k: AnswerKey, status: number, body: string | null): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .where('tenant_id', '=', k.tenantId)
    .where('key_id', '=', k.keyId)
    .where('idem_key', '=', k.idemKey)
    .set({ status_code: status, body })
    .execute();
}
