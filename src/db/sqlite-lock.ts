/**
 * Waiting for another process's write lock on SQLite without blocking the event loop (DESIGN §4).
 *
 * `crm worker`, the CLI and `crm serve` may share one database file. SQLite lets one connection write at a
 * time; the others wait in its busy handler, which sleeps on the calling thread. On the server's main
 * connection that thread is the event loop: a foreign `BEGIN IMMEDIATE` held 15 s froze every request,
 * `/healthz` included, for up to the 5 s `busy_timeout` each. So the main connection's `busy_timeout` is 0
 * (a locked write fails at once with SQLITE_BUSY) and the waiting happens here, on timers:
 * - a write that found the lock taken lends the connection to everyone else (reads outside a transaction
 *   do not need the write lock in WAL mode, so they go on answering) and joins one line of waiting writes;
 * - one probe at a time retries the write at the head of the line, holding the connection, after a short
 *   back-off (1, 2, 4 … up to MAX_DELAY_MS): a few microseconds of the loop per try, whatever the number of
 *   writes waiting; once it succeeds, the next write of the line is tried at once, so they keep their order;
 * - a write still waiting `waitMs` after it joined answers 503 `database_unavailable` with `Retry-After`
 *   (the driver passes QUERY_TIMEOUT_MS: the deadline of a request's statements, one setting for the operator);
 * - a write that arrives meanwhile tries the lock once itself (a few microseconds): when it finds it free, the
 *   line's next try finds it free too, or joins the group of transactions it opened.
 * The happy path never comes here: a write that gets the lock at once costs no timer and no extra call.
 */
import { errors } from '../errors.js';

/** better-sqlite3's error for a lock another connection holds: SQLITE_BUSY and its extended codes. */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/** The single connection the line shares with every other user of it (FastSqliteDriver's FIFO). */
export interface SharedConnection {
  /** Resolves holding the connection, after those who asked before. */
  acquire(): Promise<void>;
  /** Passes the connection on to the next user, or frees it. */
  release(): void;
}

interface Waiter {
  attempt: () => unknown;
  deadline: number;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** The first retry comes this soon after a write found the lock taken (ms). */
const FIRST_DELAY_MS = 1;
/**
 * Retries back off to one every MAX_DELAY_MS: a write waiting for a long foreign transaction goes on within
 * that much of its end, for ~50 failed tries a second (a few microseconds each) while it lasts.
 */
const MAX_DELAY_MS = 20;

export class LockLine {
  private readonly line: Waiter[] = [];
  private delay = FIRST_DELAY_MS;
  /** A probe is scheduled, waits for the connection or holds it. */
  private probing = false;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly connection: SharedConnection,
    /** How long a write waits for the lock before it answers 503 (ms). */
    private readonly waitMs: number,
  ) {}

  /** Writes waiting in the line (tests, metrics). */
  get waiting(): number {
    return this.line.length;
  }

  /**
   * Called holding the connection, after `attempt` failed with SQLITE_BUSY: lends the connection to the others
   * and retries `attempt` in line order until it succeeds. Settles holding the connection again: with what
   * `attempt` returned, its error when it fails otherwise, or 503 `database_unavailable` once it still finds
   * the lock taken past the deadline. `attempt` runs synchronously and leaves nothing behind when it fails.
   */
  wait<T>(attempt: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.line.push({ attempt, deadline: performance.now() + this.waitMs, resolve: resolve as (v: unknown) => void, reject });
      this.connection.release();
      if (!this.probing) {
        this.probing = true;
        this.later(FIRST_DELAY_MS);
      }
    });
  }

  /** The database is closing: every write still waiting answers 503 as soon as it has the connection. */
  close(): void {
    this.closed = true;
    if (!this.timer) return; // no probe, or one that waits for the connection and will see `closed`
    clearTimeout(this.timer);
    void this.probe();
  }

  private later(ms: number): void {
    this.timer = setTimeout(() => void this.probe(), ms);
  }

  private readonly probe = async (): Promise<void> => {
    this.timer = null;
    await this.connection.acquire();
    const head = this.line[0];
    if (!head) {
      this.probing = false;
      this.connection.release();
      return;
    }
    if (this.closed) return this.settle(head, false, unavailable());
    let value: unknown;
    try {
      value = head.attempt();
    } catch (err) {
      if (!isBusy(err)) return this.settle(head, false, err);
      const left = head.deadline - performance.now();
      if (left <= 0) return this.settle(head, false, unavailable());
      this.connection.release();
      this.later(Math.min(this.delay, left));
      this.delay = Math.min(this.delay * 2, MAX_DELAY_MS);
      return;
    }
    this.delay = FIRST_DELAY_MS;
    this.settle(head, true, value);
  };

  /** The head leaves the line holding the connection; the next one is tried as soon as it is free. */
  private settle(head: Waiter, ok: boolean, outcome: unknown): void {
    this.line.shift();
    if (ok) head.resolve(outcome);
    else head.reject(outcome);
    if (this.line.length > 0) void this.probe();
    else {
      this.probing = false;
      this.delay = FIRST_DELAY_MS;
    }
  }
}

function unavailable() {
  return errors.databaseUnavailable("Another process holds the database's write lock; retry shortly");
}
