// Gives the PostgreSQL pass a clean schema, then migrates once before the test files start.
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { createDatabase, migrate } from '../../src/db/index.js';

const url = process.env.DATABASE_URL!;
const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query('drop schema if exists public cascade');
await client.query('create schema public');
await client.end();
const database = createDatabase(loadConfig({ DATABASE_URL: url }));
await migrate(database);
await database.close();
