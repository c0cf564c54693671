// Issue 47 (5), with the real process: another process holds the SQLite file's write lock (`BEGIN IMMEDIATE`,
// as `crm worker` or the CLI may) for 15 s. Meanwhile `/healthz` and reads answer fast, every write answers
// 503 database_unavailable with Retry-After at its deadline (QUERY_TIMEOUT_MS, 2 s here), never a hang; once
// the lock is released writes succeed within a short time, and no acknowledged write is lost. A CLI write
// against the locked file fails with database_unavailable at its deadline instead of hanging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import type BetterSqlite from 'better-sqlite3';
import SqliteDatabase from '../../src/db/sqlite-driver.mjs';
import { CLI, IS_PG, cli, serverStarter } from '../helpers/server.js';
import { sampleSetup, scratch, sleep } from './cli.helpers.js';

const skip = IS_PG && 'SQLite only (the write lock of a database file shared by several processes)';
const start = serverStarter();
const HOLD_MS = 15_000;
const DEADLINE_MS = 2_000;
/** A request with no answer by then hung. */
const HANG_MS = 10_000;

interface Seen {
  what: string;
  status: number;
  ms: number;
  at: number;
  error?: string;
  retryAfter?: string | null;
  id?: string;
  email?: string;
}

const summary = (rows: Seen[]) => {
  const by = new Map<string, number[]>();
  for (const r of rows) {
    const key = `${r.what} ${r.status}${r.error ? ' ' + r.error : ''}`;
    by.set(key, [...(by.get(key) ?? []), r.ms]);
  }
  return [...by].map(([k, ms]) => `${k}: ${ms.length}× ${Math.min(...ms).toFixed(0)}–${Math.max(...ms).toFixed(0)} ms`).join('; ');
};

