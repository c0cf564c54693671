// Child process entry of a SQLite read connection (see sqlite-reader.ts). Plain JavaScript that loads
// only better-sqlite3, so the same file runs from src/ (tests) and dist/ without a TypeScript loader,
// and a replacement process is ready in tens of milliseconds.
import SqliteDatabase from './sqlite-driver.mjs';
import { registerDuplicateKeyFunctions } from '../domain/duplicate-keys.mjs';
import { sqlFold } from '../domain/fold.mjs';

const file = process.argv[2];
const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
// 16 MiB: the planner statistics' pass (sqlite-stats.ts), which reads every index once at start, filled a 32 MiB
// cache that the pooled statements (searches, deep pages, counts) then did not need: a reader held 41 MiB instead
// of 25, and the bench's pooled scenarios ran as fast with 16 (bench/journal/).
db.pragma('cache_size = -16384');
// SQLITE_MMAP_MB, as the main connection maps it (db/index.ts): argv[3] is the bytes, 0 for none.
const mmapBytes = Number(process.argv[3] ?? 0);
if (mmapBytes > 0) db.pragma(`mmap_size = ${mmapBytes}`);
// The SQL functions of the main connection (db/index.ts registerSqliteFunctions): search folds text here.
db.function('crm_fold', { deterministic: true }, sqlFold);
registerDuplicateKeyFunctions(db);
/** @type {Map<string, import('better-sqlite3').Statement>} */
const statements = new Map();

process.on('message', (/** @type {{ id: number, sql: string, params: unknown[] }} */ m) => {
  try {
    let stmt = statements.get(m.sql);
    if (!stmt) {
      stmt = db.prepare(m.sql);
      if (!stmt.reader) throw Object.assign(new Error('only read statements run on the read pool'), { code: 'READ_ONLY' });
      if (statements.size >= 500) statements.delete(statements.keys().next().value);
      statements.set(m.sql, stmt);
    }
    // Rows go back as arrays under one list of column names: with JSON IPC that halves the parent's cost
    // of receiving a page compared with structured-clone ('advanced') messages of row objects.
    process.send({ id: m.id, columns: stmt.columns().map((c) => c.name), rows: stmt.raw(true).all(m.params) });
  } catch (err) {
    process.send({ id: m.id, error: { message: String(err?.message), code: err?.code } });
  }
});
// The parent going away (crash, kill -9) must not leave readers behind.
process.on('disconnect', () => process.exit(0));
process.send({ ready: true });
