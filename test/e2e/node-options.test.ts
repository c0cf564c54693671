// The Node options the server runs with (src/cli/serve.ts, "the young generation is capped", "no pretenuring"): `npm start`
// gives them on its command line, the `crm` executable on its first line (`env -S`), and the benches read
// them from `npm start` (bench/serve.ts). V8 reads them once, when the heap is made, so no code can set
// them later: these tests keep the places in step and the options valid for this Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const startScript: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;

/** The options between `node` and the script in `npm start`. */
function startOptions(): string[] {
  const words = startScript.split(/\s+/);
  assert.equal(words[0], 'node', startScript);
  const script = words.indexOf('dist/cli/index.js');
  assert.ok(script > 0, startScript);
  assert.deepEqual(words.slice(script + 1), ['serve'], startScript);
  return words.slice(1, script);
}

/** The options of a file's first line, `#!/usr/bin/env -S node <options>`. */
function shebangOptions(file: string): string[] {
  const first = readFileSync(path.join(ROOT, file), 'utf8').split('\n')[0];
  const prefix = '#!/usr/bin/env -S node';
  assert.ok(first.startsWith(prefix), `${file}: ${first}`);
  return first.slice(prefix.length).split(/\s+/).filter(Boolean);
}

test('npm start caps the young generation and turns allocation-site pretenuring off, and the crm executable (source and build) gives the same options', () => {
  const options = startOptions();
  assert.ok(options.includes('--max-semi-space-size=8'), startScript);
  assert.ok(options.includes('--no-allocation-site-pretenuring'), startScript);
  assert.deepEqual(shebangOptions('src/cli/index.ts'), options);
  assert.deepEqual(shebangOptions('dist/cli/index.js'), options);
});

test('the benches start the server with the options of npm start', async () => {
  const { SERVE_NODE_ARGS } = await import('../../bench/serve.js');
  assert.deepEqual(SERVE_NODE_ARGS, startOptions());
});

test('this Node accepts the options and applies them: the new space stops at about 2 × 8 MiB (32 MiB or more without them)', () => {
  // Objects that survive a scavenge or two make V8 grow the new space up to its cap.
  const probe = [
    "const v8 = require('v8'); let keep = []; let max = 0;",
    'for (let i = 0; i < 3e6; i++) {',
    "  keep.push({ a: i, b: 'x' + i }); if (keep.length > 200000) keep = [];",
    "  if (i % 100000 === 0) max = Math.max(max, v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space').space_size);",
    '}',
    'process.stdout.write(String(max));',
  ].join('\n');
  const newSpace = (options: string[]) => {
    const r = spawnSync(process.execPath, [...options, '-e', probe], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return Number(r.stdout);
  };
  const MiB = 1024 * 1024;
  // Uncapped, the probe grows the new space to 32 MiB on Node 20 and 128 MiB on Node 24.
  assert.ok(newSpace([]) > 24 * MiB, 'the probe grows an uncapped new space past 24 MiB');
  // Capped, Node 20 reads 16 MiB every time. Node 24 (V8 13) reads 16 MiB mostly but may hold a few pages more
  // while it scavenges (16.25–25 MiB seen in one of eight runs): the smallest reading of three runs, with 4 MiB
  // of room, tells the cap applied from the cap ignored.
  const capped = Math.min(...[0, 1, 2].map(() => newSpace(startOptions())));
  assert.ok(capped <= 20 * MiB, `npm start caps it (${(capped / MiB).toFixed(2)} MiB)`);
});

test('crm serve scavenges on its own thread (tuneHeap sets --no-parallel-scavenge; one given on the command line wins)', () => {
  // The helpers' share of each scavenge, from V8's trace: non-zero somewhere when scavenges run in parallel.
  const helperMs = (options: string[], tune: boolean) => {
    const code = [
      `const { tuneHeap } = await import(${JSON.stringify(path.join(ROOT, 'src/cli/serve.ts'))});`,
      tune ? 'tuneHeap();' : '',
      "process.stdout.write('\\n--- tuned ---\\n');",
      "let keep = []; for (let i = 0; i < 3e6; i++) { keep.push({ a: i, b: 'x' + i }); if (keep.length > 100000) keep = []; }",
    ].join('\n');
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--trace-gc-nvp', ...options, '--input-type=module', '-e', code], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(r.status, 0, r.stderr);
    // Scavenges while the module loads ran before tuneHeap: only those after the mark count.
    const after = r.stdout.slice(r.stdout.indexOf('--- tuned ---'));
    const values = [...after.matchAll(/background\.scavenge\.parallel=([\d.]+)/g)].map((m) => Number(m[1]));
    assert.ok(values.length > 0, 'the trace names the helpers’ share of a scavenge');
    return Math.max(...values);
  };
  assert.ok(helperMs([], false) > 0, 'by default, helper threads take part');
  assert.equal(helperMs([], true), 0, 'after tuneHeap, none does');
  assert.ok(helperMs(['--parallel-scavenge'], true) > 0, 'an option given on the command line wins');
});
