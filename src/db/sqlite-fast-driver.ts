/**
 * The driver of the SQLite connection (FastSqliteDialect, sqlite-fast-dialect.ts, says what it changes from
 * Kysely's): statements prepared once, the connection handed over in FIFO order, one read transaction a turn,
 * group commit, and the wait for another process's write lock off the event loop.
 */
import type BetterSqlite from 'better-sqlite3';
import { IdentifierNode, RawNode, createQueryId, type CompiledQuery, type DatabaseConnection, type Driver, type QueryCompiler, type QueryResult } from 'kysely';
import { flatSql, type DirectRunner } from './prepared.js';
import { rowMaker, type RowMaker } from './row-objects.js';
import { LockLine, isBusy } from './sqlite-lock.js';

const parseSavepoint = (command: string, name: string) => RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)]);

/** The oldest snapshot a read outside a transaction may be given (FastSqliteDriver.openRead). */
export const READ_SNAPSHOT_MAX_MS = 5;

/** One acquisition of the single connection (FastSqliteDriver.acquireConnection). */
interface Lease extends DatabaseConnection {
  /** The group this lease's transaction joined (between beginTransaction and its end). */
  group: CommitGroup | null;
  /** Handed to the next waiter before Kysely's releaseConnection (a transaction waiting for its group). */
  handedOver: boolean;
}

/** Transactions committed together by one COMMIT (FastSqliteDriver: group commit). */
interface CommitGroup {
  /** Settles when the group's COMMIT has run: every member's commit waits for it. */
  readonly done: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function commitGroup(): CommitGroup {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  // A member whose SAVEPOINT failed never waits for it: its failure must not go unhandled.
  done.catch(() => {});
  return { done, resolve, reject };
}

/** The savepoint of one member transaction inside its group's transaction. */
const MEMBER = 'crm_member';
/** Statements that change the schema (FastSqliteDriver.prepare). */
const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

export class FastSqliteDriver implements Driver {
  /** Prepared once per SQL text; a statement that returns rows runs in raw mode, with the row maker of its columns. */
  private readonly statements = new Map<string, { stmt: BetterSqlite.Statement; rows: RowMaker | null }>();
  private readonly waiters: ((c: Lease) => void)[] = [];
  private busy = false;
  private readonly leases: Lease[] = [];
  private readonly executeQuery: DatabaseConnection['executeQuery'];
  private readonly streamQuery: DatabaseConnection['streamQuery'];
  private readonly tx: Record<'beginGroup' | 'commitGroup' | 'rollbackGroup' | 'begin' | 'release' | 'rollbackTo', BetterSqlite.Statement>;
  /** Statements that found another process's write lock wait here, off the event loop (sqlite-lock.ts). */
  private readonly lockLine: LockLine;

  constructor(
    private readonly raw: BetterSqlite.Database,
    /** How long a statement waits for another process's write lock before it answers 503 (ms). */
    lockWaitMs: number,
    /** Called after a write outside a transaction and after each COMMIT (the checkpointer's wake-up). */
    private readonly onCommit: () => void = () => {},
  ) {
    this.lockLine = new LockLine({ acquire: () => this.acquireTurn(), release: () => this.handOver() }, lockWaitMs);
    this.beginReadStmt = raw.prepare('begin');
    this.endReadStmt = raw.prepare('commit');
    this.tx = {
      beginGroup: raw.prepare('begin immediate'),
      commitGroup: raw.prepare('commit'),
      rollbackGroup: raw.prepare('rollback'),
      begin: raw.prepare(`savepoint ${MEMBER}`),
      release: raw.prepare(`release ${MEMBER}`),
      rollbackTo: raw.prepare(`rollback to ${MEMBER}`),
    };
    this.executeQuery = async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
      try {
        return this.run<R>(query.sql, query.parameters as unknown[]);
      } catch (err) {
        // Inside a transaction the group holds the write lock: a busy error there is not a lock to wait for.
        if (!isBusy(err) || this.memberToken) throw err;
        return this.lockLine.wait(() => this.run<R>(query.sql, query.parameters as unknown[]));
      }
    };
    const beforeLone = () => this.commitBeforeLoneStatement();
    this.streamQuery = async function* <R>(this: void, query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
      beforeLone();
      for (const row of raw.prepare(query.sql).iterate(query.parameters as unknown[])) yield { rows: [row as R] };
    };
  }

