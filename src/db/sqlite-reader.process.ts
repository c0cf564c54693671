// Child process entry of a SQLite read connection (see sqlite-reader.ts). Kept tiny: it loads only
// better-sqlite3, so a replacement starts in tens of milliseconds.
import SqliteDatabase from 'better-sqlite3';

const file = process.argv[2];
const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -32768');
const statements = new Map<string, SqliteDatabase.Statement>();

process.on('message', (m: { id: number; sql: string; params: unknown[] }) => {
  try {
    let stmt = statements.get(m.sql);
    if (!stmt) {
      stmt = db.prepare(m.sql);
      if (!stmt.reader) throw Object.assign(new Error('only read statements run on the read pool'), { code: 'READ_ONLY' });
      if (statements.size >= 500) statements.delete(statements.keys().next().value as string);
      statements.set(m.sql, stmt);
    }
    process.send!({ id: m.id, rows: stmt.all(m.params) });
  } catch (err) {
    const e = err as { message?: string; code?: string };
    process.send!({ id: m.id, error: { message: String(e.message), code: e.code } });
  }
});
// The parent going away (crash, kill -9) must not leave readers behind.
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
