import { dialectOf } from '../db/dialect.js';
import { deferWrite, type Db, type DeferredWrites } from '../db/index.js';
import { canCarry, insertLoggedEvent, lockEventLogs, type LoggedEvent } from '../db/event-log.js';
import { prepared } from '../db/prepared.js';
import { newId } from '../util/ids.js';
import { nowIso } from '../util/time.js';
import { canonicalJson, parseJson } from '../util/json.js';
import { dataKeyOf, type EventType } from './catalog.js';
import { signalEvents } from './signal.js';
import { insertDeliveries, wakeWorkers } from './deliveries.js';

export interface EventPayload {
  event: string;
  tenantId: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** `{"event":…,"tenantId":…,"timestamp":"…","data":` as JSON.stringify writes an EventPayload (emitEvent). */
const PAYLOAD_HEAD = /^\{"event":"[^"\\]*","tenantId":"[^"\\]*","timestamp":"([^"\\]*)","data":/;

/**
 * The timestamp and the `data` JSON text of a stored payload, without parsing `data` (a page of the event
 * log copies it as it is). Payloads are written by emitEvent in one key order; anything else is parsed.
 */
export function payloadParts(payload: string): { timestamp: string; dataJson: string } {
  const head = PAYLOAD_HEAD.exec(payload);
  if (head && payload.endsWith('}')) return { timestamp: head[1], dataJson: payload.slice(head[0].length, -1) };
  const p = parseJson<Partial<EventPayload>>(payload, {});
  return { timestamp: p.timestamp ?? '', dataJson: JSON.stringify(p.data ?? {}) };
}

// Compiled once: nearly every write that raises events raises one.
const insertEvent = prepared((tx: Db, tenantId: string, id: string, type: string, payload: string, now: string) =>
  tx.insertInto('events').values({ tenant_id: tenantId, id, type, payload, created_at: now }),
);
const activeWebhooks = prepared((tx: Db, tenantId: string, active: number) =>
  tx.selectFrom('webhooks').select(['id', 'events']).where('tenant_id', '=', tenantId).where('is_active', '=', active),
);

/** Rows per INSERT: well under every driver's limit on bound parameters. */
const CHUNK = 200;

/**
 * The events a transaction raised, written when it is about to commit (db/index.ts deferWrite), under
 * the lock of each tenant's log (db/event-log.ts): so the log's order is the commit order of the
 * transactions, and the lock is held for these few statements and the commit only.
 */
const eventWrites: DeferredWrites<LoggedEvent> = {
  // One event on PostgreSQL: the rows queued before it (its audit entry) go in its statement (event-log.ts).
  carries: (tx, events, carried) => events.length === 1 && dialectOf(tx).notifies && canCarry(carried),
  async flush(tx, events, carried) {
    const tenants = [...new Set(events.map((e) => e.tenantId))].sort();
    // Read before the lock, so that the lock is held as briefly as possible.
    const hooks = new Map<string, { id: string; events: Set<string> }[]>();
    for (const tenantId of tenants) {
      const rows = await activeWebhooks(tx, tenantId, 1);
      hooks.set(
        tenantId,
        rows.map((h) => ({ id: h.id, events: new Set(parseJson<string[]>(h.events, [])) })),
      );
    }
    // One event, on a database that notifies (PostgreSQL): its lock, insert and NOTIFY in one statement
    // (event-log.ts insertLoggedEvent).
    const signalled = events.length === 1 && dialectOf(tx).notifies;
    if (signalled) {
      await insertLoggedEvent(tx, events[0], carried?.[0]);
    } else {
      await lockEventLogs(tx, tenants);
      if (events.length === 1) {
        const [e] = events;
        await insertEvent(tx, e.tenantId, e.id, e.type, e.payload, e.createdAt);
      } else {
        for (let i = 0; i < events.length; i += CHUNK) {
          const rows = events.slice(i, i + CHUNK).map((e) => ({ tenant_id: e.tenantId, id: e.id, type: e.type, payload: e.payload, created_at: e.createdAt }));
          await tx.insertInto('events').values(rows).execute();
        }
      }
    }
    // One delivery per active webhook of the tenant subscribed to the event at this moment.
    const deliveries = events.flatMap((e) =>
      (hooks.get(e.tenantId) ?? [])
        .filter((h) => h.events.has(e.type))
        .map((h) => ({
          tenant_id: e.tenantId,
          id: newId('dlv'),
          webhook_id: h.id,
          event_id: e.id,
          event: e.type,
          status: 'pending',
          status_code: null,
          response_snippet: null,
          duration_ms: null,
          attempts: 0,
          last_error: null,
          next_attempt_at: e.createdAt,
          delivered_at: null,
          lease_owner: null,
          lease_until: null,
          created_at: e.createdAt,
          updated_at: e.createdAt,
        })),
    );
    await insertDeliveries(tx, deliveries);
    if (!signalled) for (const tenantId of tenants) await signalEvents(tx, tenantId);
    if (deliveries.length) await wakeWorkers(tx);
  },
};

/**
 * Records an event in the outbox, in the caller's transaction (B.9): the change and its event commit
 * together or not at all. The event is written when the transaction is about to commit (see
 * eventWrites), with one delivery row per active webhook of the tenant subscribed to the event then,
 * so a webhook inactive now never receives it. Answers the event's id.
 *
 * `record` is the object as a single read returns it; `extra` adds fields beside it in `data`
 * (for example `previousStageId`).
 */
export async function emitEvent(
  tx: Db,
  tenantId: string,
  type: EventType,
  record: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const id = newId('evt');
  const now = nowIso();
  const key = dataKeyOf(type);
  const payload: EventPayload = { event: type, tenantId, timestamp: now, data: key === '' ? { ...record, ...extra } : { [key]: record, ...extra } };
  await deferWrite(tx, eventWrites, { tenantId, id, type, payload: JSON.stringify(payload), createdAt: now });
  return id;
}

/** Fields that never count as a change of their own: every write moves `updatedAt`. */
const NOT_CHANGES = new Set(['updatedAt']);

/** What an update changed (C.4): the names of the fields whose values differ, and their values before. */
export function recordDiff(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  ignore: readonly string[] = [],
): { changes: string[]; previous: Record<string, unknown> } {
  const changes: string[] = [];
  const previous: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (NOT_CHANGES.has(key) || ignore.includes(key)) continue;
    if (canonicalJson(before[key] ?? null) === canonicalJson(after[key] ?? null)) continue;
    changes.push(key);
    previous[key] = before[key] ?? null;
  }
  return { changes, previous };
}
