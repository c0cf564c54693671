/**
 * Checkpoints off the event loop. In WAL mode SQLite copies the WAL back into the database file when a
 * commit finds the WAL past `wal_autocheckpoint` pages, on the committing thread: every ~200 creates one
 * request took 14 ms instead of 0.3 (measured in the bench; bench/journal/), which set the p99 of writes at one
 * connection. This thread copies the committed frames a few milliseconds after they are written, on a
 * connection of its own, so the writer's automatic checkpoint, which stays (it alone can restart the WAL
 * under a steady load: a concurrent pass never sees the WAL without new frames), finds almost nothing left.
 *
 * Earlier, checkpoints every 200 ms on a thread with the automatic ones off let the WAL grow without bound
 * (db/index.ts): here the writer still checkpoints and restarts the WAL as before, only faster.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sqlite-checkpointer.worker.mjs');
const WRITES = 0;
const WAITING = 1;
const STOP = 2;
/** How long a pass waits for more writes to join it (ms). */
const PERIOD_MS = 5;

export class SqliteCheckpointer {
  private readonly slots = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  private worker: Worker | null = null;
  private closed = false;
  private failed = false;
  /** Settles when the thread has ended (also after an error that ended it). */
  private exited: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    /** The writer's `wal_autocheckpoint` (pages): past it, the writer checkpoints and restarts the WAL itself. */
    private readonly markPages: number,
  ) {}

  /** After a write: wakes the thread when it sleeps (started on the first write). A few nanoseconds otherwise. */
  wrote(): void {
    if (!this.worker) {
      if (this.closed || this.failed) return;
      try {
        this.start();
      } catch {
        // A thread that cannot start costs speed, never the write that just committed: the writer's
        // automatic checkpoints go on as they did before this thread existed.
        this.failed = true;
        return;
      }
    }
    Atomics.add(this.slots, WRITES, 1);
    if (Atomics.load(this.slots, WAITING) === 1) Atomics.notify(this.slots, WRITES);
  }

  private start(): void {
    const worker = new Worker(ENTRY, { workerData: { file: this.file, shared: this.slots.buffer, periodMs: PERIOD_MS, markPages: this.markPages } });
    worker.unref();
    // A thread that fails costs speed, never data: the writer's automatic checkpoints go on.
    worker.on('error', () => {});
    this.exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    this.worker = worker;
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    // Referenced again while it ends: an unreferenced thread would let the process exit under this await.
    worker.ref();
    Atomics.store(this.slots, STOP, 1);
    Atomics.add(this.slots, WRITES, 1);
    Atomics.notify(this.slots, WRITES);
    await this.exited;
  }
}