test('a foreign write lock held 15 s: /healthz and reads answer fast, writes 503 at their deadline, then go on', { skip, timeout: 120_000 }, async (t) => {
  const s = await scratch({ QUERY_TIMEOUT_MS: String(DEADLINE_MS) });
  const setup = cli(['setup', 'apply', s.file('setup.json', sampleSetup('Foreign lock'))], s.env);
  assert.equal(setup.status, 0, setup.stdout + setup.stderr);
  const apiKey = setup.json.apiKeys.full as string;
  const server = await start(s.env);
  const t0 = performance.now();
  const call = async (what: string, method: string, url: string, body?: unknown): Promise<Seen> => {
    const at = performance.now() - t0;
    try {
      const r = await fetch(`${server.url}${url}`, {
        method,
        headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(HANG_MS),
      });
      const json = (await r.json()) as { id?: string; error?: string };
      return { what, status: r.status, ms: performance.now() - t0 - at, at, error: json.error, retryAfter: r.headers.get('retry-after'), id: json.id };
    } catch (err) {
      // No answer within HANG_MS (or none at all): recorded, and refused by the assertions below.
      return { what, status: 0, ms: performance.now() - t0 - at, at, error: (err as Error).name };
    }
  };
  let n = 0;
  const create = async () => {
    const email = `lock-${n++}@lock.test`;
    return { ...(await call('POST /contacts', 'POST', '/api/v1/contacts', { firstName: 'Lock', email })), email };
  };
  const first = await create();
  assert.equal(first.status, 201);

  const other: BetterSqlite.Database = new SqliteDatabase(path.join(s.dataDir, 'crm.db'));
  const seen: Seen[] = [];
  let holding = true;
  let releasedAt = Infinity;
  other.exec('begin immediate');
  const lockedAt = performance.now() - t0;
  try {
    const loop = async (every: number, fn: () => Promise<Seen>) => {
      while (holding) {
        seen.push(await fn());
        await sleep(every);
      }
    };
    const loops = [
      loop(100, () => call('GET /healthz', 'GET', '/healthz')),
      loop(200, () => call('GET /contacts/:id', 'GET', `/api/v1/contacts/${first.id}`)),
      loop(300, () => call('GET /contacts', 'GET', '/api/v1/contacts?pageSize=10')),
      // Three clients writing at once: each write waits for the lock until its deadline.
      ...[0, 1, 2].map(() => loop(0, create)),
    ];
    await sleep(HOLD_MS);
    holding = false;
    other.exec('commit');
    releasedAt = performance.now() - t0;
    await Promise.all(loops);
  } finally {
    if (other.inTransaction) other.exec('rollback');
    other.close();
  }
  // After the release a new write goes through at once.
  const afterRelease = await create();
  const recoveryMs = afterRelease.at + afterRelease.ms - releasedAt;
  t.diagnostic(
    `lock held ${((releasedAt - lockedAt) / 1000).toFixed(1)} s; ${summary(seen)}; first write after the release: ${afterRelease.status} in ${afterRelease.ms.toFixed(0)} ms (${recoveryMs.toFixed(0)} ms after the release)`,
  );

  const during = seen.filter((r) => r.at + r.ms < releasedAt);
  for (const r of during.filter((x) => x.what === 'GET /healthz')) assert.ok(r.status === 200 && r.ms < 200, `/healthz: ${r.status} in ${r.ms.toFixed(0)} ms`);
  for (const r of during.filter((x) => x.what.startsWith('GET /contacts')))
    assert.ok(r.status === 200 && r.ms < 500, `${r.what}: ${r.status} in ${r.ms.toFixed(0)} ms`);
  const writes = during.filter((x) => x.what === 'POST /contacts');
  assert.ok(writes.length >= 15, `${writes.length} writes answered while the lock was held`);
  for (const w of writes) {
    assert.equal(w.status, 503, `a write while the lock was held: ${w.status} ${w.error}`);
    assert.equal(w.error, 'database_unavailable');
    assert.equal(w.retryAfter, '1');
    assert.ok(w.ms >= DEADLINE_MS - 50 && w.ms < DEADLINE_MS + 1_000, `answered after ${w.ms.toFixed(0)} ms (deadline ${DEADLINE_MS})`);
  }
  assert.ok(seen.filter((x) => x.what === 'GET /healthz').length >= 50, 'healthz was polled all along');
  // The writes in flight at the release, and the next one, go through.
  for (const w of seen.filter((x) => x.what === 'POST /contacts' && x.at + x.ms >= releasedAt)) {
    assert.ok(w.status === 201 || w.error === 'database_unavailable', `a write across the release: ${w.status} ${w.error}`);
  }
  assert.equal(afterRelease.status, 201);
  assert.ok(recoveryMs < 1_000, `the first write after the release answered ${recoveryMs.toFixed(0)} ms after it`);

  // Nothing acknowledged is lost, nothing refused was written.
  const rows = await s.db().db.selectFrom('contacts').select(['id', 'email']).execute();
  const stored = new Set(rows.map((r) => r.email));
  for (const w of [first, ...seen, afterRelease].filter((x) => x.what === 'POST /contacts')) {
    assert.equal(stored.has(w.email!), w.status === 201, `${w.email} answered ${w.status}`);
  }
});

test('a CLI write against a file another process holds locked fails with database_unavailable at its deadline', { skip, timeout: 60_000 }, async () => {
  const s = await scratch({ QUERY_TIMEOUT_MS: String(DEADLINE_MS) });
  const setup = cli(['setup', 'apply', s.file('setup.json', sampleSetup('Foreign lock CLI'))], s.env);
  assert.equal(setup.status, 0, setup.stdout + setup.stderr);
  const other: BetterSqlite.Database = new SqliteDatabase(path.join(s.dataDir, 'crm.db'));
  other.exec('begin immediate');
  try {
    // Spawned, not spawnSync: this process must go on holding the lock (and could release it) meanwhile.
    const t0 = performance.now();
    const child = spawn(process.execPath, [CLI, 'keys', 'create', '--tenant', setup.json.tenantId, '--name', 'locked', '--scopes', 'contacts:read'], {
      env: s.env,
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    const ms = performance.now() - t0;
    assert.equal(code, 1, out);
    assert.equal(JSON.parse(out).error, 'database_unavailable', out);
    assert.ok(ms < DEADLINE_MS + 3_000, `the CLI answered after ${ms.toFixed(0)} ms`);
  } finally {
    other.exec('rollback');
    other.close();
  }
  const ok = cli(['keys', 'create', '--tenant', setup.json.tenantId, '--name', 'free', '--scopes', 'contacts:read'], s.env);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
});
