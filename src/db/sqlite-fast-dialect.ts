import type BetterSqlite from 'better-sqlite3';
import { SqliteDialect, SqliteQueryCompiler, ValueNode, type Driver, type LimitNode, type OffsetNode, type OperationNode, type QueryCompiler } from 'kysely';
import type { FastSqliteDriver } from './sqlite-fast-driver.js';

/**
 * Kysely's SQLite dialect with a driver tuned for a busy server (same adapter, compiler, introspector):
 * - statements are prepared once per SQL text (bounded cache): Kysely would prepare every query anew,
 *   and preparing is a large share of a point read;
 * - the single connection is handed to waiters in FIFO order. Kysely's own SqliteDriver wakes every
 *   waiter on each release (they all re-check a shared promise), which costs O(waiters) per query:
 *   with 50 requests in flight that doubled the cost of a point read;
 * - write transactions start with BEGIN IMMEDIATE, so a transaction that reads then writes waits for
 *   another process's writer instead of failing with SQLITE_BUSY (serve + worker + CLI share the file);
 *   that wait, and a lone write's, happens off the event loop with a deadline (sqlite-lock.ts);
 * - reads outside a transaction share one read transaction per turn of the event loop (openRead).
 */
export class FastSqliteDialect extends SqliteDialect {
  constructor(
    raw: BetterSqlite.Database,
    private readonly driver: FastSqliteDriver,
  ) {
    super({ database: raw });
  }
  override createDriver(): Driver {
    return this.driver;
  }
  override createQueryCompiler(): QueryCompiler {
    return new FastSqliteQueryCompiler();
  }
}

/**
 * NOTE: SQLite (3.53, as built by better-sqlite3) looks at the value bound to a bare parameter that is a
 * statement's LIMIT or OFFSET when it plans the statement, so binding any value there (even the same one)
 * expires the plan: the statement is prepared anew at each run. That made the e-mail domain's company look-up
 * of every contact create 5.2 µs instead of 0.6, and a page of 50 ~10–20 µs slower. `(? + 0)` is the same
 * number to SQLite but no bare parameter, so the plan stays; the planner then does not know the limit, as it
 * did not before SQLite 3.46. Kysely compiles `.limit(n)` and `.offset(n)` as bare parameters: here they are
 * wrapped. (A value compiled inline, `sql.lit`, stays as it is.)
 */
class FastSqliteQueryCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    this.append('limit ');
    this.visitPlannedAround(node.limit);
  }
  protected override visitOffset(node: OffsetNode): void {
    this.append('offset ');
    this.visitPlannedAround(node.offset);
  }
  private visitPlannedAround(node: OperationNode): void {
    if (!ValueNode.is(node) || node.immediate) return this.visitNode(node);
    this.append('(');
    this.visitNode(node);
    this.append(' + 0)');
  }
}
