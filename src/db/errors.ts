/**
 * Database constraint errors, translated once for both dialects. Unique indexes are named
 * `<table>__<column>__uq`, so the violated column is known on SQLite and PostgreSQL alike.
 */
export interface UniqueViolation {
  table: string;
  column: string;
}

export function uniqueViolation(err: unknown): UniqueViolation | null {
  if (!err || typeof err !== 'object') return null;
  const e = err as { code?: string; message?: string; constraint?: string };
  if (e.code === '23505' && e.constraint) return parseIndexName(e.constraint);
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    const msg = e.message ?? '';
    const idx = /index '([^']+)'/.exec(msg);
    if (idx) return parseIndexName(idx[1]);
    // "UNIQUE constraint failed: contacts.tenant_id, contacts.email"
    const cols = /failed: (.+)$/.exec(msg)?.[1].split(',').map((s) => s.trim()) ?? [];
    const last = cols[cols.length - 1];
    if (last) {
      const [table, column] = last.split('.');
      return { table, column };
    }
  }
  return null;
}

function parseIndexName(name: string): UniqueViolation | null {
  const m = /^([a-z_]+?)__([a-z_]+?)__uq$/.exec(name);
  return m ? { table: m[1], column: m[2] } : null;
}

/** Serialization failures and deadlocks (PostgreSQL) and busy errors (SQLite) are worth one retry. */
export function isTransient(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code === '40001' || code === '40P01' || code === 'SQLITE_BUSY';
}
