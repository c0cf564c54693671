// The reference page's SDK examples (x-codeSamples, lang `typescript`, label `SDK`): every operation of
// the OpenAPI document has one, and each is code that type-checks against the SDK's sources, as a
// reader would paste it into an ES module of their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { openApiDocument } from '../../sdk/scripts/generate.js';
import { ROOT } from '../helpers/server.js';

const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const METHODS = ['get', 'post', 'patch', 'put', 'delete'];

test('every operation has an SDK sample, and every sample type-checks against the SDK', { timeout: 170_000 }, async () => {
  const doc = (await openApiDocument()) as { paths: Record<string, Record<string, any>> };
  const samples: { name: string; source: string }[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of METHODS.filter((m) => item[m])) {
      const op = item[method];
      const sdk = (op['x-codeSamples'] ?? []).filter((s: any) => s.label === 'SDK');
      assert.equal(sdk.length, 1, `${method.toUpperCase()} ${p} has one SDK sample`);
      assert.equal(sdk[0].lang, 'typescript');
      assert.ok(sdk[0].source.includes(`crm.${method.toUpperCase()}('${p}'`), `${method.toUpperCase()} ${p}: the sample calls its own operation`);
      samples.push({ name: op.operationId, source: sdk[0].source });
    }
  }
  assert.ok(samples.length >= 80, `samples for every operation (${samples.length})`);

  const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-sdk-samples-'));
  try {
    for (const s of samples) writeFileSync(path.join(dir, `${s.name}.mts`), s.source);
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          typeRoots: [path.join(ROOT, 'node_modules/@types')],
          types: ['node'],
          paths: { '@crm/sdk': [path.join(ROOT, 'sdk/src/index.ts')] },
        },
        include: ['*.mts'],
      }),
    );
    const r = spawnSync(process.execPath, [TSC, '-p', dir], { encoding: 'utf8', timeout: 150_000 });
    assert.equal(r.status, 0, `the SDK samples do not type-check:\n${(r.stdout + r.stderr).slice(0, 6000)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
