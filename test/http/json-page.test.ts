// http/pagination.ts jsonPage: the envelope of a page whose records are JSON text, built in one `join`
// (one flat string); it must read, parsed, as the object envelope does for 0, 1 and many records.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonPage } from '../../src/listing/page.js';
import type { JsonText } from '../../src/http/replies.js';
import type { PaginationT } from '../../src/http/schemas.js';

const pagination: PaginationT = { page: 1, pageSize: 50, total: 3, totalPages: 1, hasNext: false, hasPrev: false, nextCursor: null };

test('jsonPage: 0, 1 and 3 records give the envelope of their parsed records', () => {
  const records = [
    { id: 'a', n: 1 },
    { id: 'b', s: 'x,y]' },
    { id: 'c', nested: { d: [1, 2] } },
  ];
  for (const n of [0, 1, 3]) {
    const texts = records.slice(0, n).map((r) => JSON.stringify(r) as JsonText<unknown>);
    const before = [...texts];
    assert.deepEqual(JSON.parse(jsonPage(texts, pagination)), { data: records.slice(0, n), pagination });
    assert.deepEqual(texts, before, 'the records given are left as they were');
  }
});
