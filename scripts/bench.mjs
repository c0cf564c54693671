#!/usr/bin/env node
// `npm run bench [-- options]`: builds dist/, runs the HTTP load scenarios (bench/run.ts), then the webhook
// throughput bench (bench/webhooks.ts) when present (`--no-webhooks` skips it) and CONTRACT Part D at scale
// (bench/data-care.ts: duplicates, merge and the audit log's cost; `--no-data-care` skips it). Other options are
// passed to bench/run.ts (see its header).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const argv = process.argv.slice(2);
const skipWebhooks = argv.includes('--no-webhooks');
const skipDataCare = argv.includes('--no-data-care');
const args = argv.filter((a) => a !== '--no-webhooks' && a !== '--no-data-care');

const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
if (build.status !== 0) process.exit(build.status ?? 1);

let failed = false;
const http = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bench/run.ts'), ...args], { cwd: root, stdio: 'inherit' });
if (http.status !== 0) failed = true;

const webhooks = path.join(root, 'bench/webhooks.ts');
if (existsSync(webhooks) && !skipWebhooks) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', webhooks], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) failed = true;
}
if (!skipDataCare) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bench/data-care.ts')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
