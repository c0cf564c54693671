// Worker-thread entry of the SQLite checkpointer (see sqlite-checkpointer.ts). Plain JavaScript that loads
// only better-sqlite3, so the same file runs from src/ (tests) and dist/ without a TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';

const { file, intervalMs } = workerData;
const db = new SqliteDatabase(file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
// This connection writes nothing; it only copies committed WAL frames into the database file.
db.pragma('wal_autocheckpoint = 0');

/** PASSIVE: copies what no reader still needs, never waits for readers or writers, never blocks them. */
function checkpoint() {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    return r;
  } catch (err) {
    parentPort.postMessage({ error: String(err?.message ?? err) });
    return undefined;
  }
}

const timer = setInterval(checkpoint, intervalMs);
parentPort.on('message', (m) => {
  if (m === 'checkpoint') {
    parentPort.postMessage({ checkpointed: checkpoint() });
  } else if (m === 'stop') {
    clearInterval(timer);
    checkpoint();
    db.close();
    parentPort.postMessage({ stopped: true });
    parentPort.close();
  }
});
parentPort.postMessage({ ready: true });
