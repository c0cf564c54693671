import type { Db } from '../db/index.js';
import type { ApiKeysTable } from '../db/tables/core.js';

/**
 * API keys (`api_keys`): the one writer of their rows. The CLI and `crm setup apply` create and revoke them
 * (admin/keys.ts); the auth plugin's key cache reads them by hash and records their last use.
 */

export type KeyOfHash = Pick<ApiKeysTable, 'tenant_id' | 'id' | 'name' | 'user_id' | 'scopes' | 'rate_limit' | 'expires_at' | 'revoked_at'>;

/** The key whose hash is `keyHash` (any tenant: the hash is the key's identity), revoked or not. */
export function findKeyByHash(db: Db, keyHash: string): Promise<KeyOfHash | undefined> {
  return db
    .selectFrom('api_keys')
    .select(['tenant_id', 'id', 'name', 'user_id', 'scopes', 'rate_limit', 'expires_at', 'revoked_at'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** The key `keyId` (ids are unique across tenants): its tenant and revocation, for a revoke by id. */
export function findKeyById(db: Db, keyId: string): Promise<Pick<ApiKeysTable, 'tenant_id' | 'revoked_at'> | undefined> {
  return db.selectFrom('api_keys').select(['tenant_id', 'revoked_at']).where('id', '=', keyId).executeTakeFirst();
}

/** A tenant's keys, oldest first, without their hashes. */
export function listTenantKeys(db: Db, tenantId: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'prefix', 'scopes', 'rate_limit', 'created_at', 'last_used_at', 'revoked_at', 'expires_at'])
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function insertKey(db: Db, row: ApiKeysTable): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function setKeyRevoked(db: Db, tenantId: string, keyId: string, revokedAt: string): Promise<void> {
  await db.updateTable('api_keys').set({ revoked_at: revokedAt }).where('tenant_id', '=', tenantId).where('id', '=', keyId).execute();
}

export async function setKeyLastUsed(db: Db, tenantId: string, keyId: string, lastUsedAt: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: lastUsedAt }).where('tenant_id', '=', tenantId).where('id', '=', keyId).execute();
}
