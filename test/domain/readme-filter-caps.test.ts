// The README states both caps on the values of a search filter, as the code enforces them: per `in`/`notIn`
// condition and per whole filter (the contract leaves both to the implementation).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { validateFilter, MAX_IN_VALUES, MAX_TOTAL_VALUES } from '../../src/domain/filters.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
const written = (n: number) => n.toLocaleString('en-US');

test('README: at most MAX_IN_VALUES values in one in/notIn condition and MAX_TOTAL_VALUES in a whole filter', () => {
  assert.ok(
    README.includes(`At most ${written(MAX_IN_VALUES)} values in one \`in\`/\`notIn\` condition and ${written(MAX_TOTAL_VALUES)} values in a whole filter`),
    'the search filter paragraph states both caps',
  );
  // And the caps are the ones enforced.
  const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}@x.test`);
  const condition = (n: number) => ({ field: 'email', operator: 'in', value: values(n) });
  assert.deepEqual(validateFilter({ operator: 'AND', conditions: [condition(MAX_IN_VALUES)] }, 'contact', new Map()), []);
  assert.match(validateFilter({ operator: 'OR', conditions: [condition(MAX_IN_VALUES + 1)] }, 'contact', new Map())[0].message, /at most 1000 values/);
  const many = Array.from({ length: MAX_TOTAL_VALUES / MAX_IN_VALUES + 1 }, () => condition(MAX_IN_VALUES));
  assert.match(validateFilter({ operator: 'OR', conditions: many }, 'contact', new Map())[0].message, /at most 10000 values in total/);
});
