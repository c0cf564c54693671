import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { prepared } from '../../db/prepared.js';
import type { Listing } from '../../listing/descriptor.js';
import type { AuditLogTable } from '../../db/tables/audit.js';

export type AuditRow = AuditLogTable;

/** Entries written at once (a batch of 100 creates writes 100): a few statements, far under every engine's limit on parameters. */
const CHUNK = 50;

// Compiled once: every change writes one entry (building and compiling the insert cost ~8 % of a create's CPU).
const insertOne = prepared(
  (
    q: Db,
    tenant_id: string,
    id: string,
    occurred_at: string,
    action: string,
    object_type: string,
    object_id: string | null,
    actor_type: string,
    actor_id: string | null,
    actor_name: string | null,
    request_id: string | null,
    ip: string | null,
    user_agent: string | null,
    changes: string,
  ) =>
    q
      .insertInto('audit_log')
      .values({ tenant_id, id, occurred_at, action, object_type, object_id, actor_type, actor_id, actor_name, request_id, ip, user_agent, changes }),
);

export async function insertAuditRows(db: Db, rows: AuditRow[]): Promise<void> {
  if (rows.length === 1) {
    const r = rows[0];
    await insertOne(
      db,
      r.tenant_id,
      r.id,
      r.occurred_at,
      r.action,
      r.object_type,
      r.object_id,
      r.actor_type,
      r.actor_id,
      r.actor_name,
      r.request_id,
      r.ip,
      r.user_agent,
      r.changes,
    );
    return;
  }
  for (let i = 0; i < rows.length; i += CHUNK)
    await db
      .insertInto('audit_log')
      .values(rows.slice(i, i + CHUNK))
      .execute();
}

export interface AuditFilter {
  objectType?: string;
  objectId?: string;
  actorId?: string;
  action?: string;
  /** ISO timestamps, normalized; both inclusive. */
  since?: string;
  until?: string;
}

const COLUMNS = [
  'id',
  'occurred_at',
  'action',
  'object_type',
  'object_id',
  'actor_type',
  'actor_id',
  'actor_name',
  'request_id',
  'ip',
  'user_agent',
  'changes',
] as const;

/** The tenant's entries matching the filter (newest first by `id`, time-ordered: the key's walk, or audit_log__object's for a record). */
function auditListing(db: Db, tenantId: string, f: AuditFilter) {
  let base = db.selectFrom('audit_log').where('tenant_id', '=', tenantId);
  if (f.objectId !== undefined) base = base.where('object_id', '=', f.objectId);
  if (f.objectType !== undefined) base = base.where('object_type', '=', f.objectType);
  if (f.actorId !== undefined) base = base.where('actor_id', '=', f.actorId);
  if (f.action !== undefined) base = base.where('action', '=', f.action);
  if (f.since !== undefined) base = base.where('occurred_at', '>=', f.since);
  if (f.until !== undefined) base = base.where('occurred_at', '<=', f.until);
  const select = (qb: typeof base) => qb.select([...COLUMNS]);
  return { base, select };
}

/** GET /audit-log: newest first (`id` descending; ids are time-ordered), keyset only (a log has no useful total). */
export const AUDIT_LISTING: Listing<AuditFilter, 'newest'> = {
  sort: { newest: { column: 'id', nullable: false } },
  query: auditListing,
  idColumn: 'id',
};

/** Deletes up to `batch` entries, of every tenant, older than `cutoff` (oldest first); returns how many (AUDIT_RETENTION_DAYS). */
export async function deleteOldAuditEntries(db: Db, cutoff: string, batch: number): Promise<number> {
  const oldest = db.selectFrom('audit_log').select(['tenant_id', 'id']).where('occurred_at', '<', cutoff).orderBy('occurred_at').limit(batch);
  const r = await db
    .deleteFrom('audit_log')
    .where(sql<boolean>`(tenant_id, id) in (${oldest})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * D.5: the entries of the requests that were an erased contact's form submissions (actor public_form, the
 * contact's own entries first, then every entry of those requests) lose the submitter's address and agent.
 */
export async function forgetSubmitter(db: Db, tenantId: string, contactId: string): Promise<void> {
  const requests = db
    .selectFrom('audit_log')
    .select('request_id')
    .where('tenant_id', '=', tenantId)
    .where('object_id', '=', contactId)
    .where('actor_type', '=', 'public_form')
    .where('request_id', 'is not', null);
  await db
    .updateTable('audit_log')
    .set({ ip: null, user_agent: null })
    .where('tenant_id', '=', tenantId)
    .where('actor_type', '=', 'public_form')
    .where('request_id', 'in', requests)
    .execute();
}
