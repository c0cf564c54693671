// Statements kept for reuse keep their SQL as one flat string (db/prepared.ts flatSql): Kysely's compiler builds the
// text piece by piece, which V8 keeps as a rope of one node per piece, and a kept statement kept its rope for as long
// as it lived (8.8 MiB of the server's heap after the bench). Checked in a heap snapshot of this process, after the
// lists, filters, searches and point reads that make the listing's shapes and prepared() plans: every kept statement
// (an object with `sql` and `slots`, or `sql` and `queryId` as the listing's shapes keep them) holds a flat string.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import { DIALECT, newTenant, testApp } from '../helpers/app.js';

const t = await testApp();

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

async function heapSnapshot(): Promise<Snapshot> {
  let text = '';
  for await (const chunk of v8.getHeapSnapshot()) text += chunk;
  return JSON.parse(text) as Snapshot;
}

test(`kept statements hold their SQL as flat strings, not ropes (${DIALECT})`, async () => {
  const { api, refs } = await newTenant(t);
  for (let i = 0; i < 12; i++)
    assert.equal((await api.post('/contacts', { firstName: `Ana ${i}`, ownerId: i % 2 ? refs.ana : refs.bruno, score: i })).status, 201);
  const first = await api.get('/contacts?pageSize=5');
  assert.equal(first.status, 200);
  for (const path of [
    `/contacts?pageSize=5&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`,
    `/contacts?ownerId=${refs.ana}&pageSize=3`,
    '/contacts?search=ana&pageSize=3',
    '/companies?pageSize=3',
    '/deals?pageSize=3',
    `/contacts/${first.body.data[0].id}`,
  ])
    assert.equal((await api.get(path)).status, 200, path);
  const filters = {
    operator: 'AND',
    conditions: [
      { field: 'ownerId', operator: 'eq', value: refs.ana },
      { field: 'score', operator: 'gte', value: 3 },
    ],
  };
  const search = await api.post('/contacts/search', { filters, pageSize: 3 });
  assert.equal(search.status, 200, JSON.stringify(search.body));

  const snap = await heapSnapshot();
  const { node_fields, node_types, edge_fields, edge_types } = snap.snapshot.meta;
  const nf = node_fields.length;
  const ef = edge_fields.length;
  const [TYPE, NAME, EDGES] = ['type', 'name', 'edge_count'].map((f) => node_fields.indexOf(f));
  const [ETYPE, ENAME, ETO] = ['type', 'name_or_index', 'to_node'].map((f) => edge_fields.indexOf(f));
  const kinds = node_types[0];
  const propertyEdge = edge_types[0].indexOf('property');
  let kept = 0;
  const ropes: string[] = [];
  for (let i = 0, e = 0; i < snap.nodes.length; i += nf) {
    const edges = snap.nodes[i + EDGES];
    const props = new Map<string, number>();
    for (let k = 0; k < edges; k++, e += ef) if (snap.edges[e + ETYPE] === propertyEdge) props.set(snap.strings[snap.edges[e + ENAME]], snap.edges[e + ETO]);
    if (kinds[snap.nodes[i + TYPE]] !== 'object' || !props.has('sql') || !(props.has('slots') || props.has('queryId'))) continue;
    const sqlNode = props.get('sql')!;
    const kind = kinds[snap.nodes[sqlNode + TYPE]];
    if (!kind.endsWith('string')) continue;
    kept++;
    if (kind === 'concatenated string') ropes.push(snap.strings[snap.nodes[sqlNode + NAME]]);
  }
  assert.ok(kept >= 10, `kept statements found: ${kept}`);
  assert.deepEqual(ropes, [], `${ropes.length} of ${kept} kept statements hold a rope`);
});
