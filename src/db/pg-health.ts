/**
 * PostgreSQL's health, watched from one session of its own, and the gate that turns a database that is
 * down, restarting or frozen into a fast 503 `database_unavailable` (CONTRACT B.2, DESIGN §4) instead of a
 * hang or a 500.
 *
 * - A heartbeat (`select 1`) every HEARTBEAT_MS on a dedicated connection. An error or a connection refused
 *   makes the database *down* at once. No answer within HEARTBEAT_DEADLINE_MS (a frozen server: its sockets stay
 *   open, nothing answers) makes it down too, unless another session of this process finished something within
 *   that time (progress()): a server that answers others is busy, not frozen, and a busy machine's slow
 *   heartbeat must not turn every request into a 503.
 * - While down, the pool's gate refuses every new statement at once (`connect()` rejects with
 *   DatabaseUnavailable), and the sessions checked out at that moment are cut (their statements fail now,
 *   not when TCP gives up; a cut session never returns to the pool). The read pool asks the same gate.
 * - The heartbeat keeps trying to open a fresh session; the first answer makes the database *up* again, so
 *   the service recovers by itself within a heartbeat or two of the database's return.
 *
 * NOTE: a deadline per statement would also catch a frozen server, but it cannot tell a frozen server from
 * a slow statement on a busy one; the heartbeat can, so statements keep their own (server-side) timeouts.
 */
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { postgres } from './pg-module.js';

/** How often the heartbeat asks, and how long it waits for an answer before calling the database down. */
export const HEARTBEAT_MS = 250;
export const HEARTBEAT_DEADLINE_MS = 600;
/** A timer this late means the event loop was held up: the heartbeat's window starts again. */
const LOOP_STALL_MS = 100;

/** Raised instead of running a statement while the database is down (mapped to 503 `database_unavailable`). */
export class DatabaseUnavailable extends Error {
  readonly code = 'DATABASE_UNAVAILABLE';
  constructor(reason: string) {
    super(`database unavailable: ${reason}`);
  }
}

export interface HealthLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface PgHealthOptions {
  heartbeatMs?: number;
  deadlineMs?: number;
}

/** Emits 'down' (reason) and 'up' on each change of state. */
export class PgHealth extends EventEmitter {
  private up = true;
  private reason = '';
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly heartbeatMs: number;
  private readonly deadlineMs: number;
  /** When a session of this process last finished a statement or a checkout (the pool's, the read pool's). */
  private progressAt = 0;
  /** The heartbeat had an answer once (until then, only an error says the database is down). */
  private answeredOnce = false;

  constructor(
    private readonly connectionString: string,
    opts: PgHealthOptions = {},
  ) {
    super();
    // Every request waiting for a session listens for 'down' (gatedPool): as many as the pool's queue holds.
    this.setMaxListeners(0);
    this.heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    this.deadlineMs = opts.deadlineMs ?? HEARTBEAT_DEADLINE_MS;
  }

  get isUp(): boolean {
    return this.up;
  }

  /** Another session got an answer: the database is alive, whatever the heartbeat is waiting for. */
  progress(): void {
    this.progressAt = Date.now();
  }

  /** Throws DatabaseUnavailable while the database is down. */
  check(): void {
    if (!this.up) throw new DatabaseUnavailable(this.reason);
  }

  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.beat(), 0);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.drop();
  }

  private async beat(): Promise<void> {
    this.timer = null;
    if (this.closed) return;
    const failure = await this.ask();
    if (this.closed) return;
    if (failure === null) this.markUp();
    else this.markDown(failure);
    this.timer = setTimeout(() => void this.beat(), this.heartbeatMs);
    this.timer.unref();
  }

  /** One `select 1` within the deadline: null when answered, else why not. */
  private ask(): Promise<string | null> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (failure: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(failure);
      };
      let deadline: NodeJS.Timeout;
      const arm = (ms: number) => {
        const due = Date.now() + ms;
        deadline = setTimeout(() => check(due), ms);
        deadline.unref();
      };
      // "No answer" is a verdict only when this process could have heard one. The window starts again when:
      // - the timer fired late (the event loop was held up: a connection's several round trips could not run);
      // - another session got an answer within it (the server is slow, not frozen);
      // - the heartbeat never had an answer yet (a process starting up; a database that is down at start
      //   refuses connections, an error, which is judged at once).
      // The verdict itself waits for one more poll phase (setImmediate), so an answer already received is read.
      const check = (due: number) => {
        if (Date.now() - due > LOOP_STALL_MS) return arm(this.deadlineMs);
        setImmediate(() => {
          if (settled) return;
          const quietFor = Date.now() - this.progressAt;
          if (quietFor < this.deadlineMs) return arm(this.deadlineMs - quietFor);
          if (!this.answeredOnce) return arm(this.deadlineMs);
          this.drop();
          settle(`no answer within ${this.deadlineMs} ms`);
        });
      };
      arm(this.deadlineMs);
      this.session()
        .then((c) => c.query('select 1'))
        .then(
          () => {
            this.answeredOnce = true;
            settle(null);
          },
          (err: Error) => {
            this.drop();
            settle((err as { code?: string }).code ?? err.message);
          },
        );
    });
  }

  private async session(): Promise<pg.Client> {
    if (this.client) return this.client;
    // No connection timeout of pg's own: the heartbeat's deadline (ask) judges a session that does not open, with
    // the same care as a statement that does not answer, and closes it.
    const client = new (postgres().Client)({ connectionString: this.connectionString });
    client.on('error', () => {
      if (this.client === client) this.client = null;
    });
    this.client = client;
    try {
      await client.connect();
    } catch (err) {
      if (this.client === client) this.client = null;
      throw err;
    }
    return client;
  }

  /** Drops the heartbeat's session at once (a frozen server would never answer its goodbye). */
  private drop(): void {
    const client = this.client;
    this.client = null;
    if (client) destroySession(client);
  }

  private markDown(reason: string): void {
    this.reason = reason;
    if (!this.up) return;
    this.up = false;
    this.emit('down', reason);
  }

  private markUp(): void {
    if (this.up) return;
    this.up = true;
    this.reason = '';
    this.emit('up');
  }
}

