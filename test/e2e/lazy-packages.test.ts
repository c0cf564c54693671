// Packages that only some configurations need are loaded when first needed, not at start
// (src/util/on-use.ts): a SQLite server without Redis never holds pg, ioredis or undici, and holds
// sanitize-html only once a description with markup comes. Each is 1–5 MiB of the server's memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const CHILD = path.join(path.dirname(new URL(import.meta.url).pathname), 'lazy-packages.child.ts');

test('a SQLite server without Redis loads pg, ioredis, undici and sanitize-html only when it needs them', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, TEST_DB: 'sqlite', DATABASE_URL: '', REDIS_URL: '' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout) as { atStart: string[]; afterRequests: string[]; afterMarkup: string[]; sanitized: string };
  assert.deepEqual(report.atStart, [], 'loaded at start');
  assert.deepEqual(report.afterRequests, [], 'loaded by requests that do not need them');
  assert.deepEqual(report.afterMarkup, ['sanitize-html'], 'markup loads the sanitizer, and only it');
  assert.equal(report.sanitized, '<b>bold</b>', 'the sanitizer loaded on use sanitizes');
});
