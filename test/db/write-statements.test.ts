// What a write's transaction sends to PostgreSQL, statement by statement (plans and texts, never times).
//
// Every writer of a tenant waits for the others twice: on the event log's advisory lock (db/event-log.ts)
// and on the tenant's rows of `change_versions` and `list_dirty` (modules/shared/changes.ts). Both are
// held to the commit, so the statements sent after the first of them set how many writes of one tenant
// commit a second. A create of a contact therefore ends with:
//   1. the event's lock, insert and NOTIFY, in one statement (insertLoggedEvent);
//   2. both change marks, in one statement (a data-modifying WITH), flushed after every other deferred write;
//   3. the commit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { postgres } from '../../src/db/pg-module.js';
import { DIALECT, newTenant, testApp } from '../helpers/app.js';

/** Statements sent while recording, with the session that sent them. */
const sent: { client: object; text: string }[] = [];
let recording = false;
if (DIALECT === 'postgres') {
  // Before the app opens its sessions: each session's own `query` (prepared.ts useNamedStatements) calls this one.
  const proto = postgres().Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: pg.Client, text: unknown, ...rest: unknown[]) {
    if (recording) sent.push({ client: this, text: typeof text === 'string' ? text : String((text as { text?: string })?.text ?? '') });
    return query.call(this, text, ...rest);
  };
}

const t = await testApp();

/** The statements of the transaction that ran `marker`, from its BEGIN to its COMMIT. */
async function transactionOf(fn: () => Promise<unknown>, marker: RegExp): Promise<string[]> {
  sent.length = 0;
  recording = true;
  try {
    await fn();
  } finally {
    recording = false;
  }
  const hit = sent.find((s) => marker.test(s.text));
  assert.ok(hit, `a statement matching ${marker} was sent`);
  const mine = sent.filter((s) => s.client === hit.client).map((s) => s.text.replace(/\s+/g, ' ').trim());
  const at = mine.findIndex((s) => marker.test(s));
  const begin = mine.lastIndexOf('begin', at);
  const commit = mine.indexOf('commit', at);
  assert.ok(begin >= 0 && commit > at, mine.join('\n'));
  return mine.slice(begin, commit + 1);
}

test(`a write ends with its event (and its audit entry) in one statement, then its change marks in one, then the commit (${DIALECT})`, async (c) => {
  if (DIALECT !== 'postgres') return c.skip("PostgreSQL's statements (SQLite runs them in process, one writer at a time)");
  const { api, refs } = await newTenant(t);
  await api.post('/contacts', { firstName: 'Warm' });

  for (const [name, write] of [
    ['POST /contacts', () => api.post('/contacts', { firstName: 'Ana', email: 'ana@example.com' })],
    [
      'PATCH /contacts/:id',
      async () => {
        const { id } = (await api.post('/contacts', { firstName: 'Bea' })).body;
        sent.length = 0;
        return api.patch(`/contacts/${id}`, { lastName: 'Lima' });
      },
    ],
    ['POST /deals', () => api.post('/deals', { title: 'D', pipelineId: refs.sales, stageId: refs.lead })],
  ] as const) {
    const tx = await transactionOf(async () => assert.ok([200, 201].includes((await write()).status)), /insert into "events"|insert into events/);
    const n = tx.length;
    const locks = tx.filter((s) => /pg_advisory_xact_lock/.test(s));
    assert.equal(locks.length, 1, `${name}: one statement takes the log's lock\n${tx.join('\n')}`);
    assert.match(locks[0], /insert into events/, `${name}: the lock and the insert are one statement`);
    assert.match(locks[0], /pg_notify/, `${name}: and the NOTIFY of the log's readers`);
    assert.equal(tx.filter((s) => /pg_notify/.test(s)).length, 1, `${name}: one NOTIFY`);
    // D.4: the change's audit entry is written by the event's statement, not by one of its own.
    assert.match(locks[0], /insert into "audit_log"/, `${name}: the audit entry rides with the event\n${tx.join('\n')}`);
    assert.equal(tx.filter((s) => /audit_log/.test(s)).length, 1, `${name}: one statement writes the audit log`);
    assert.equal(tx[n - 1], 'commit');
    assert.match(tx[n - 2], /insert into list_dirty .* insert into change_versions/, `${name}: the change marks, in one statement, last\n${tx.join('\n')}`);
    assert.equal(tx[n - 3], locks[0], `${name}: right after the event\n${tx.join('\n')}`);
    assert.equal(tx.filter((s) => /change_versions|list_dirty/.test(s)).length, 1, `${name}: marked once`);
  }
});
