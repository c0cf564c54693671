// A read process of the SQLite pool (db/sqlite-reader.ts) that runs a statement for longer than
// LOWER_PRIORITY_AFTER_MS drops to the lowest CPU priority until it answers, so a heavy scan yields the
// cores to the event loop and to other tenants' reads; the next statement runs at the starting priority
// again, by raising it back or, where the OS refuses that, in a fresh process. Priorities are read from
// the OS (`os.getPriority`); no time is asserted beyond "the statement is still running".
import { test, after, before, mock } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { LOWER_PRIORITY_AFTER_MS, SqliteReaderSlot } from '../../src/db/sqlite-reader.js';
import { DIALECT, scratchSqlite, type ScratchSqlite } from '../helpers/app.js';

const sqliteOnly = DIALECT !== 'sqlite' && 'SQLite only (PostgreSQL backends are not child processes of the server)';
const LOWEST = os.constants.priority.PRIORITY_LOW;

let scratch: ScratchSqlite;
let slot: SqliteReaderSlot;
before(async () => {
  if (sqliteOnly) return;
  scratch = scratchSqlite('crm-reader-');
  slot = new SqliteReaderSlot(scratch.file);
});
after(async () => {
  if (sqliteOnly) return;
  await slot.close();
  await scratch.remove();
});

/** Counts to `n` in SQL: tens of milliseconds per million on this kind of machine. */
const COUNT = 'with recursive c(x) as (select 1 union all select x + 1 from c where x < ?) select count(*) as n from c';

/** Runs a statement that lasts until `stop()`-ish: counts far enough to outlast a few checks, and reports its priority meanwhile. */
async function runLong(s: SqliteReaderSlot): Promise<{ during: number | undefined; rows: unknown[] }> {
  const running = s.run(COUNT, [6_000_000]);
  let during: number | undefined;
  let finished = false;
  void running.finally(() => (finished = true)).catch(() => {});
  // Wait well past the threshold, while the statement still runs, and read the process's priority.
  for (let waited = 0; waited < 5_000 && !finished; waited += 20) {
    await sleep(20);
    if (waited >= LOWER_PRIORITY_AFTER_MS * 3) {
      during = s.priority();
      break;
    }
  }
  assert.equal(finished, false, 'the statement ran longer than the checks (make COUNT larger on a faster machine)');
  return { during, rows: await running };
}

test('a statement that runs long drops to the lowest priority, and the next one runs at the starting priority', { skip: sqliteOnly }, async () => {
  assert.deepEqual(await slot.run('select 1 as one', []), [{ one: 1 }]);
  const base = slot.priority();
  assert.equal(typeof base, 'number');
  assert.notEqual(base, LOWEST, 'the process starts above the lowest priority');

  const lowered = slot.lowerings;
  const { during, rows } = await runLong(slot);
  assert.equal(during, LOWEST, 'lowered while the heavy statement runs');
  assert.deepEqual(rows, [{ n: 6_000_000 }], 'and it still answers in full');
  assert.equal(slot.lowerings, lowered + 1);

  assert.deepEqual(await slot.run('select 2 as two', []), [{ two: 2 }]);
  assert.equal(slot.priority(), base, 'back at the starting priority for the next statement');
});

test('short statements are never lowered', { skip: sqliteOnly }, async () => {
  const lowered = slot.lowerings;
  for (let i = 0; i < 50; i++) await slot.run(COUNT, [1_000]);
  assert.equal(slot.lowerings, lowered);
});

test('where the OS refuses to raise the priority back, the lowered process is replaced by a fresh one', { skip: sqliteOnly }, async () => {
  assert.deepEqual(await slot.run('select 1 as one', []), [{ one: 1 }]);
  const base = slot.priority();
  // An unprivileged server may lower its children but not raise them again (no CAP_SYS_NICE).
  const real = os.setPriority;
  const refuse = mock.method(os, 'setPriority', (pid: number, priority: number) => {
    if (priority < LOWEST) throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    real(pid, priority);
  });
  try {
    const { during, rows } = await runLong(slot);
    assert.equal(during, LOWEST);
    assert.deepEqual(rows, [{ n: 6_000_000 }]);
  } finally {
    refuse.mock.restore();
  }
  assert.deepEqual(await slot.run('select 3 as three', []), [{ three: 3 }], 'the replacement answers');
  assert.equal(slot.priority(), base, 'the replacement runs at the starting priority');
});
