// Bytes the `contacts` table takes with its indexes (events and every other table apart): SQLite's dbstat (pages of the
// table and of its indexes, on a read-only connection of its own: the server may be running), PostgreSQL's
// pg_total_relation_size (heap, TOAST and indexes). Measured right after each data set is seeded, the difference
// divided by that set's contacts is its bytes per contact (run.ts).
import Sqlite from '../src/db/sqlite-driver.mjs';

/**
 * PostgreSQL: `vacuum (analyze) contacts`, as run.ts does after the bulk seed. Rows created through the API wait in
 * the GIN indexes' pending lists (uncounted pages' worth) until a vacuum moves them; measured before it, the realistic
 * set's bytes per contact came out below the minimal set's. It also gives the realistic scenarios a settled table.
 */
export async function vacuumContacts(databaseUrl: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('vacuum (analyze) contacts');
  } finally {
    await client.end();
  }
}

/**
 * PostgreSQL: the average size of a tenant's contact rows in the heap (pg_column_size of the row: its data, without the
 * tuple header and line pointer, ~28 B). A difference of pg_total_relation_size measures what a set added to the table,
 * and on PostgreSQL the realistic set filled pages the bulk-loaded minimal set had left partly empty: 936 B per
 * realistic contact for rows of 1,284 B of data (100,000 minimal contacts before it). This is the rows' own size.
 */
export async function pgRowBytes(databaseUrl: string, tenantId: string): Promise<number> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const r = await client.query<{ n: string }>('select avg(pg_column_size(c.*)) as n from contacts c where tenant_id = $1', [tenantId]);
    return Math.round(Number(r.rows[0].n));
  } finally {
    await client.end();
  }
}

export async function contactsBytes(where: { sqliteFile?: string; databaseUrl?: string }): Promise<number> {
  if (where.databaseUrl) {
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: where.databaseUrl });
    await client.connect();
    try {
      const r = await client.query<{ n: string }>(`select pg_total_relation_size('contacts') as n`);
      return Number(r.rows[0].n);
    } finally {
      await client.end();
    }
  }
  if (!where.sqliteFile) throw new Error('contactsBytes: neither a SQLite file nor a DATABASE_URL');
  const db = new Sqlite(where.sqliteFile, { readonly: true });
  try {
    const r = db
      .prepare(
        `select sum(pgsize) as n from dbstat where name = 'contacts' or name in (select name from sqlite_master where tbl_name = 'contacts' and type = 'index')`,
      )
      .get() as { n: number };
    return r.n;
  } finally {
    db.close();
  }
}
