// The embedded database holds every tenant's records: its directory and files are the owner's alone.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createDatabase, migrate } from '../../src/db/index.js';

const mode = (p: string) => statSync(p).mode & 0o777;

test('a new DATA_DIR is 0700 and crm.db, its WAL files and secret.key are 0600', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'crm-perm-'));
  try {
    const dataDir = path.join(root, 'data');
    const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: '' });
    const database = createDatabase(config);
    await migrate(database);
    config.secretKey();
    assert.equal(mode(dataDir), 0o700);
    for (const f of ['crm.db', 'crm.db-wal', 'crm.db-shm', 'secret.key']) assert.equal(mode(path.join(dataDir, f)), 0o600, f);
    await database.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('an existing world-readable database and directory are made owner-only at start', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'crm-perm-'));
  try {
    const dataDir = path.join(root, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(path.join(dataDir, 'crm.db'), '', { mode: 0o644 });
    chmodSync(path.join(dataDir, 'crm.db'), 0o644);
    const database = createDatabase(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: '' }));
    await migrate(database);
    assert.equal(mode(dataDir), 0o700);
    for (const f of ['crm.db', 'crm.db-wal', 'crm.db-shm']) assert.equal(mode(path.join(dataDir, f)), 0o600, f);
    await database.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
