// Creates with customProperties commit together on SQLite (sqlite-fast-driver.ts: group commit). The property
// definitions a create checks its values against are read in its transaction: read before it, as a statement of
// their own, they first committed the group the create was about to join, so that every create paid its own COMMIT
// (and ~15 pages written to the WAL) and its own read transaction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import SqliteDatabase from '../../src/db/sqlite-driver.mjs';
import { DIALECT, newTenant, testApp } from '../helpers/app.js';

const sqliteOnly = DIALECT !== 'sqlite' && 'SQLite only (its writer commits the transactions of a turn together)';

/** Counts the statements better-sqlite3 runs, by SQL text, while `fn` runs. */
async function countStatements(fn: () => Promise<unknown>): Promise<Map<string, number>> {
  const proto = Object.getPrototypeOf(new SqliteDatabase(':memory:').prepare('select 1')) as Record<'run' | 'all' | 'get', (...a: unknown[]) => unknown>;
  const counts = new Map<string, number>();
  const originals = (['run', 'all', 'get'] as const).map((m) => [m, proto[m]] as const);
  for (const [m, original] of originals) {
    proto[m] = function (this: { source: string }, ...args: unknown[]) {
      counts.set(this.source, (counts.get(this.source) ?? 0) + 1);
      return original.apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    for (const [m, original] of originals) proto[m] = original;
  }
  return counts;
}

test('concurrent creates with customProperties share their COMMITs: the definitions are read in each transaction', { skip: sqliteOnly }, async () => {
  const t = await testApp();
  const tenant = await newTenant(t);
  const select = tenant.refs.contact_select;
  const flag = tenant.refs.contact_boolean;
  const creates = 20;
  const counts = await countStatements(() =>
    Promise.all(
      Array.from({ length: creates }, async (_, i) => {
        const r = await tenant.api.post('/contacts', { firstName: `C${i}`, email: `c${i}@group.test`, customProperties: { [select]: 'smb', [flag]: true } });
        assert.equal(r.status, 201, JSON.stringify(r.body));
      }),
    ),
  );
  const groups = counts.get('begin immediate') ?? 0;
  const readTransactions = counts.get('begin') ?? 0;
  assert.ok(groups >= 1 && groups <= creates / 4, `${creates} concurrent creates opened ${groups} groups (each its own before the fix)`);
  // The key's first lookup may read outside a transaction; no create does (one read transaction each before the fix).
  assert.ok(readTransactions <= creates / 4, `${readTransactions} read transactions for ${creates} creates`);
});

test('concurrent updates with customProperties share their COMMITs too', { skip: sqliteOnly }, async () => {
  const t = await testApp();
  const tenant = await newTenant(t);
  const select = tenant.refs.contact_select;
  const updates = 20;
  const ids: string[] = [];
  for (let i = 0; i < updates; i++) ids.push((await tenant.api.post('/contacts', { firstName: `U${i}` })).body.id);
  const counts = await countStatements(() =>
    Promise.all(
      ids.map(async (id, i) => {
        const r = await tenant.api.patch(`/contacts/${id}`, { customProperties: { [select]: i % 2 ? 'smb' : 'ent' } });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }),
    ),
  );
  const groups = counts.get('begin immediate') ?? 0;
  assert.ok(groups >= 1 && groups <= updates / 4, `${updates} concurrent updates opened ${groups} groups`);
  assert.ok((counts.get('begin') ?? 0) <= updates / 4, 'no update read its definitions outside its transaction');
});
