import { Migrator, sql, type Migration } from 'kysely';
import type { Database } from './database.js';
import { migrations } from './migrations/index.js';
import { analyzeAfterMigrations } from './pg-stats.js';

/** Applies pending migrations; returns the names applied. Safe to run from several processes at once. */
export async function migrate(database: Database): Promise<string[]> {
  const dialect = database.dialect.name;
  const migrator = new Migrator({
    db: database.db,
    provider: {
      async getMigrations() {
        const out: Record<string, Migration> = {};
        for (const [name, m] of Object.entries(migrations)) {
          out[name] = {
            up: async (db) => {
              // A schema change on a large table may take longer than any statement of the API.
              if (dialect === 'postgres') await sql`set local statement_timeout = 0`.execute(db);
              await m.up(db, dialect);
            },
          };
        }
        return out;
      },
    },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  // PostgreSQL: planner statistics for every table when migrations ran, else for those missing (pg-stats.ts).
  await analyzeAfterMigrations(database.db, applied.length > 0);
  return applied;
}
