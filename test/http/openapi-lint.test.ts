// Issue 10 item 4: the OpenAPI document passes an OpenAPI 3.1 linter from the npm registry (Redocly CLI,
// its recommended rules) with no errors, and every operation has a unique operationId (errors.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { testApp } from '../helpers/app.js';

const t = await testApp();
const REDOCLY = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

function lint(doc: unknown): {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
} {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-lint-'));
  try {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    // No network: no telemetry, no update check (the machine's network is closed).
    const r = spawnSync(process.execPath, [REDOCLY, 'lint', file, '--format=json'], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' },
    });
    assert.ok(r.stdout.trim().startsWith('{'), `redocly printed no report: ${r.stderr.slice(0, 2000)}`);
    return JSON.parse(r.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the OpenAPI document passes `redocly lint` (recommended rules) with no errors', async () => {
  const doc = JSON.parse((await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body);
  const report = lint(doc);
  const errors = report.problems.filter((p) => p.severity === 'error');
  assert.deepEqual(
    errors.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`),
    [],
  );
  assert.equal(report.totals.errors, 0);

  // The linter does catch a broken document (so the check above can fail).
  const broken = structuredClone(doc);
  broken.paths['/api/v1/contacts'].get.operationId = broken.paths['/api/v1/contacts'].post.operationId;
  assert.ok(lint(broken).problems.some((p) => p.severity === 'error' && p.ruleId === 'operation-operationId-unique'));
});
