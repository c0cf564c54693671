// SQLITE_MMAP_MB (db/index.ts): off by default; when set, the main connection and every read process of the
// pool map that much of the database file (`PRAGMA mmap_size`), and reads through the map answer as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { ConfigError } from '../../src/config.js';
import { createDatabase } from '../../src/db/index.js';
import { DIALECT, testConfig } from '../helpers/app.js';

const sqliteOnly = DIALECT !== 'sqlite' && 'SQLite only';

async function withDatabase(env: Record<string, string>, fn: (database: ReturnType<typeof createDatabase>) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-mmap-'));
  const database = createDatabase(testConfig({ DATA_DIR: dir, ...env }));
  try {
    await fn(database);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function mainMmap(database: ReturnType<typeof createDatabase>): Promise<number> {
  const { rows } = await sql<{ mmap_size: number }>`pragma mmap_size`.execute(database.db);
  return Number(rows[0].mmap_size);
}

/** `PRAGMA mmap_size` as each read process answers it: more statements at once than the pool has processes. */
async function poolMmap(database: ReturnType<typeof createDatabase>): Promise<number[]> {
  assert.ok(database.readPool, 'a file database has a read pool');
  const answers = await Promise.all(Array.from({ length: 8 }, () => database.readPool!.run('t', 'pragma mmap_size', [])));
  return answers.map((rows) => Number((rows[0] as { mmap_size: number }).mmap_size));
}

test('SQLITE_MMAP_MB: unset maps nothing, on the main connection and in the read processes', { skip: sqliteOnly }, async () => {
  await withDatabase({}, async (database) => {
    assert.equal(await mainMmap(database), 0);
    for (const n of await poolMmap(database)) assert.equal(n, 0);
  });
});

test('SQLITE_MMAP_MB=64 maps 64 MiB on the main connection and in every read process, and reads answer as before', { skip: sqliteOnly }, async () => {
  await withDatabase({ SQLITE_MMAP_MB: '64' }, async (database) => {
    assert.equal(await mainMmap(database), 64 * 1024 * 1024);
    for (const n of await poolMmap(database)) assert.equal(n, 64 * 1024 * 1024);
    await sql`create table t (x integer primary key, y text)`.execute(database.db);
    await sql`insert into t (x, y) values (1, 'one'), (2, 'two')`.execute(database.db);
    const { rows } = await sql<{ y: string }>`select y from t order by x`.execute(database.db);
    assert.deepEqual(
      rows.map((r) => r.y),
      ['one', 'two'],
    );
    const pooled = await database.readPool!.run('t', 'select y from t order by x', []);
    assert.deepEqual(
      (pooled as { y: string }[]).map((r) => r.y),
      ['one', 'two'],
    );
  });
});

test('SQLITE_MMAP_MB must be a whole number of MiB', () => {
  for (const bad of ['-1', '1.5', 'lots', '2000000']) assert.throws(() => testConfig({ SQLITE_MMAP_MB: bad }), ConfigError, bad);
  assert.equal(testConfig({ SQLITE_MMAP_MB: '0' }).sqliteMmapMb, 0);
  assert.equal(testConfig({ SQLITE_MMAP_MB: '4096' }).sqliteMmapMb, 4096);
});
