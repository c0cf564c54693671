// Issue 47 (3), with the real process on the dialect of this pass: after creating a webhook and rotating its
// secret with an Idempotency-Key (as the SDK sends on every POST), and paging contacts sorted by e-mail with
// cursors, no webhook secret is anywhere in the database (SQLite: the file and the WAL, before and after a
// checkpoint; PostgreSQL: every text, JSON and binary column of every table), and the server's logs (info)
// hold neither the secret nor any contact's e-mail. Idempotent replays still answer the secret, byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { cli, IS_PG, serverStarter } from '../helpers/server.js';
import { sampleSetup, scratch, type Scratch } from './cli.helpers.js';

const start = serverStarter();

/** Every byte of the embedded database: the main file and the write-ahead log, as they are now. */
function sqliteBytes(s: Scratch): { file: Buffer; wal: Buffer } {
  const file = path.join(s.dataDir, 'crm.db');
  const read = (f: string) => (existsSync(f) ? readFileSync(f) : Buffer.alloc(0));
  return { file: read(file), wal: read(`${file}-wal`) };
}

/** `table.column` of every PostgreSQL column of the schema whose text (or bytes) holds `needle`. */
async function postgresColumnsHolding(s: Scratch, needle: string): Promise<{ found: string[]; scanned: number }> {
  const db = s.db().db;
  const { rows } = await sql<{ table_name: string; column_name: string; data_type: string }>`
    select c.table_name, c.column_name, c.data_type from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
      and c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'ARRAY', 'USER-DEFINED')`.execute(db);
  const found: string[] = [];
  for (const { table_name, column_name, data_type } of rows) {
    const column = sql.id(column_name);
    const holds =
      data_type === 'bytea' ? sql<boolean>`position(convert_to(${needle}, 'UTF8') in ${column}) > 0` : sql<boolean>`position(${needle} in ${column}::text) > 0`;
    const hit = await sql<{ n: number }>`select 1 as n from ${sql.id(table_name)} where ${holds} limit 1`.execute(db);
    if (hit.rows.length > 0) found.push(`${table_name}.${column_name}`);
  }
  return { found, scanned: rows.length };
}

