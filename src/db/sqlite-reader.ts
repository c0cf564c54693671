/**
 * A read connection of the SQLite read pool, in a child process of its own (see reads.ts for why a
 * process and not a worker thread). The parent forks this file and sends `{ id, sql, params }`; it answers
 * `{ id, rows }` or `{ id, error }`. Only read statements run here: the connection is opened read-only.
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReadSlot } from './reads.js';
import { rowMakerOf } from './row-objects.js';

interface Request {
  id: number;
  sql: string;
  params: unknown[];
}
type Reply = { ready: true } | { id: number; columns: string[]; rows: unknown[][] } | { id: number; error: { message: string; code?: string } };

const ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sqlite-reader.process.mjs');

/**
 * A statement still running after this long is a heavy one (a full scan, an expensive filter): its
 * process drops to the lowest CPU priority until it answers. The kernel then gives a core to everything
 * else first — the event loop and other tenants' read processes — and to the heavy statement whatever is
 * left: on an idle machine it runs as fast as before, on a busy one it waits instead of taking half of
 * the cores from other tenants (the deadline, QUERY_TIMEOUT_MS, still bounds it). Point reads and pages
 * answer within a few milliseconds and are never lowered.
 */
export const LOWER_PRIORITY_AFTER_MS = 50;
/** Linux's lowest priority (`nice 19`). */
const LOWEST_PRIORITY = os.constants.priority.PRIORITY_LOW;

/** One child process with its read-only connection; replaced by a fresh one when a statement is cancelled. */
export class SqliteReaderSlot implements ReadSlot {
  private child: ChildProcess | null = null;
  private ready: Promise<void> | null = null;
  private pending: { id: number; resolve(rows: unknown[]): void; reject(err: unknown): void } | null = null;
  private seq = 0;
  private closed = false;
  /** The priority the process started with. */
  private basePriority = 0;
  /** Statements that ran long enough to be lowered (for tests). */
  lowerings = 0;

  /** `mmapBytes`: the connection's `mmap_size` (SQLITE_MMAP_MB, db/index.ts); 0 reads pages with system calls. */
  constructor(
    private readonly file: string,
    private readonly mmapBytes = 0,
  ) {}

  private start(): Promise<void> {
    // NOTE: JSON IPC, not 'advanced': SQLite hands back only numbers, strings and null here (no BLOB
    // columns, no 64-bit integers beyond 2^53), and JSON messages cost the parent less to receive.
    const child = fork(ENTRY, [this.file, String(this.mmapBytes)], { serialization: 'json', execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.child = child;
    const ready = new Promise<void>((resolve, reject) => {
      child.on('message', (m: Reply) => {
        if ('ready' in m) {
          this.basePriority = priorityOf(child.pid) ?? 0;
          return resolve();
        }
        const p = this.pending;
        if (!p || p.id !== m.id) return;
        this.pending = null;
        if ('rows' in m) p.resolve(rowMakerOf(m.columns)(m.rows));
        else p.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      });
      child.on('exit', (code, signal) => {
        if (this.child === child) {
          this.child = null;
          this.ready = null;
        }
        const err = new Error(`read process exited (${signal ?? code})`);
        reject(err);
        const p = this.pending;
        if (p && this.child === null) {
          this.pending = null;
          p.reject(err);
        }
      });
      child.on('error', reject);
    });
    ready.catch(() => {});
    this.ready = ready;
    return ready;
  }

  warm(): void {
    if (!this.ready && !this.closed) void this.start().catch(() => {});
  }

  async run(sql: string, params: readonly unknown[]): Promise<unknown[]> {
    if (this.closed) throw new Error('read pool closed');
    await (this.ready ?? this.start());
    const child = this.child!;
    const id = ++this.seq;
    let lowered = false;
    const lower = setTimeout(() => (lowered = this.lower(child)), LOWER_PRIORITY_AFTER_MS);
    try {
      return await new Promise<unknown[]>((resolve, reject) => {
        this.pending = { id, resolve, reject };
        child.send({ id, sql, params: params as unknown[] } satisfies Request);
      });
    } finally {
      clearTimeout(lower);
      if (lowered && this.child === child) this.restore(child);
    }
  }

  /** Whether the process now runs at the lowest priority. */
  private lower(child: ChildProcess): boolean {
    if (this.child !== child || child.pid === undefined) return false;
    try {
      os.setPriority(child.pid, LOWEST_PRIORITY);
      this.lowerings++;
      return true;
    } catch {
      // The process is gone (its exit handler answers the statement) or the OS refuses: it runs as it was.
      return false;
    }
  }

  /**
   * Back to the starting priority for the next statement. Raising a priority needs CAP_SYS_NICE (or an
   * RLIMIT_NICE) that an unprivileged server may not have: then the idle process is replaced by a fresh
   * one, started now, so that the next statement does not run at the lowest priority.
   */
  private restore(child: ChildProcess): void {
    try {
      os.setPriority(child.pid!, this.basePriority);
    } catch {
      this.replace();
    }
  }

  cancel(): void {
    const p = this.pending;
    this.pending = null;
    this.replace();
    p?.reject(new Error('cancelled'));
  }

  /** Kills the process (a statement in it stops at once) and starts a fresh one now, so the next statement is fast. */
  private replace(): void {
    const child = this.child;
    this.child = null;
    this.ready = null;
    child?.kill('SIGKILL');
    if (!this.closed) void this.start().catch(() => {});
  }

  /** The OS priority of the connection's process now (tests), or undefined when it has none. */
  priority(): number | undefined {
    return priorityOf(this.child?.pid);
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}

function priorityOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return os.getPriority(pid);
  } catch {
    return undefined;
  }
}
