// SQLITE_CACHE_MB (db/sqlite-open.ts cacheMib): unset, the writer's page cache is sized to the data (the file and
// a quarter more, 8 to 32 MiB), at start and again when the planner statistics are refreshed (hourly, as the data
// grows); set, it is that many MiB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { ConfigError } from '../../src/config.js';
import { createDatabase } from '../../src/db/index.js';
import { CACHE_MAX_MIB, CACHE_MIN_MIB, cacheMib } from '../../src/db/sqlite-open.js';
import { DIALECT, testConfig } from '../helpers/app.js';

const sqliteOnly = DIALECT !== 'sqlite' && 'SQLite only';
const MiB = 2 ** 20;

/** The writer's cache in MiB, as SQLite answers `PRAGMA cache_size` (negative: KiB). */
async function writerCacheMib(database: ReturnType<typeof createDatabase>): Promise<number> {
  const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(database.db);
  return -Number(rows[0].cache_size) / 1024;
}

test('cacheMib: the file and a quarter more, within 8 and 32 MiB; a setting wins', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-cache-'));
  try {
    const file = path.join(dir, 'f.db');
    assert.equal(cacheMib(0, file), CACHE_MIN_MIB, 'no file yet');
    writeFileSync(file, Buffer.alloc(1 * MiB));
    assert.equal(cacheMib(0, file), CACHE_MIN_MIB);
    writeFileSync(file, Buffer.alloc(16 * MiB));
    assert.equal(cacheMib(0, file), 20);
    writeFileSync(file, Buffer.alloc(100 * MiB));
    assert.equal(cacheMib(0, file), CACHE_MAX_MIB);
    assert.equal(cacheMib(100, file), 100);
    assert.equal(cacheMib(0, ':memory:'), CACHE_MIN_MIB);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('unset: the writer starts sized to its file, and is sized again as the data grows', { skip: sqliteOnly }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-cache-'));
  const database = createDatabase(testConfig({ DATA_DIR: dir }));
  try {
    assert.equal(await writerCacheMib(database), CACHE_MIN_MIB);
    await sql`create table t (x integer primary key, y blob)`.execute(database.db);
    await sql`insert into t (y) select zeroblob(4096) from (with recursive n(i) as (select 1 union all select i + 1 from n where i < 5000) select i from n)`.execute(
      database.db,
    );
    await sql`pragma wal_checkpoint(truncate)`.execute(database.db);
    await sql`analyze`.execute(database.db); // what optimize() refreshes (the migrations' tables have it)
    await database.optimize();
    const sized = await writerCacheMib(database);
    assert.ok(sized > CACHE_MIN_MIB && sized <= CACHE_MAX_MIB, `sized to ${sized} MiB after ~20 MiB of data`);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SQLITE_CACHE_MB=48: the writer caches 48 MiB whatever the data', { skip: sqliteOnly }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-cache-'));
  const database = createDatabase(testConfig({ DATA_DIR: dir, SQLITE_CACHE_MB: '48' }));
  try {
    assert.equal(await writerCacheMib(database), 48);
    await sql`analyze`.execute(database.db);
    await database.optimize();
    assert.equal(await writerCacheMib(database), 48);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SQLITE_CACHE_MB must be a whole number of MiB', () => {
  for (const bad of ['-1', '1.5', 'lots', '70000']) assert.throws(() => testConfig({ SQLITE_CACHE_MB: bad }), ConfigError, bad);
  assert.equal(testConfig({}).sqliteCacheMb, 0);
  assert.equal(testConfig({ SQLITE_CACHE_MB: '64' }).sqliteCacheMb, 64);
});
