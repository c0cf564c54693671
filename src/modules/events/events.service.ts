import type { Db } from '../../db/index.js';
import { errors } from '../../errors.js';
import type { Ctx } from '../../http/context.js';
import type { AbortSource } from '../../db/reads.js';
import { EVENT_KEYS } from '../../events/catalog.js';
import { payloadParts } from '../../events/outbox.js';
import type { EventWaiters } from '../../events/waiters.js';
import { keysetCursor, keysetPage } from '../../listing/planner.js';
import * as repo from './events.repo.js';
import { DEFAULT_EVENTS_PAGE, type EventListQueryT, type EventPageT } from './events.schema.js';

/** What a long-poll needs besides the query: the process's waiters and the client's connection. */
export interface WaitDeps {
  waiters: EventWaiters;
  signal?: AbortSource;
}

/** An event of a page, its `data` still the JSON text stored with it (see eventPageJson). */
export interface ListedEvent {
  id: string;
  type: string;
  occurredAt: string;
  dataJson: string;
}
export interface ListedEventPage {
  data: ListedEvent[];
  pagination: EventPageT['pagination'];
}

function toEvent(r: repo.EventRow): ListedEvent {
  const { timestamp, dataJson } = payloadParts(r.payload);
  return { id: r.id, type: r.type, occurredAt: timestamp, dataJson };
}

/**
 * The JSON of a page (the EventPage schema), written by hand: a schema serializer would need `data` as an
 * object, that is every stored payload parsed and written again (half of the cost of a page of 1,000).
 * Ids, types and timestamps are plain ASCII the service wrote; they are still escaped as JSON strings.
 */
export function eventPageJson(page: ListedEventPage): string {
  let out = '{"data":[';
  for (let i = 0; i < page.data.length; i++) {
    const e = page.data[i];
    if (i > 0) out += ',';
    out += `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"occurredAt":${JSON.stringify(e.occurredAt)},"data":${e.dataJson}}`;
  }
  return `${out}],"pagination":${JSON.stringify(page.pagination)}}`;
}

function parseTypes(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const types = [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (types.length === 0) throw errors.field('types', 'must name at least one event key');
  const unknown = types.filter((t) => !EVENT_KEYS.has(t));
  if (unknown.length) throw errors.field('types', `unknown event key${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (see GET /webhooks/event-types)`);
  return types.sort();
}

/**
 * GET /events (CONTRACT C.4): the tenant's events oldest first, after `after` and/or a cursor; with
 * `wait`, held until a matching event is committed or the wait ends (events/waiters.ts).
 */
export async function listEvents(ctx: Ctx, q: EventListQueryT, keyId: string, wait?: WaitDeps): Promise<ListedEventPage> {
  if (q.limit !== undefined && q.pageSize !== undefined && q.limit !== q.pageSize) {
    throw errors.field('pageSize', '`pageSize` is an alias of `limit`: give one, or both equal');
  }
  const pageSize = q.limit ?? q.pageSize ?? DEFAULT_EVENTS_PAGE;
  const types = parseTypes(q.types);
  const build = (rows: repo.EventRow[], hasNext: boolean, nextCursor: string | null): ListedEventPage => ({
    data: rows.map(toEvent),
    pagination: { page: null, pageSize, total: null, totalPages: null, hasNext, hasPrev: null, nextCursor },
  });
  let after: repo.EventPosition | undefined;
  if (q.after !== undefined) {
    after = await repo.findPosition(ctx.db, ctx.tenantId, q.after);
    // CONTRACT C.4 calls `after` a filter, and B.2 says a query filter naming an id of another tenant or a missing
    // record matches nothing (200, empty): so does an `after` that is no event of the tenant (or that retention
    // removed), at once, even with `wait` (no event can ever follow it). The reference says to start again without it.
    if (!after) return build([], false, null);
  }
  const filter: repo.EventFilter = { types, after };
  const listed = {
    sortKey: 'position',
    order: 'asc',
    filters: filter,
    boundFilters: { types: types ?? null, after: q.after ?? null },
    keyId,
    endpoint: 'GET /events',
    pageSize,
    cursor: q.cursor,
  } as const;
  // Long-polls asking the same page share one read and one page object (which the route serializes once):
  // a commit wakes them together. Without a cursor the query is the same for every key of the tenant, and
  // only a next cursor (bound to its key) differs; a cursor is bound to its key, so it shares with that key.
  const sharedKey = JSON.stringify([ctx.tenantId, q.cursor === undefined ? null : keyId, q.after ?? null, q.cursor ?? null, types ?? null, pageSize]);
  const waiting = wait && (q.wait ?? 0) > 0 ? wait.waiters : undefined;
  const read = async (): Promise<ListedEventPage> => {
    if (!waiting) {
      const { rows, hasNext, nextCursor } = await keysetPage<repo.EventRow, repo.EventFilter, 'position'>(ctx, repo.EVENT_LISTING, listed);
      return build(rows, hasNext, nextCursor);
    }
    const shared = await waiting.shared(sharedKey, async () => {
      const { rows, hasNext, nextCursor } = await keysetPage<repo.EventRow, repo.EventFilter, 'position'>(ctx, repo.EVENT_LISTING, listed);
      return { keyId, rows, page: build(rows, hasNext, nextCursor) };
    });
    if (!shared.page.pagination.hasNext || shared.keyId === keyId) return shared.page;
    const last = shared.rows[shared.rows.length - 1] as unknown as Record<string, unknown>;
    return { ...shared.page, pagination: { ...shared.page.pagination, nextCursor: keysetCursor(ctx, repo.EVENT_LISTING, listed, last) } };
  };

  const waiters = wait?.waiters;
  const seconds = q.wait ?? 0;
  const generation = waiters?.generation ?? 0;
  let page = await read();
  if (page.data.length > 0 || seconds === 0 || !waiters || waiters.closing || wait.signal?.aborted) return page;

  const waiter = waiters.enter(ctx.tenantId, keyId, Date.now() + seconds * 1000);
  const unsubscribe = wait.signal?.subscribe(() => waiter.wake('closed'));
  try {
    // A commit notified while the first read ran is not missed: it calls for another read at once.
    let reread = waiters.generation !== generation;
    for (;;) {
      if (reread) {
        page = await read();
        if (page.data.length > 0) return page;
      }
      if ((await waiter.next()) !== 'event') break;
      reread = true;
    }
    return page;
  } finally {
    unsubscribe?.();
    waiter.leave();
  }
}

/**
 * D.5: rewrites every event of the tenant whose payload holds one of `needles` with `rewrite(payload)` (the same
 * event without the erased values; the deliveries of an event send its payload, so they follow). Returns the ids of
 * the events rewritten.
 */
export async function rewriteEventsMentioning(db: Db, tenantId: string, needles: readonly string[], rewrite: (payload: string) => string): Promise<string[]> {
  const ids: string[] = [];
  for (const e of await repo.eventsMentioning(db, tenantId, needles)) {
    const payload = rewrite(e.payload);
    if (payload === e.payload) continue;
    await repo.rewritePayload(db, tenantId, e.id, payload);
    ids.push(e.id);
  }
  return ids;
}
