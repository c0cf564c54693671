// Sums a V8 heap snapshot (`npm run bench -- --heap-snapshot`, or any .heapsnapshot) by kind of node and by
// constructor, largest first, and lists its largest strings: where a server's heap is, without DevTools.
//   node --import tsx bench/heap-summary.ts <file.heapsnapshot> [top (30)]
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: heap-summary.ts <file.heapsnapshot> [top]');
const top = Number(topArg ?? 30);
const snap = JSON.parse(readFileSync(file, 'utf8')) as {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
};
const fields = snap.snapshot.meta.node_fields.length;
const kinds = snap.snapshot.meta.node_types[0];
const [TYPE, NAME, SIZE] = ['type', 'name', 'self_size'].map((f) => snap.snapshot.meta.node_fields.indexOf(f));
const byKind = new Map<string, number>();
const byName = new Map<string, { bytes: number; count: number }>();
const strings: [number, string][] = [];
let total = 0;
for (let i = 0; i < snap.nodes.length; i += fields) {
  const kind = kinds[snap.nodes[i + TYPE]];
  const name = snap.strings[snap.nodes[i + NAME]];
  const size = snap.nodes[i + SIZE];
  total += size;
  byKind.set(kind, (byKind.get(kind) ?? 0) + size);
  const isText = kind.endsWith('string');
  if (kind === 'string') strings.push([size, name]);
  const key = `${kind}: ${isText ? '' : name.slice(0, 60)}`;
  const e = byName.get(key) ?? byName.set(key, { bytes: 0, count: 0 }).get(key)!;
  e.bytes += size;
  e.count++;
}
const mib = (b: number) => (b / 2 ** 20).toFixed(2).padStart(7);
console.log(`${mib(total)} MiB in all (the live objects: a snapshot collects first)\n\nBy kind:`);
for (const [k, b] of [...byKind].sort((a, b) => b[1] - a[1])) console.log(`${mib(b)}  ${k}`);
console.log('\nBy kind and constructor (MiB, count):');
for (const [k, e] of [...byName].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)) console.log(`${mib(e.bytes)}  ${String(e.count).padStart(7)}  ${k}`);
console.log('\nLargest strings (bytes, start):');
for (const [b, v] of strings.sort((a, b) => b[0] - a[0]).slice(0, top)) console.log(`${String(b).padStart(9)}  ${JSON.stringify(v.slice(0, 100))}`);
