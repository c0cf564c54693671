// First start (issue 50): `crm serve` ends its start-up with a banner — the base URL, the reference page and,
// when it provisioned the demo tenant, a ready `export KEY=… BASE=…` line whose key works. Logs are JSON lines
// when stderr is not a terminal, pretty one-line text when LOG_FORMAT=pretty (or on a terminal), and neither
// shows an API key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { CLI, freePort, IS_PG, serverStarter } from '../helpers/server.js';
import { scratch, waitUntil } from './cli.helpers.js';

const start = serverStarter();

const EXPORT_RE = /^ *export KEY=(crm_live_[0-9A-Za-z]{32,}) BASE=(http:\/\/\S+)$/m;

test(
  'first start on an empty embedded database: the banner gives the base URL, /docs and a working export line',
  { skip: IS_PG ? 'the demo tenant is SQLite only' : false, timeout: 120_000 },
  async () => {
    const s = await scratch({ CRM_NO_DEMO: 'false', LOG_LEVEL: 'info' });
    const server = await start(s.env);
    await waitUntil(async () => EXPORT_RE.test(server.stderr()), 10_000, 'the banner');
    const text = server.stderr();
    const [, key, base] = EXPORT_RE.exec(text)!;
    assert.equal(base, server.url, 'BASE is the server root the SDK and `listen` take');
    assert.ok(text.includes(`${server.url}/docs`), text);
    assert.ok(text.includes(`ready at ${server.url}`), text);
    assert.ok(text.includes('keys create --tenant ten_'), 'the banner says how to get another key');
    // The banner comes after the start-up logs, so it is what stays on screen.
    assert.ok(text.indexOf('export KEY=') > text.lastIndexOf('background workers started'), text);
    assert.ok(text.indexOf('export KEY=') > text.lastIndexOf('Server listening'), text);

    const r = await fetch(`${base}/api/v1/contacts`, { headers: { 'x-api-key': key } });
    assert.equal(r.status, 200);
    assert.ok(((await r.json()) as any).pagination.total > 0, 'the demo tenant has contacts');
    assert.equal((await fetch(`${base}/docs`)).status, 200);

    // Not a terminal: JSON lines, and the key only in the banner, never in a log line.
    await waitUntil(async () => server.stderr().includes('"request completed"'), 5_000, 'the request log');
    const logLines = server
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    assert.ok(logLines.length > 0 && logLines.every((l) => JSON.parse(l).level >= 10), 'JSON log lines');
    assert.ok(!logLines.some((l) => l.includes('crm_live_')), 'no key in a log line');
    assert.equal(await server.stop(), 0, server.stderr().slice(-4000));

    // A second start provisions nothing: the banner has the URLs and no key.
    const again = await start(s.env);
    await waitUntil(async () => again.stderr().includes('/docs'), 10_000, 'the banner');
    assert.doesNotMatch(again.stderr(), /export KEY=|crm_live_/);
    assert.equal(await again.stop(), 0);
  },
);

test('LOG_FORMAT=pretty: one short line a request, no JSON, no key; the banner without a demo key', { timeout: 60_000 }, async () => {
  const s = await scratch({ LOG_FORMAT: 'pretty', LOG_LEVEL: 'info' });
  const server = await start(s.env);
  await waitUntil(async () => server.stderr().includes(`${server.url}/docs`), 10_000, 'the banner');
  const key = 'crm_live_' + 'Q'.repeat(40);
  const r = await fetch(`${server.url}/api/v1/contacts?api_key=${key}&page=2`, { headers: { 'x-api-key': key, authorization: `Bearer ${key}` } });
  assert.equal(r.status, 401);
  await waitUntil(async () => /→ 401/.test(server.stderr()), 5_000, 'the request line');
  const text = server.stderr();
  assert.doesNotMatch(text, /crm_live_/, 'no key in pretty logs');
  assert.doesNotMatch(text, /^\{"level"/m, 'no JSON line');
  assert.doesNotMatch(text, /export KEY=/, 'no demo key without a demo tenant');
  const requestLines = text.split('\n').filter((l) => l.includes('/api/v1/contacts'));
  assert.equal(requestLines.length, 1, `one line for the request: ${text}`);
  assert.match(requestLines[0], /INFO.*GET \/api\/v1\/contacts\?api_key=\[redacted\]&page=2 → 401 in \d+\.\d ms$/);
  assert.ok(text.includes('Server listening'), 'start-up logs are shown too');
  assert.equal(await server.stop(), 0);
});

test('an invalid LOG_FORMAT stops the start with a message naming it', () => {
  const r = spawnSync(process.execPath, [CLI, 'serve'], { env: { ...process.env, LOG_FORMAT: 'fancy' }, encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.equal(JSON.parse(r.stdout).error, 'invalid_config');
  assert.match(JSON.parse(r.stdout).message, /LOG_FORMAT/);
});

test(
  'on a terminal (LOG_FORMAT unset) logs are pretty text',
  { skip: existsSync('/usr/bin/script') ? false : 'needs util-linux script(1) for a pseudo-terminal', timeout: 60_000 },
  async () => {
    const s = await scratch({ LOG_LEVEL: 'info', LOG_FORMAT: '' });
    const port = await freePort();
    // script(1) runs the server with a pseudo-terminal as its stdout and stderr, and copies what it writes.
    const proc = spawn('/usr/bin/script', ['-qfec', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} serve`, '/dev/null'], {
      env: { ...s.env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout!.on('data', (d) => (out += d));
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    try {
      await waitUntil(async () => out.includes(`/docs`), 20_000, 'the banner');
      await fetch(`http://127.0.0.1:${port}/api/v1/contacts`);
      await waitUntil(async () => out.includes('→ 401'), 5_000, 'the request line');
      assert.doesNotMatch(out, /\{"level":/, 'no JSON line on a terminal');
    } finally {
      proc.kill('SIGTERM');
      await exited;
    }
  },
);