  /**
   * A statement on the connection when nobody holds it, at once: the rows, or undefined when a transaction
   * or a queued statement holds the connection (the caller then queues through Kysely). For prepared()'s
   * statements, most of them point reads: Kysely's executor, its connection provider and their promises
   * allocated ~4.6 KB of a point read's ~19 KB (measured in the bench). Nothing can come between the
   * check and the statement (it runs synchronously), so this is the acquire, execute and release of an
   * idle connection, less the promises.
   */
  runNow<R>(sqlText: string, params: unknown[]): R[] | undefined {
    if (this.busy) return undefined;
    try {
      return this.run<R>(sqlText, params).rows as R[];
    } catch (err) {
      // Another process's write lock: the caller goes through Kysely, whose executeQuery waits for it.
      if (isBusy(err)) return undefined;
      throw err;
    }
  }

  /**
   * Runs `fn`, statements on the raw connection, for a caller that holds the connection (openSqlite's
   * onRawConnection, sqlite-open.ts): after the turn's read transaction and the open group end, and again, off the event
   * loop, while it finds another process's write lock. `fn` must leave nothing behind when it fails so.
   */
  async aroundDriver<T>(fn: () => T): Promise<T> {
    const attempt = () => {
      this.settle();
      return fn();
    };
    try {
      return attempt();
    } catch (err) {
      if (!isBusy(err)) throw err;
      return this.lockLine.wait(attempt);
    }
  }

  /**
   * The statements of the member transaction that holds the connection now, run at once (prepared.ts
   * transactionStarted, called by withTx and openTransaction as the transaction starts): they answer undefined once
   * that transaction has ended, and the caller goes through Kysely. A transaction's statements went through
   * Kysely's Transaction, a new executor per statement, its single-connection provider and their promises:
   * ~1.2 KB and a few µs each, eight of them in a create (measured in the bench).
   * NOTE: this runs a statement when it is called, where Kysely's provider would queue it behind one of the
   * same transaction still running; better-sqlite3 runs each statement to its end before returning, and the
   * code of a transaction awaits its writes in turn, so the order of its writes is the order of its calls.
   */
  memberRunner(): DirectRunner | undefined {
    const token = this.memberToken;
    if (!token) return undefined;
    return (sqlText, params) => (this.memberToken === token ? this.run<unknown>(sqlText, params).rows : undefined);
  }

