// Worker thread of the SQLite checkpointer (see sqlite-checkpointer.ts). Its own connection to the database
// file copies committed WAL frames into the database (`wal_checkpoint(PASSIVE)`) a few milliseconds after
// writes, so the writer's automatic checkpoint finds almost nothing left to copy. Plain JavaScript, like
// the read process, so the same file runs from src/ (tests) and dist/ without a TypeScript loader.
//
// The thread blocks on a shared counter (Atomics.wait) while nothing is written: an idle server wakes it
// never. Shared slots: [0] writes seen by the writer, [1] 1 while this thread waits, [2] 1 to stop.
import { workerData } from 'node:worker_threads';
import SqliteDatabase from './sqlite-driver.mjs';

const { file, shared, periodMs, markPages } = workerData;
const slots = new Int32Array(shared);
const WRITES = 0;
const WAITING = 1;
const STOP = 2;

const db = new SqliteDatabase(file, { fileMustExist: true });
// A pass never waits for a lock: when the writer's own checkpoint holds it, the next pass comes soon.
// NORMAL: the WAL is synced before its frames are copied and the database after, as the writer's
// checkpoints do.
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)');
const pause = new Int32Array(new SharedArrayBuffer(4));
/** How long a pass that found the WAL past the writer's mark leaves the lock to the writer (ms). */
const STAND_ASIDE_MS = 50;

// The first pass comes at once: the write that started this thread is already counted.
let seen = -1;
while (Atomics.load(slots, STOP) === 0) {
  Atomics.store(slots, WAITING, 1);
  // Sleeps until the writer counts a write (it wakes this thread only when WAITING is set).
  if (Atomics.load(slots, WRITES) === seen) Atomics.wait(slots, WRITES, seen);
  Atomics.store(slots, WAITING, 0);
  if (Atomics.load(slots, STOP) !== 0) break;
  // Lets the writes of the next few milliseconds join this pass: one pass copies a page written many times
  // once, and syncs the files once.
  Atomics.wait(pause, 0, 0, periodMs);
  seen = Atomics.load(slots, WRITES);
  try {
    const [{ log }] = checkpoint.all();
    // Past the writer's mark its own checkpoint copies the rest and restarts the WAL at its next write: a pass of
    // this thread then holds the lock it needs (a slow sync under load held it across hundreds of commits, and the
    // WAL grew past the mark). So this thread stands aside for a moment.
    if (log >= markPages) Atomics.wait(pause, 0, 0, STAND_ASIDE_MS);
  } catch {
    // SQLITE_BUSY or a lock held for a moment: the next write brings another pass
  }
}
db.close();
