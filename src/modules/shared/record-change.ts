/**
 * A change's event and its audit entry, written together in the change's transaction (CONTRACT C.4 and D.4): the
 * one way services raise an event, so that no change is audited without its event or the other way round. The
 * audit entry's action is the event type; its `changes` the fields the change set or changed (names only).
 */
import type { Db } from '../../db/index.js';
import { EVENT_TYPES, type EventType } from '../../events/catalog.js';
import { emitEvent, recordDiff } from '../../events/outbox.js';
import { fieldsSet, recordAudit, type AuditWho } from '../audit/audit.service.js';

const OBJECT_TYPES = new Map<string, string>(EVENT_TYPES.map((e) => [e.key, e.objectType]));

/** What an event type changed, when the event carries no `changes` of its own. */
const CHANGED: Partial<Record<EventType, readonly string[]>> = {
  'deal.stage_changed': ['stageId'],
  'deal.won': ['isWon'],
  'deal.lost': ['isLost'],
  'list.member_added': ['members'],
  'list.member_removed': ['members'],
  'proposal.sent': ['status'],
  'proposal.accepted': ['status'],
  'proposal.declined': ['status'],
  'proposal.expired': ['status'],
  'webhook.disabled': ['isActive', 'disabledReason'],
};

function changesOf(type: EventType, record: Record<string, unknown>, extra: Record<string, unknown>): readonly string[] {
  if (Array.isArray(extra.changes)) return extra.changes as string[];
  if (type.endsWith('.created')) return fieldsSet(record);
  return CHANGED[type] ?? [];
}

/** Raises `type` with `record` (and `extra` beside it in `data`), and records the change in the audit log. */
export async function recordEvent(tx: Db, who: AuditWho, type: EventType, record: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  // A submission is a change of its form's data: the entry names the form (its contact has an entry of its own).
  const objectId = type === 'form.submitted' ? (record.formId as string) : (record.id as string);
  // NOTE: the entry is queued before the event, so that it is written before it at the commit: the event takes the
  // tenant's log lock, which every writer of the tenant waits for, and holds it to the commit (db/event-log.ts;
  // test/db/write-statements.test.ts).
  await recordAudit(tx, who, { action: type, objectType: OBJECT_TYPES.get(type) ?? type.split('.')[0], objectId, changes: changesOf(type, record, extra) });
  await emitEvent(tx, who.tenantId, type, record, extra);
}

/**
 * Raises a `*.updated` event with `data.changes` and `data.previous` (C.4) and its audit entry; nothing when
 * nothing changed. `ignore` names fields derived from others. Returns whether anything was recorded.
 */
export async function recordUpdated(
  tx: Db,
  who: AuditWho,
  type: EventType,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  ignore: readonly string[] = [],
): Promise<boolean> {
  const diff = recordDiff(before, after, ignore);
  if (diff.changes.length === 0) return false;
  await recordEvent(tx, who, type, after, diff);
  return true;
}
