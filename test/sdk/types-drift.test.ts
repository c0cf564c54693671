// sdk/src/schema.ts is generated from the service's OpenAPI document (`npm run sdk:generate`); a route
// schema changed without regenerating it would ship an SDK whose types lie. This regenerates the file
// in memory and compares it with the committed one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generateSchema, SCHEMA_FILE } from '../../sdk/scripts/generate.js';

test('the SDK types match the OpenAPI document (else run `npm run sdk:generate`)', async () => {
  const fresh = await generateSchema();
  const committed = readFileSync(SCHEMA_FILE, 'utf8');
  if (fresh === committed) return;
  const a = committed.split('\n');
  const b = fresh.split('\n');
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  assert.fail(
    `sdk/src/schema.ts is out of date with the OpenAPI document: run \`npm run sdk:generate\` and commit the result.\n` +
      `First difference at line ${i + 1}:\n  committed: ${a[i] ?? '(end of file)'}\n  generated: ${b[i] ?? '(end of file)'}`,
  );
});
