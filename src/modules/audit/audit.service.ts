/**
 * The audit log (CONTRACT D.4): who changed what, written in the change's transaction, field names only, never
 * values (the change's event carries those). Every service records its changes through `recordAudit` (or
 * modules/shared/record-change.ts, which also raises the change's event); the workers and the operator's CLI
 * record theirs with their own actors. Nothing changes or deletes an entry but the retention sweep.
 */
import { deferWrite, type DeferredWrites, type Db } from '../../db/index.js';
import { normalizeIsoDateTime } from '../../domain/dates.js';
import { fieldRule } from '../../errors.js';
import type { Actor, Ctx } from '../../http/context.js';
import { keysetPage } from '../../listing/planner.js';
import { orderedId } from '../../util/ids.js';
import { nowIso } from '../../util/time.js';
import * as repo from './audit.repo.js';
import { DEFAULT_AUDIT_PAGE, type AuditEntryT, type AuditListQueryT, type AuditPageT } from './audit.schema.js';

/** One change as a service tells it. */
export interface AuditChange {
  action: string;
  objectType: string;
  objectId: string | null;
  /** Field names (never values). */
  changes?: readonly string[];
}

/** Who acts, in which tenant: a Ctx, or what a worker or the CLI makes. */
export interface AuditWho {
  tenantId: string;
  actor: Actor;
}

const rowOf = (who: AuditWho, c: AuditChange, at: string): repo.AuditRow => ({
  tenant_id: who.tenantId,
  id: orderedId('aud'),
  occurred_at: at,
  action: c.action,
  object_type: c.objectType,
  object_id: c.objectId,
  actor_type: who.actor.type,
  actor_id: who.actor.id,
  actor_name: who.actor.name,
  request_id: who.actor.requestId,
  ip: who.actor.ip,
  user_agent: who.actor.userAgent,
  changes: JSON.stringify(c.changes ?? []),
});

/** Written with the transaction's other deferred writes, just before its commit: one statement for a batch. */
const auditWrites: DeferredWrites<repo.AuditRow> = {
  flush: (tx, rows) => repo.insertAuditRows(tx, rows),
  // A change's entry may be written by its event's statement (PostgreSQL: one round trip for both).
  rowsOf: { table: 'audit_log', row: (r) => r as unknown as Record<string, unknown> },
};

/** Records a change in the audit log, in the transaction `db` is (or in one of its own). */
export function recordAudit(db: Db, who: AuditWho, change: AuditChange): Promise<void> {
  return deferWrite(db, auditWrites, rowOf(who, change, nowIso()));
}

/** Records changes at once, outside any request (the workers' purges): written now, on `db`'s transaction. */
export function writeAuditNow(db: Db, who: AuditWho, changes: AuditChange[]): Promise<void> {
  const at = nowIso();
  return repo.insertAuditRows(
    db,
    changes.map((c) => rowOf(who, c, at)),
  );
}

/** The names of a new record's fields that hold something (`changes` of a create). */
export function fieldsSet(record: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(record)) {
    if (k === 'id' || k === 'createdAt' || k === 'updatedAt' || v === null || v === undefined || v === '') continue;
    if (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v as object).length === 0) continue;
    out.push(k);
  }
  return out;
}

function toEntry(r: repo.AuditRow): AuditEntryT {
  return {
    id: r.id,
    occurredAt: r.occurred_at,
    action: r.action,
    objectType: r.object_type,
    objectId: r.object_id,
    actor: { type: r.actor_type as AuditEntryT['actor']['type'], id: r.actor_id, name: r.actor_name },
    requestId: r.request_id,
    ip: r.ip,
    userAgent: r.user_agent,
    changes: JSON.parse(r.changes) as string[],
  };
}

/** GET /audit-log: the tenant's entries newest first, filtered, by cursor. */
export async function listAudit(ctx: Ctx, q: AuditListQueryT, keyId: string): Promise<AuditPageT> {
  const since = q.since === undefined ? undefined : fieldRule('since', () => normalizeIsoDateTime(q.since!));
  const until = q.until === undefined ? undefined : fieldRule('until', () => normalizeIsoDateTime(q.until!));
  const filters: repo.AuditFilter = { objectType: q.objectType, objectId: q.objectId, actorId: q.actorId, action: q.action, since, until };
  const pageSize = q.pageSize ?? DEFAULT_AUDIT_PAGE;
  const { rows, hasNext, nextCursor } = await keysetPage<repo.AuditRow, repo.AuditFilter, 'newest'>(ctx, repo.AUDIT_LISTING, {
    sortKey: 'newest',
    order: 'desc',
    filters,
    keyId,
    endpoint: 'GET /audit-log',
    pageSize,
    cursor: q.cursor,
  });
  return {
    data: rows.map(toEntry),
    pagination: { page: null, pageSize, total: null, totalPages: null, hasNext, hasPrev: null, nextCursor },
  };
}

/** D.5: entries made by an erased contact's form submissions keep their action and ids, not the submitter's address and agent. */
export function forgetSubmitter(db: Db, tenantId: string, contactId: string): Promise<void> {
  return repo.forgetSubmitter(db, tenantId, contactId);
}
