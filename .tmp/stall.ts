import { readFileSync } from 'node:fs';
const prof = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map<number, any>(prof.nodes.map((n: any) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = prof.startTime;
let busyStart = -1, last = '';
const stacks = new Map<string, number>();
const windows: [number, number, Map<string, number>][] = [];
let cur = new Map<string, number>();
for (let i = 0; i < prof.samples.length; i++) {
  t += prof.timeDeltas[i];
  const n = byId.get(prof.samples[i]);
  const idle = n.callFrame.functionName === '(idle)';
  if (!idle) {
    if (busyStart < 0) { busyStart = t; cur = new Map(); }
    // stack
    let id = prof.samples[i]; const fr: string[] = [];
    while (id !== undefined) { const x = byId.get(id); fr.push(`${x.callFrame.functionName}@${x.callFrame.url.split('/').slice(-1)[0]}:${x.callFrame.lineNumber}`); id = parent.get(id)!; }
    const key = fr.slice(0, 12).join(' < ');
    cur.set(key, (cur.get(key) ?? 0) + prof.timeDeltas[i]);
  } else if (busyStart >= 0) {
    if (t - busyStart > 100_000) windows.push([busyStart - prof.startTime, t - busyStart, cur]);
    busyStart = -1;
  }
}
for (const [s, d, m] of windows) {
  console.log(`busy window at ${(s / 1e6).toFixed(2)} s for ${(d / 1e3).toFixed(0)} ms`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, 4)) console.log(`   ${(v / 1e3).toFixed(0)} ms  ${k}`);
}
