/**
 * WAL checkpoints of the SQLite database, off the event loop.
 *
 * With SQLite's automatic checkpoints, the commit that crosses `wal_autocheckpoint` copies the whole WAL
 * into the database file and syncs it, synchronously, on the thread of the one write connection: the
 * server's main thread. Every 4,000 pages that stalled every request of every tenant for 65–80 ms (seen
 * as the p99 of point reads while retention deleted old events, and as the tail of creates). Here the
 * write connection's automatic checkpoints are off, and a worker thread with a connection of its own
 * runs `wal_checkpoint(PASSIVE)` every `intervalMs`: it copies what no reader still needs, never waits
 * for readers or the writer, and never blocks them. The writer restarts the WAL from its start after a
 * complete checkpoint, as before, so the file does not grow.
 *
 * A thread, unlike the read pool's processes (reads.ts), because a checkpoint never has to be cancelled.
 * If the thread cannot start or fails, the write connection's automatic checkpoints come back on.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sqlite-checkpointer.worker.mjs');

export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

export class SqliteCheckpointer {
  private readonly worker: Worker;
  private stopped = false;
  private readonly waiting: ((r: CheckpointResult | undefined) => void)[] = [];

  /** `fallback` runs once if the thread fails: it turns the writer's automatic checkpoints back on. */
  constructor(file: string, intervalMs: number, private readonly fallback: () => void) {
    this.worker = new Worker(ENTRY, { workerData: { file, intervalMs } });
    // The thread must not keep a short CLI command alive.
    this.worker.unref();
    this.worker.on('message', (m: { checkpointed?: CheckpointResult; error?: string }) => {
      if ('checkpointed' in m) this.waiting.shift()?.(m.checkpointed);
    });
    this.worker.on('error', () => this.fail());
    this.worker.on('exit', () => {
      if (!this.stopped) this.fail();
    });
  }

  private fail(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.fallback();
    for (const w of this.waiting.splice(0)) w(undefined);
  }

  /** One checkpoint now (tests); undefined when the thread is gone. */
  checkpoint(): Promise<CheckpointResult | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.worker.postMessage('checkpoint');
    });
  }

  /** A last checkpoint, then the thread ends. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const done = new Promise<void>((resolve) => {
      this.worker.once('exit', () => resolve());
      this.worker.on('message', (m: { stopped?: boolean }) => {
        if (m.stopped) resolve();
      });
    });
    this.worker.postMessage('stop');
    await Promise.race([done, new Promise((r) => setTimeout(r, 5_000).unref())]);
    await this.worker.terminate();
  }
}
