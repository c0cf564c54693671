/**
 * A read connection of the PostgreSQL read pool (see reads.ts): one session of its own with
 * `statement_timeout` as a server-side backstop; cancelling sends `pg_cancel_backend` for its backend
 * through the main pool, so the statement stops on the server, not only in the client.
 */
import type pg from 'pg';
import { postgres } from './pg-module.js';
import { plannerStatistics, type PlannerStatistics } from './pg-stats.js';
import { destroySession } from './pg-health.js';
import type { ReadSlot } from './reads.js';

export class PgReaderSlot implements ReadSlot {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private closed = false;
  /** The planner statistics of this database (pg-stats.ts). */
  private readonly planner: PlannerStatistics;
  /** A cancel in flight: the slot is handed back only after it lands, so it cannot hit the next statement. */
  private cancelling: Promise<unknown> | null = null;

  constructor(
    private readonly connectionString: string,
    private readonly statementTimeoutMs: number,
    /** Runs the cancel; the main pool behind its gate (pg-health.ts), so a cancel never waits on a frozen server. */
    private readonly control: { query(text: string, values: unknown[]): Promise<unknown> },
  ) {
    this.planner = plannerStatistics(connectionString);
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new (postgres().Client)({ connectionString: this.connectionString, statement_timeout: this.statementTimeoutMs });
      client.on('error', () => {
        if (this.client === client) this.client = null;
      });
      try {
        await client.connect();
      } finally {
        this.connecting = null;
      }
      this.client = client;
      return client;
    })();
    return this.connecting;
  }

  warm(): void {
    if (!this.closed) void this.connect().catch(() => {});
  }

  async run(sql: string, params: readonly unknown[]): Promise<unknown[]> {
    if (this.closed) throw new Error('read pool closed');
    const client = await this.connect();
    try {
      // Plans around tables without statistics (pg-stats.ts): nested loops off for this statement if it reads one.
      await this.planner.beforeRead(client, sql);
      return (await client.query(sql, params as unknown[])).rows;
    } catch (err) {
      // A broken session is replaced on the next statement.
      if (!(err as { code?: string }).code) {
        this.client = null;
        void client.end().catch(() => {});
      }
      throw err;
    } finally {
      if (this.cancelling) {
        await this.cancelling;
        this.cancelling = null;
      }
    }
  }

  cancel(): void {
    const pid = (this.client as unknown as { processID?: number } | null)?.processID;
    if (pid && !this.cancelling) this.cancelling = this.control.query('select pg_cancel_backend($1)', [pid]).catch(() => {});
  }

  /** Closes the session at once (the database went down): the statement in flight fails now, not at its deadline. */
  cut(): void {
    const client = this.client;
    this.client = null;
    if (client) destroySession(client);
  }

  async close(): Promise<void> {
    this.closed = true;
    // A session still being opened (warm() at start) is ended once it is up: left alone, it would keep
    // the process alive after close (an app closed before its first read hung on exit).
    const client = this.client ?? (await this.connecting?.catch(() => null)) ?? null;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
