import type { Database } from '../db/index.js';
import { EVENTS_CHANNEL } from '../db/event-log.js';
import type { ListenLog, Listener } from '../db/listen.js';
import { listenTo } from '../db/notify.js';
import { errors } from '../errors.js';
import { onEventsCommitted } from './signal.js';

/** Why a waiting request goes on: an event of its tenant committed, its wait ended, or the server stops. */
export type WakeReason = 'event' | 'timeout' | 'closed';

export interface WaiterLimits {
  /** Requests one API key may have waiting at once (EVENT_WAIT_PER_KEY). */
  perKey: number;
  /** Requests the process may have waiting at once (EVENT_WAIT_MAX). */
  perProcess: number;
}

/**
 * The long-polls of `GET /events?wait=` in this process (CONTRACT C.4, DESIGN §5). A waiting request
 * holds no database connection and polls nothing: it sleeps until `notify(tenantId)` (a commit of the
 * tenant's events, from LISTEN on PostgreSQL or in process on SQLite), its own deadline (its one timer),
 * its client going away, or `close()` at shutdown.
 */
export class EventWaiters {
  private readonly byTenant = new Map<string, Set<Waiter>>();
  private readonly byKey = new Map<string, number>();
  private count = 0;
  private closed = false;
  private readonly reads = new Map<string, Promise<unknown>>();
  /** Grows with every notification: a reader compares it around a read to know it missed none. */
  generation = 0;

  constructor(private readonly limits: WaiterLimits) {}

  /** True once the server stops: requests answer what they have instead of waiting. */
  get closing(): boolean {
    return this.closed;
  }

  get waiting(): number {
    return this.count;
  }

  /**
   * Runs `read` once for every caller asking the same `key` while it runs: a commit wakes a key's waiting
   * requests together, and requests that ask the same thing share one statement rather than queue many
   * on the read pool (whose per-tenant queue would answer the rest 429).
   */
  shared<T>(key: string, read: () => Promise<T>): Promise<T> {
    let p = this.reads.get(key) as Promise<T> | undefined;
    if (!p) {
      p = read().finally(() => this.reads.delete(key));
      this.reads.set(key, p);
    }
    return p;
  }

  notify(tenantId: string): void {
    this.generation++;
    const set = this.byTenant.get(tenantId);
    if (set) for (const w of set) w.wake('event');
  }

  /** Wakes every waiter (after a lost LISTEN connection, when notifications may have been missed). */
  notifyAll(): void {
    this.generation++;
    for (const set of this.byTenant.values()) for (const w of set) w.wake('event');
  }

  /** A waiting slot until `deadline` (epoch ms); 429 past the key's or the process's bound. */
  enter(tenantId: string, keyId: string, deadline: number): Waiter {
    const held = this.byKey.get(keyId) ?? 0;
    if (held >= this.limits.perKey) throw errors.tooManyWaiting('key', this.limits.perKey);
    if (this.count >= this.limits.perProcess) throw errors.tooManyWaiting('server', this.limits.perProcess);
    this.byKey.set(keyId, held + 1);
    this.count++;
    let set = this.byTenant.get(tenantId);
    if (!set) this.byTenant.set(tenantId, (set = new Set()));
    const w = new Waiter(deadline, () => {
      set.delete(w);
      if (set.size === 0 && this.byTenant.get(tenantId) === set) this.byTenant.delete(tenantId);
      const n = (this.byKey.get(keyId) ?? 1) - 1;
      if (n > 0) this.byKey.set(keyId, n);
      else this.byKey.delete(keyId);
      this.count--;
    });
    set.add(w);
    if (this.closed) w.wake('closed');
    return w;
  }

  /** Releases every waiting request at once (SIGTERM, app close); later requests do not wait. */
  close(): void {
    this.closed = true;
    for (const set of this.byTenant.values()) for (const w of set) w.wake('closed');
  }
}

/** One waiting request. `next()` resolves at the next wake-up (at once if one came since the last). */
export class Waiter {
  private pending: WakeReason | null = null;
  private final: WakeReason | null = null;
  private resolve: ((r: WakeReason) => void) | null = null;
  private readonly timer: NodeJS.Timeout;
  private left = false;

  constructor(
    deadline: number,
    private readonly onLeave: () => void,
  ) {
    this.timer = setTimeout(() => this.wake('timeout'), Math.max(0, deadline - Date.now()));
  }

  wake(reason: WakeReason): void {
    if (this.final) return;
    if (reason !== 'event') this.final = reason;
    const r = this.resolve;
    if (r) {
      this.resolve = null;
      r(reason);
    } else if (this.pending !== 'timeout' && this.pending !== 'closed') this.pending = reason;
  }

  next(): Promise<WakeReason> {
    if (this.final) return Promise.resolve(this.final);
    const p = this.pending;
    if (p) {
      this.pending = null;
      return Promise.resolve(p);
    }
    return new Promise((resolve) => (this.resolve = resolve));
  }

  /** Frees the slot (always, in a finally). */
  leave(): void {
    if (this.left) return;
    this.left = true;
    clearTimeout(this.timer);
    this.onLeave();
  }
}

/**
 * Wakes `waiters` when a tenant's events commit: through one LISTEN connection for the process on
 * PostgreSQL (commits made by any process), in process on SQLite. NOTE: on SQLite, events written by
 * another process on the same file (`crm worker`, the CLI) wake nobody; the next poll or the end of the
 * wait finds them.
 */
export function startWakeups(database: Database, waiters: EventWaiters, log: ListenLog): Listener {
  const wake = (tenantId: string) => waiters.notify(tenantId);
  const listener = listenTo(database, EVENTS_CHANNEL, wake, () => waiters.notifyAll(), log);
  if (listener) return listener;
  const off = onEventsCommitted(wake);
  return { close: async () => void off() };
}