test('webhook secrets and sorted e-mails stay sealed: database bytes, every table, logs; replays byte-identical', { timeout: 120_000 }, async () => {
  const s = await scratch({ LOG_LEVEL: 'info' });
  const setup = cli(['setup', 'apply', s.file('setup.json', sampleSetup('Sealed e2e'))], s.env);
  assert.equal(setup.status, 0, setup.stdout + setup.stderr);
  const server = await start(s.env);
  let stdout = '';
  server.proc.stdout!.on('data', (d) => (stdout += d));
  const headers = { 'x-api-key': setup.json.apiKeys.full as string, 'content-type': 'application/json' };
  const call = (method: string, url: string, body?: unknown, idem?: string) =>
    fetch(`${server.url}/api/v1${url}`, {
      method,
      headers: idem ? { ...headers, 'idempotency-key': idem } : headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  // Contacts with e-mails, created as the SDK does (an Idempotency-Key each).
  const emails = Array.from({ length: 5 }, (_, i) => `sealed.person.${i}.${process.pid}@privacy-probe.test`);
  for (const [i, email] of emails.entries()) assert.equal((await call('POST', '/contacts', { firstName: `Sealed${i}`, email }, `contact-${i}`)).status, 201);

  // A webhook created, then its secret rotated, each with an Idempotency-Key, each replayed.
  const hookBody = { name: 'Sealed', url: 'https://example.test/hook', events: ['deal.won'] };
  const created = await call('POST', '/webhooks', hookBody, 'hook-create-1');
  assert.equal(created.status, 201);
  const createdText = await created.text();
  const hook = JSON.parse(createdText);
  const rotate = () => call('POST', `/webhooks/${hook.id}/rotate-secret`, undefined, 'hook-rotate-1');
  const rotated = await rotate();
  assert.equal(rotated.status, 200);
  const rotatedText = await rotated.text();
  const secrets: string[] = [hook.secret, JSON.parse(rotatedText).secret];
  for (const secret of secrets) assert.match(secret, /^whsec_[A-Za-z0-9+/=]{32}$/);
  assert.notEqual(secrets[0], secrets[1]);
  for (const [again, text] of [
    [await call('POST', '/webhooks', hookBody, 'hook-create-1'), createdText],
    [await rotate(), rotatedText],
  ] as const) {
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(await again.text(), text, 'the replay is the first answer, byte for byte');
  }

  // Contacts sorted by e-mail, page by page with cursors (in the URL: logged), and the same by the search body.
  const cursors: string[] = [];
  let url = '/contacts?sortKey=email&sortOrder=asc&pageSize=2';
  const seen: string[] = [];
  for (;;) {
    const page = await call('GET', url);
    assert.equal(page.status, 200);
    const { data, pagination } = (await page.json()) as any;
    seen.push(...data.map((c: any) => c.email));
    if (!pagination.nextCursor) break;
    cursors.push(pagination.nextCursor);
    url = `/contacts?sortKey=email&sortOrder=asc&pageSize=2&cursor=${encodeURIComponent(pagination.nextCursor)}`;
  }
  assert.deepEqual(seen, [...emails].sort());
  const search = (cursor?: string) => call('POST', '/contacts/search', { sortKey: 'email', sortOrder: 'desc', pageSize: 2, ...(cursor ? { cursor } : {}) });
  const s1 = (await (await search()).json()) as any;
  cursors.push(s1.pagination.nextCursor);
  assert.equal((await search(s1.pagination.nextCursor)).status, 200);
  assert.ok(cursors.length >= 3);

  // A cursor carries no readable value: neither as text nor once its parts are decoded.
  for (const cursor of cursors) {
    const decoded = [cursor, ...cursor.split('.')].map((p) => Buffer.from(p, 'base64url').toString('latin1')).join('\n');
    for (const email of emails) assert.ok(!cursor.includes(email) && !decoded.includes(email), `cursor ${cursor} carries ${email}`);
    assert.ok(!decoded.includes('privacy-probe') && !decoded.includes('sealed.person'), `cursor ${cursor} carries part of an e-mail`);
  }

  // The database, while the server runs and after it stops (SIGTERM: its connections close, SQLite checkpoints).
  const needles = [...secrets, ...secrets.map((x) => x.slice('whsec_'.length))];
  await assertSealed(s, needles, 'while running');
  assert.equal(await server.stop(), 0);
  await assertSealed(s, needles, 'after the server stopped');
  if (!IS_PG) {
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(s.db().db);
    await assertSealed(s, needles, 'after a checkpoint');
  }

  // The logs: requests are logged (URL with the cursor, opaque), never a secret or an e-mail.
  const logs = server.stderr() + stdout;
  assert.ok(logs.includes('/api/v1/contacts?sortKey=email'), 'request URLs are logged at info');
  assert.ok(
    cursors.slice(0, 2).some((c) => logs.includes(c) || logs.includes(encodeURIComponent(c))),
    'cursors appear in the logged URLs',
  );
  for (const needle of [...needles, ...emails, 'privacy-probe']) assert.ok(!logs.includes(needle), `the logs hold ${needle}`);
});

async function assertSealed(s: Scratch, needles: string[], when: string): Promise<void> {
  if (IS_PG) {
    for (const needle of needles) {
      const { found, scanned } = await postgresColumnsHolding(s, needle);
      assert.ok(scanned > 20, `${scanned} columns scanned`);
      assert.deepEqual(found, [], `${when}: ${needle.slice(0, 10)}… is stored in ${found.join(', ')}`);
    }
    return;
  }
  const { file, wal } = sqliteBytes(s);
  assert.ok(file.length > 0, 'the database file is read');
  for (const needle of needles) {
    assert.equal(file.indexOf(needle), -1, `${when}: ${needle.slice(0, 10)}… is in the database file`);
    assert.equal(wal.indexOf(needle), -1, `${when}: ${needle.slice(0, 10)}… is in the WAL (${wal.length} bytes)`);
  }
}
