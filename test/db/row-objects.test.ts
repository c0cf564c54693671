import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rowMaker, rowMakerOf } from '../../src/db/row-objects.js';

/** What better-sqlite3 makes of a row: each column an own property, a repeated name its last value. */
const objects = (columns: string[], rows: unknown[][]) => rows.map((r) => Object.fromEntries(columns.map((c, j) => [c, r[j]])));

// Row arrays → row objects (the main connection's statements and the read processes' answers): the made
// function must give exactly what better-sqlite3's own objects hold, whatever the column names.
const cases: [string, string[], unknown[][]][] = [
  [
    'plain columns',
    ['id', 'first_name', 'score', 'tag_ids'],
    [
      ['con_1', 'Ana', 1.5, null],
      ['con_2', 'Bo', null, 'tag_1,tag_2'],
    ],
  ],
  ['no rows', ['id'], []],
  ['a repeated name keeps its last value', ['id', 'name', 'id'], [['a', 'n', 'b']]],
  ['names that are not identifiers', ['a"b', "c'd", 'e}f', 'g\nh', '\u2028', 'count(*)', '1', ''], [[1, 2, 3, 4, 5, 6, 7, 8]]],
  ['names that look like code', ['x: process.exit(1), y', '"]; process.exit(1); //'], [['safe', 'also safe']]],
  ['names of Object.prototype', ['constructor', 'toString', 'hasOwnProperty'], [['c', 't', 'h']]],
];

for (const [name, columns, rows] of cases) {
  test(`row maker: ${name}`, () => {
    const made = rowMaker(columns)(rows);
    assert.deepEqual(made, objects(columns, rows));
    assert.equal(made.length, rows.length);
    for (const o of made) {
      assert.equal(Object.getPrototypeOf(o), Object.prototype);
      assert.deepEqual(
        Object.keys(o),
        [...new Set(columns)].sort((a, b) => (/^\d+$/.test(a) ? -1 : /^\d+$/.test(b) ? 1 : 0)),
      );
    }
  });
}

test('row maker: a column named __proto__ is an own property and never the prototype', () => {
  const [o] = rowMaker(['id', '__proto__'])([['x', { polluted: true }]]);
  assert.equal(Object.getPrototypeOf(o), Object.prototype);
  assert.ok(Object.hasOwn(o, '__proto__'));
  assert.equal((o as { polluted?: boolean }).polluted, undefined);
  assert.equal(({} as { polluted?: boolean }).polluted, undefined);
});

test('rowMakerOf keeps one maker per list of columns', () => {
  assert.equal(rowMakerOf(['a', 'b']), rowMakerOf(['a', 'b']));
  assert.notEqual(rowMakerOf(['a', 'b']), rowMakerOf(['a\u0000b']));
  assert.notEqual(rowMakerOf(['a', 'b']), rowMakerOf(['b', 'a']));
});
