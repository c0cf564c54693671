// What the data layer keeps per transaction (db/index.ts: afterCommit hooks, oncePerTransaction facts, deferred
// writes; db/prepared.ts: the SQLite statement runner) is dropped as soon as the transaction ends, committed or
// rolled back, through withTx and through openTransaction. The entries are weak, but V8's scavenges keep the
// values of weak entries whose keys they have not yet found dead, so leaving them to the GC made every write's
// state survive a scavenge (db/index.ts forgetTransaction).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  afterCommit,
  deferWrite,
  heldTransactionState,
  oncePerTransaction,
  openTransaction,
  withTx,
  type Db,
  type DeferredWrites,
} from '../../src/db/index.js';
import { prepared } from '../../src/db/prepared.js';
import { testApp } from '../helpers/app.js';

const t = await testApp();
const tenantById = prepared((db: Db, id: string) => db.selectFrom('tenants').select('id').where('id', '=', id));
const nothing: DeferredWrites<number> = { flush: async () => {} };

/** Uses every piece of per-transaction state, then answers what is held for `tx` at that moment. */
async function useState(tx: Db): Promise<string[]> {
  await tenantById(tx, 'no-such-tenant');
  await oncePerTransaction(tx, 'fact', async () => {});
  await deferWrite(tx, nothing, 1);
  afterCommit(tx, 'hook', () => {});
  return heldTransactionState(tx);
}

const expectedWhileOpen = (dialect: string) => ['commitHooks', 'txFacts', 'deferred', ...(dialect === 'sqlite' ? ['directRunner'] : [])];

test('withTx drops the state of a transaction once it has committed', async () => {
  let kept: Db | undefined;
  let whileOpen: string[] = [];
  await withTx(t.database.db, async (tx) => {
    kept = tx;
    whileOpen = await useState(tx);
  });
  assert.deepEqual(whileOpen, expectedWhileOpen(t.database.dialect.name), 'the test uses every piece of state');
  assert.deepEqual(heldTransactionState(kept!), []);
});

test('withTx drops the state of a transaction that failed', async () => {
  let kept: Db | undefined;
  await assert.rejects(
    withTx(t.database.db, async (tx) => {
      kept = tx;
      await useState(tx);
      throw new Error('undo');
    }),
    /undo/,
  );
  assert.deepEqual(heldTransactionState(kept!), []);
});

test('openTransaction drops the state of a transaction once committed or rolled back', async () => {
  for (const end of ['commit', 'rollback'] as const) {
    const open = await openTransaction(t.database.db);
    assert.deepEqual(await useState(open.tx), expectedWhileOpen(t.database.dialect.name));
    await open[end]();
    assert.deepEqual(heldTransactionState(open.tx), [], end);
  }
});
