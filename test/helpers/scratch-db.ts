// A database of a test's own, migrated step by step: a scratch SQLite file, or a fresh PostgreSQL schema
// (first on the search_path), with a Migrator over the project's migrations.
import { after } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Migrator, type Migration } from 'kysely';
import pg from 'pg';
import { createDatabase, type Database } from '../../src/db/index.js';
import { migrations } from '../../src/db/migrations/index.js';
import { DIALECT, testConfig } from './app.js';

export interface ScratchDatabase {
  database: Database;
  migrator: Migrator;
  /** PostgreSQL: a connection string whose sessions see the scratch schema first. */
  url?: string;
}

/** `name` names the PostgreSQL schema (with the process id); the database and the schema go when the file ends. */
export async function scratchDatabase(name: string): Promise<ScratchDatabase> {
  let database: Database;
  let schema: string | undefined;
  let scopedUrl: string | undefined;
  if (DIALECT === 'sqlite') {
    const dir = mkdtempSync(path.join(tmpdir(), 'crm-mig-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    database = createDatabase(testConfig(), { sqliteFile: path.join(dir, 'crm.db') });
  } else {
    const url = process.env.DATABASE_URL!;
    schema = `${name}_${process.pid}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade; create schema ${schema}`);
    after(async () => {
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    });
    const scoped = new URL(url);
    scoped.searchParams.set('options', `-c search_path=${schema},public`);
    scopedUrl = scoped.toString();
    database = createDatabase(testConfig({ DATABASE_URL: scopedUrl }));
  }
  after(() => database.close());
  const migrator = new Migrator({
    db: database.db,
    // PostgreSQL: the migrations table of the scratch schema, not the shared one further down the search_path.
    ...(schema ? { migrationTableSchema: schema } : {}),
    provider: {
      async getMigrations() {
        const out: Record<string, Migration> = {};
        for (const [n, m] of Object.entries(migrations)) out[n] = { up: (db) => m.up(db, database.dialect.name) };
        return out;
      },
    },
  });
  return { database, migrator, url: scopedUrl };
}
