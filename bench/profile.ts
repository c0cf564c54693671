// Summarizes a V8 .cpuprofile (from `npm run bench -- --profile <scenario>`): self time by function and
// by package/file, so "where does the time go" has a short answer.
//   node --import tsx bench/profile.ts .bench/profiles/<file>.cpuprofile [top=25]
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const file = process.argv[2];
const top = Number(process.argv[3] ?? 25);
const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const self = new Map<number, number>();
prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const idle = prof.nodes.filter((n) => ['(idle)', '(program)', '(garbage collector)'].includes(n.callFrame.functionName));
const busy = total - idle.filter((n) => n.callFrame.functionName === '(idle)').reduce((a, n) => a + (self.get(n.id) ?? 0), 0);

function where(url: string): string {
  if (!url) return '(native/vm)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const src = url.indexOf('/dist/');
  return src >= 0 ? url.slice(src + 1) : url;
}

const fnTotals = new Map<string, number>();
const pkgTotals = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id)!;
  const key = `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  fnTotals.set(key, (fnTotals.get(key) ?? 0) + t);
  const pkg = where(n.callFrame.url);
  pkgTotals.set(pkg, (pkgTotals.get(pkg) ?? 0) + t);
}
const pct = (t: number) => `${((t / busy) * 100).toFixed(1).padStart(5)}%`;
console.log(`profile: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (percentages of busy time)\n`);
console.log('self time by package / file:');
for (const [k, t] of [...pkgTotals].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)}  ${k}`);
console.log('\nself time by function:');
for (const [k, t] of [...fnTotals].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)}  ${k}`);

// Inclusive time per function (each sample counted once per function even under recursion).
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map<string, number>();
for (const [id, t] of self) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    const key = `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    incl.set(key, (incl.get(key) ?? 0) + t);
  }
}
console.log('\ninclusive time by function (project code and main libraries):');
for (const [k, t] of [...incl]
  .filter(([k]) => /dist\/|fastify|kysely|fast-json|better-sqlite|_http|stream/.test(k))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(`  ${pct(t)}  ${k}`);