  /** One statement; the caller holds the connection (executeQuery) or it is idle (runNow). */
  private run<R>(sqlText: string, params: unknown[]): QueryResult<R> {
    const raw = this.raw;
    this.commitBeforeLoneStatement();
    const { stmt, rows } = this.prepare(sqlText);
    // `readonly` alone would include BEGIN and COMMIT; `reader` alone, INSERT … RETURNING.
    if (stmt.reader && stmt.readonly) {
      if (this.reading && performance.now() - this.readSince > READ_SNAPSHOT_MAX_MS) this.endRead();
      if (!raw.inTransaction) this.openRead();
      return { rows: rows!(stmt.all(params) as unknown[][]) as R[] };
    }
    this.endRead();
    let result: QueryResult<R>;
    if (rows) result = { rows: rows(stmt.all(params) as unknown[][]) as R[] };
    else {
      const { changes, lastInsertRowid } = stmt.run(params);
      result = { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    }
    if (!raw.inTransaction) this.onCommit();
    return result;
  }

  /**
   * Reads outside a transaction share one read transaction per turn of the event loop. On a file in WAL
   * mode every transaction takes and drops a read lock (two `fcntl` calls) and checks the WAL: 7 of the
   * 8.3 µs of a point read on the bench's VM, against 1.3 µs inside a transaction. Under load one turn serves
   * the point reads of many requests, so they pay for one. The transaction ends before any write (so a
   * write never upgrades it), at the end of the turn (setImmediate), and once it is READ_SNAPSHOT_MAX_MS
   * old (a turn held up by synchronous work): writes of this connection are always visible to its next
   * read, another process's within a few milliseconds.
   */
  private readonly beginReadStmt: BetterSqlite.Statement;
  private readonly endReadStmt: BetterSqlite.Statement;
  private reading = false;
  private readSince = 0;
  private readonly endReadSoon = () => this.endRead();

  private openRead(): void {
    this.beginReadStmt.run();
    this.reading = true;
    this.readSince = performance.now();
    setImmediate(this.endReadSoon);
  }

  /** Ends the turn's read transaction, if one is open (before a write, at the end of the turn). */
  private endRead(): void {
    if (!this.reading) return;
    this.reading = false;
    if (this.raw.open && this.raw.inTransaction) this.endReadStmt.run();
  }

  /**
   * Group commit: the write transactions of one turn of the event loop share one SQLite transaction, and
   * one COMMIT at the end of the turn. A COMMIT writes every page its transaction changed to the WAL (two
   * `pwrite`s a page) and takes and drops the WAL's locks. A create changes ~19 pages, most of which every
   * create changes again (the last leaf of the table and of each time-ordered index, the event log's, the
   * change counter): under 50 connections it made 38 `pwrite`s and 6 `fcntl`s, against 6.5 and 0.2 when
   * the creates of a turn commit together (measured in the bench).
   * - Each transaction is a savepoint of the group's: its rollback undoes its own writes only.
   * - It is acknowledged (its commit resolves) only once the group's COMMIT has run, so nothing is
   *   answered or announced (afterCommit) before it is durable; if that COMMIT fails, every member fails.
   * - The connection goes to the next transaction as soon as a member ends, so the transactions that
   *   waited for it join the group; the COMMIT runs at setImmediate, after them (it queues for the
   *   connection like any of them).
   * - A statement outside a transaction commits the group first: reads never see uncommitted writes, and
   *   a lone write is committed when it returns, as before.
   * There are no deferred constraints in the schema (the only thing a COMMIT checks), so a COMMIT fails
   * only for a reason that fails every transaction alike (I/O, a full disk).
   */
  private group: CommitGroup | null = null;
  /**
   * The member transaction holding the connection (between its savepoint and its end; a new object at each
   * savepoint), or null when none does: see memberRunner.
   */
  private memberToken: object | null = null;
  private commitQueued = false;
  private readonly commitSoon = () => {
    if (this.commitQueued || !this.group) return;
    this.commitQueued = true;
    void this.acquireConnection().then((lease) => {
      this.commitQueued = false;
      try {
        this.commitGroup();
      } finally {
        void this.releaseConnection(lease);
      }
    });
  };

  /**
   * A statement outside the transactions of a group (a point read, a lone write) must neither see nor be
   * part of their uncommitted writes: the group commits first. The caller holds the connection.
   */
  private commitBeforeLoneStatement(): void {
    if (!this.memberToken) this.commitGroup();
  }

  /** Commits the open group; the caller holds the connection and is not a member. */
  private commitGroup(): void {
    const group = this.group;
    if (!group) return;
    this.group = null;
    try {
      // SQLite rolls a whole transaction back on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM):
      // the members that already ended lost their writes too.
      if (!this.raw.inTransaction) throw new Error('the transaction was rolled back by SQLite');
      this.tx.commitGroup.run();
    } catch (err) {
      if (this.raw.open && this.raw.inTransaction) this.tx.rollbackGroup.run();
      group.reject(err);
      return;
    }
    group.resolve();
    this.onCommit();
  }

  /** Ends the turn's read transaction and commits the open group, for statements that go around the driver. */
  settle(): void {
    this.endRead();
    this.commitBeforeLoneStatement();
  }

  private prepare(sqlText: string): { stmt: BetterSqlite.Statement; rows: RowMaker | null } {
    let entry = this.statements.get(sqlText);
    if (!entry) {
      const stmt = this.raw.prepare(sqlText);
      // A schema change (a migration) can change what `select *` returns: the statements prepared before it,
      // and their row makers, are dropped (test/db/record-doc.test.ts reads a table before and after one).
      if (!stmt.reader && SCHEMA_CHANGE.test(sqlText)) {
        this.statements.clear();
        return { stmt, rows: null };
      }
      // Statements that return rows return arrays; executeQuery makes them objects (row-objects.ts says why).
      entry = {
        stmt,
        rows: stmt.reader
          ? rowMaker(
              stmt
                .raw(true)
                .columns()
                .map((c) => c.name),
            )
          : null,
      };
      if (this.statements.size >= 2000) this.statements.delete(this.statements.keys().next().value as string);
      this.statements.set(flatSql(sqlText), entry); // the key is kept: not the rope of the request that missed
    }
    return entry;
  }

  async init(): Promise<void> {}

  private lease(): Lease {
    return this.leases.pop() ?? { executeQuery: this.executeQuery, streamQuery: this.streamQuery, group: null, handedOver: false };
  }

  acquireConnection(): Promise<DatabaseConnection> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve(this.lease());
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The connection in FIFO order like acquireConnection, without a lease (the lock line's retries). */
  private acquireTurn(): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.waiters.push((lease) => {
        this.leases.push(lease);
        resolve();
      }),
    );
  }