/** Closes a session's socket at once: its statements in flight fail now, and the pool drops it on release. */
export function destroySession(client: pg.ClientBase): void {
  // A session checked out of the pool has no 'error' listener while nothing runs on it (the pool listens only
  // to idle ones): the error of the cut must not be an unhandled 'error' event. Its statements still fail.
  client.on('error', ignore);
  const stream = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
  if (stream) stream.destroy();
  else void (client as pg.Client).end?.().catch(() => {});
}

const ignore = () => {};

/**
 * The pool Kysely uses: the gate in front of pg's pool. While the database is down, `connect()` refuses at
 * once; when it goes down, the sessions checked out at that moment are cut.
 */
export interface GatedPool {
  connect(): Promise<pg.PoolClient>;
  /** One statement on a session of the pool, released after. */
  query(text: string, values: unknown[]): Promise<pg.QueryResult>;
  end(): Promise<void>;
}

export function gatedPool(pool: pg.Pool, health: PgHealth): GatedPool {
  const checkedOut = new Set<pg.PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (err, client) => {
    checkedOut.delete(client as pg.PoolClient);
    // A checkout that ended well had its answers: the server is alive (the heartbeat's judgement, see PgHealth).
    if (!err && (client as unknown as { _queryable?: boolean })._queryable !== false) health.progress();
  });
  pool.on('remove', (client) => checkedOut.delete(client as pg.PoolClient));
  health.on('down', () => {
    for (const client of checkedOut) destroySession(client);
  });
  // A request waiting for a session is answered 503 as soon as the heartbeat finds the database down, not at the
  // session-open bound (which is long enough for a loaded server to fork a backend); a session that opens after
  // that goes back to the pool.
  const connect = (): Promise<pg.PoolClient> => {
    if (!health.isUp) return Promise.reject(new DatabaseUnavailable('the database is down'));
    return new Promise((resolve, reject) => {
      let settled = false;
      const onDown = () => {
        settled = true;
        reject(new DatabaseUnavailable('the database is down'));
      };
      health.once('down', onDown);
      pool.connect().then(
        (client) => {
          health.off('down', onDown);
          if (settled) client.release();
          else resolve(client);
        },
        (err) => {
          health.off('down', onDown);
          if (!settled) reject(err);
        },
      );
    });
  };
  return {
    connect,
    query: async (text, values) => {
      const client = await connect();
      try {
        return await client.query(text, values);
      } finally {
        client.release();
      }
    },
    end: () => pool.end(),
  };
}

/** A read slot that refuses at once while the database is down (the read pool's side of the gate). */
export function gatedSlot<
  S extends { run(sql: string, params: readonly unknown[]): Promise<unknown[]>; cancel(): void; warm(): void; close(): Promise<void>; cut?(): void },
>(slot: S, health: PgHealth): S {
  // A statement in flight when the database goes down fails now, not at its deadline.
  health.on('down', () => slot.cut?.());
  const run = slot.run.bind(slot);
  const answered = <T>(rows: T): T => {
    health.progress();
    return rows;
  };
  slot.run = (sql, params) => (health.isUp ? run(sql, params).then(answered) : Promise.reject(new DatabaseUnavailable('the database is down')));
  return slot;
}
