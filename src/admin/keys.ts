import { generateApiKey } from '../auth/keys.js';
import { findKeyById, insertKey, listTenantKeys, setKeyRevoked } from '../auth/keys.repo.js';
import { isKnownScope } from '../auth/scopes.js';
import { withTx, type Db } from '../db/index.js';
import { OPERATOR_ACTOR } from '../http/context.js';
import { recordAudit } from '../modules/audit/audit.service.js';
import { newId } from '../util/ids.js';
import { nowIso } from '../util/time.js';
import { parseJson } from '../util/json.js';
import { normalizeIsoDateTime } from '../domain/dates.js';

export const DEFAULT_RATE_LIMIT = 100;
export const MAX_RATE_LIMIT = 1000;

export class AdminError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly path?: string,
  ) {
    super(message);
  }
}

export interface NewKey {
  tenantId: string;
  name: string;
  scopes: string[];
  userId?: string | null;
  rateLimit?: number;
  expiresAt?: string | null;
}

export interface CreatedKey {
  id: string;
  key: string;
  name: string;
  scopes: string[];
  rateLimit: number;
  expiresAt: string | null;
}

/** Checks a key's settings; `at` prefixes the path named in errors (setup files). */
export function checkKeySettings(input: { name?: unknown; scopes?: unknown; rateLimit?: unknown; expiresAt?: unknown }, at = ''): void {
  const p = (f: string) => (at ? `${at}.${f}` : f);
  if (typeof input.name !== 'string' || !input.name.trim()) throw new AdminError('validation_failed', 'name is required', p('name'));
  if (!Array.isArray(input.scopes) || input.scopes.length === 0) throw new AdminError('validation_failed', 'scopes must be a non-empty array', p('scopes'));
  input.scopes.forEach((s, i) => {
    if (typeof s !== 'string' || !isKnownScope(s)) throw new AdminError('validation_failed', `unknown scope "${String(s)}"`, `${p('scopes')}[${i}]`);
  });
  if (
    input.rateLimit !== undefined &&
    (!Number.isInteger(input.rateLimit) || (input.rateLimit as number) < 1 || (input.rateLimit as number) > MAX_RATE_LIMIT)
  ) {
    throw new AdminError('validation_failed', `rateLimit must be a whole number from 1 to ${MAX_RATE_LIMIT}`, p('rateLimit'));
  }
  if (input.expiresAt !== undefined && input.expiresAt !== null) {
    try {
      normalizeIsoDateTime(String(input.expiresAt));
    } catch {
      throw new AdminError('validation_failed', 'expiresAt must be an ISO 8601 date-time', p('expiresAt'));
    }
  }
}

export async function createKey(db: Db, input: NewKey): Promise<CreatedKey> {
  checkKeySettings(input);
  const tenant = await db.selectFrom('tenants').select('id').where('id', '=', input.tenantId).executeTakeFirst();
  if (!tenant) throw new AdminError('not_found', `tenant "${input.tenantId}" does not exist`, 'tenant');
  if (input.userId) {
    const user = await db.selectFrom('users').select('id').where('tenant_id', '=', input.tenantId).where('id', '=', input.userId).executeTakeFirst();
    if (!user) throw new AdminError('not_found', `user "${input.userId}" does not exist in the tenant`, 'user');
  }
  const { key, hash, prefix } = generateApiKey();
  const id = newId('key');
  const scopes = [...new Set(input.scopes)];
  const rateLimit = input.rateLimit ?? DEFAULT_RATE_LIMIT;
  const expiresAt = input.expiresAt ? normalizeIsoDateTime(input.expiresAt) : null;
  await withTx(db, async (tx) => {
    await insertKey(tx, {
      tenant_id: input.tenantId,
      id,
      user_id: input.userId ?? null,
      name: input.name.trim(),
      prefix,
      key_hash: hash,
      scopes: JSON.stringify(scopes),
      rate_limit: rateLimit,
      created_at: nowIso(),
      last_used_at: null,
      revoked_at: null,
      expires_at: expiresAt,
    });
    const changes = ['name', 'scopes', 'rateLimit', ...(expiresAt ? ['expiresAt'] : []), ...(input.userId ? ['userId'] : [])];
    await recordAudit(tx, { tenantId: input.tenantId, actor: OPERATOR_ACTOR }, { action: 'api_key.created', objectType: 'api_key', objectId: id, changes });
  });
  return { id, key, name: input.name.trim(), scopes, rateLimit, expiresAt };
}

export async function listKeys(db: Db, tenantId: string) {
  const tenant = await db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
  if (!tenant) throw new AdminError('not_found', `tenant "${tenantId}" does not exist`);
  const rows = await listTenantKeys(db, tenantId);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    scopes: parseJson<string[]>(r.scopes, []),
    rateLimit: r.rate_limit,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
    expiresAt: r.expires_at,
  }));
}

export async function revokeKey(db: Db, keyId: string): Promise<{ id: string; revokedAt: string }> {
  const row = await findKeyById(db, keyId);
  if (!row) throw new AdminError('not_found', `key "${keyId}" does not exist`);
  if (row.revoked_at) return { id: keyId, revokedAt: row.revoked_at };
  const revokedAt = nowIso();
  await withTx(db, async (tx) => {
    await setKeyRevoked(tx, row.tenant_id, keyId, revokedAt);
    await recordAudit(
      tx,
      { tenantId: row.tenant_id, actor: OPERATOR_ACTOR },
      { action: 'api_key.revoked', objectType: 'api_key', objectId: keyId, changes: ['revokedAt'] },
    );
  });
  return { id: keyId, revokedAt };
}