  /** The connection to the next waiter, or free. */
  private handOver(): void {
    const next = this.waiters.shift();
    if (next) next(this.lease());
    else this.busy = false;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    const handedOver = lease.handedOver;
    lease.group = null;
    lease.handedOver = false;
    this.leases.push(lease);
    if (!handedOver) this.handOver();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    this.endRead();
    if (!this.group) {
      try {
        this.openGroup();
      } catch (err) {
        if (!isBusy(err)) throw err;
        // Another process writes: the connection serves the others meanwhile (sqlite-lock.ts), and this
        // transaction goes on holding it again with a group open, or fails with 503 at its deadline.
        await this.lockLine.wait(this.joinGroup);
      }
    }
    this.tx.begin.run();
    this.memberToken = {};
    (connection as Lease).group = this.group;
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    this.tx.release.run();
    await this.endMember(connection as Lease);
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    if (this.raw.inTransaction) {
      this.tx.rollbackTo.run();
      this.tx.release.run();
    } else if (this.group === lease.group) {
      // SQLite rolled the group's transaction back (see commitGroup): it fails there.
      this.commitGroup();
    }
    // A rolled-back transaction answers after the COMMIT too (what it read may be other members' writes),
    // with its own error.
    await this.endMember(lease).catch(() => {});
  }

  /**
   * Opens a group. IMMEDIATE: a transaction that reads then writes takes the write lock first, waiting for
   * another process's writer (the lock line) instead of failing with SQLITE_BUSY at its first write.
   */
  private openGroup(): void {
    this.endRead();
    this.tx.beginGroup.run();
    this.group = commitGroup();
    setImmediate(this.commitSoon);
  }

  /** The lock line's retry of a transaction: the group another one opened meanwhile, or a new one. */
  private readonly joinGroup = () => {
    if (this.group) this.endRead();
    else this.openGroup();
  };

  /** A member ended: the connection goes to the next transaction, and the member waits for its group. */
  private endMember(lease: Lease): Promise<void> {
    this.memberToken = null;
    lease.handedOver = true;
    this.handOver();
    return lease.group!.done;
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(parseSavepoint('savepoint', name), createQueryId()));
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(parseSavepoint('rollback to', name), createQueryId()));
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(parseSavepoint('release', name), createQueryId()));
  }
  async destroy(): Promise<void> {
    this.lockLine.close();
    this.settle();
    this.raw.close();
  }
}
