#!/usr/bin/env node
// `npm test`: the whole suite on the embedded database; again on PostgreSQL + Redis when
// DATABASE_URL / REDIS_URL are set. Extra arguments narrow the run to matching test files.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const filters = process.argv.slice(2);

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = findTests(path.join(root, 'test'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files match');
  process.exit(1);
}

// The test processes build the app from the compiled-on-the-fly sources (tsx); end-to-end tests run
// the compiled CLI, so make sure dist/ (and sdk/dist/) are current.
// The SDK too: its commands (crm-listen) run from sdk/dist in the end-to-end tests.
for (const project of ['tsconfig.json', 'sdk/tsconfig.json']) {
  const build = spawnSync('npx', ['tsc', '-p', project], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const passes = [{ name: 'sqlite', env: { TEST_DB: 'sqlite', DATABASE_URL: '', REDIS_URL: '' } }];
if (process.env.DATABASE_URL) {
  passes.push({ name: 'postgres', env: { TEST_DB: 'postgres', DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL ?? '' } });
}

// A file whose opening comment says `test: alone` seeds hundreds of thousands of rows or judges a deadline: it
// runs after the others, one at a time, so that it neither starves them nor is starved by them on a two-core
// machine (concurrent, the 100,000- and 300,000-contact seeds made other files' connections and deadlines miss).
const alone = (f) => /^\/\/.*\btest: alone\b/m.test(readFileSync(f, 'utf8').slice(0, 2000));
const phases = [
  { files: files.filter((f) => !alone(f)), concurrency: 2 },
  { files: files.filter(alone), concurrency: 1 },
].filter((p) => p.files.length > 0);

let failed = false;
for (const pass of passes) {
  console.log(`\n=== test pass: ${pass.name} (${files.length} files) ===`);
  const env = { ...process.env, ...pass.env, CRM_TEST: '1', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' };
  if (pass.name === 'postgres') {
    const reset = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'test/helpers/reset-postgres.ts')], { cwd: root, env, stdio: 'inherit' });
    if (reset.status !== 0) process.exit(reset.status ?? 1);
  }
  for (const phase of phases) {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--test', `--test-concurrency=${phase.concurrency}`, '--test-timeout=180000', ...phase.files.map((f) => path.relative(root, f))],
      { cwd: root, env, stdio: 'inherit' },
    );
    if (r.status !== 0) failed = true;
  }
}
process.exit(failed ? 1 : 0);
