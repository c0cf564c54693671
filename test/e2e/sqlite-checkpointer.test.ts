// WAL checkpoints of SQLite run on a thread of their own (src/db/sqlite-checkpointer.ts), never in the
// commit of a request on the main thread: the write connection's automatic checkpoints are off, and the
// database file still receives what was written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createDatabase, migrate, withTx } from '../../src/db/index.js';
import { DIALECT } from '../helpers/app.js';

test('SQLite: the write connection never checkpoints; the checkpointer thread copies the WAL into the database file', { skip: DIALECT !== 'sqlite' && 'SQLite only' }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-ckpt-'));
  const database = createDatabase({ databaseUrl: undefined, dataDir: dir }, { readers: 1 });
  try {
    await migrate(database);
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db);
    assert.equal(rows[0].wal_autocheckpoint, 0, 'the write connection does not checkpoint');

    const file = path.join(dir, 'crm.db');
    const before = statSync(file).size;
    const payload = 'x'.repeat(2_000);
    for (let b = 0; b < 10; b++) {
      await withTx(database.db, async (tx) => {
        await tx
          .insertInto('events')
          .values(Array.from({ length: 500 }, (_, i) => ({ tenant_id: 'ten_ckpt', id: `evt_${b}_${i}`, type: 'contact.updated', payload, created_at: new Date().toISOString() })))
          .execute();
      });
    }
    // About 10 MB went to the WAL; the checkpointer (every 200 ms) moves it into the database file.
    for (let i = 0; i < 50 && statSync(file).size - before < 8_000_000; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(statSync(file).size - before >= 8_000_000, `database file grew by ${statSync(file).size - before} bytes`);
    const r = await database.checkpoint!();
    assert.ok(r && r.busy === 0 && r.checkpointed === r.log, `nothing left to copy: ${JSON.stringify(r)}`);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
