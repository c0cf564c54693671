// Objects a request makes and drops must die young (src/util/objects.ts `extended`): on Node 20, V8 keeps an
// object built as `{ ...base, field }` through the next scavenges and moves it to the old generation, which
// only a full collection frees. The copies made on every write (a row with its search column, a batch item's
// answer) are built with `extended` instead; these tests count what their copies leave in the old generation
// after scavenges, against the spread form they replaced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import { withSearchText, setWithSearchText } from '../../src/db/search-text.js';
import { extended } from '../../src/util/objects.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as (o?: { type: 'minor' | 'major' }) => void;
const oldUsed = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;

// Full collections inside a measurement free what it counts: such a measurement is taken again.
const fullCollections: number[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if ((e.detail as { kind?: number } | undefined)?.kind !== constants.NODE_PERFORMANCE_GC_MINOR) fullCollections.push(e.startTime);
}).observe({ entryTypes: ['gc'] });

/** Bytes the old generation grew by while `make` built and dropped 40,000 objects, scavenged along the way. */
async function promotedBy(make: (i: number) => object): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    gc();
    gc();
    const before = oldUsed();
    const from = performance.now();
    let sink = 0;
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 2000; i++) sink += Object.keys(make(round * 2000 + i)).length;
      gc({ type: 'minor' });
    }
    gc({ type: 'minor' });
    gc({ type: 'minor' });
    const grew = oldUsed() - before;
    const to = performance.now();
    assert.ok(sink > 0);
    await new Promise((resolve) => setImmediate(resolve)); // the observer's entries arrive after the turn
    if (attempt === 3 || !fullCollections.some((t) => t >= from && t <= to)) return grew;
  }
}

const row = (i: number) => ({
  tenant_id: 'ten_1',
  id: `con_${i}`,
  first_name: 'Carga',
  last_name: `Teste ${i}`,
  email: `load-${i}@bench.test`,
  phone: null,
  company_id: null,
  owner_id: null,
  score: i % 100,
  custom_properties: '{}',
  created_at: '2026-11-28T12:00:00.000Z',
  updated_at: '2026-11-28T12:00:00.000Z',
  deleted_at: null,
});

// Each of the 40,000 objects is ~250 bytes with its strings: what the spread form moves is ~10 MB.
const LIMIT = 2 * 1024 * 1024;
const node20 = Number(process.versions.node.split('.')[0]) === 20;

test('the spread form this guards against is promoted on Node 20 (V8 11), and not on later V8', async () => {
  const spread = await promotedBy((i) => ({ ...row(i), search_text: `x${i}` }));
  if (node20) assert.ok(spread > LIMIT, `{ ...row, field } moved ${spread} bytes to the old generation`);
  else assert.ok(spread < LIMIT, `{ ...row, field } moved ${spread} bytes (fixed in this V8: extended is no longer needed)`);
});

test('extended leaves nothing in the old generation, and means what the spread means', async () => {
  assert.ok((await promotedBy((i) => extended(row(i), { search_text: `x${i}` }))) < LIMIT);
  const base = { a: 1, b: 2 };
  assert.deepEqual(extended(base, { b: 3, c: 4 }), { a: 1, b: 3, c: 4 });
  assert.deepEqual(base, { a: 1, b: 2 }, 'the base is not changed');
});

test('a row with its search column, and an update with it, leave nothing in the old generation', async () => {
  assert.ok((await promotedBy((i) => withSearchText('contacts', row(i)))) < LIMIT);
  assert.ok((await promotedBy((i) => setWithSearchText('contacts', { last_name: `Novo ${i}` }, row(i)))) < LIMIT);
  assert.equal(withSearchText('contacts', row(1)).search_text, 'carga teste 1\u001fload-1@bench.test');
});
