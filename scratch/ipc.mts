import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
// Synthetic: a child answers each request with 50 rows of 11 columns; measure main CPU per round trip.
const child = `
const rows = Array.from({ length: 50 }, (_, i) => ({ id: 'c' + i + 'xxxxxxxxxxxxxxxxxxxx', first_name: 'Firstname', last_name: 'Lastname', email: 'someone' + i + '@example.com', phone: '+5511999990000', company_id: null, owner_id: 'u_xxxxxxxxxxxxxxxxxxxxxx', score: 42, custom_properties: '{"a":"b"}', created_at: '2026-11-22T10:00:00.000Z', updated_at: '2026-11-22T10:00:00.000Z' }));
const cols = Object.keys(rows[0]); const raw = rows.map((r) => cols.map((c) => r[c]));
process.on('message', (m) => {
  if (m.mode === 'obj') process.send({ id: m.id, rows });
  else if (m.mode === 'raw') process.send({ id: m.id, cols, raw });
  else process.send({ id: m.id, json: JSON.stringify(raw), cols });
});`;
writeFileSync('/tmp/ipc-child.cjs', child);
for (const ser of ['advanced', 'json'] as const) {
  const c = fork('/tmp/ipc-child.cjs', [], { serialization: ser });
  let pending: any; c.on('message', (m) => pending(m));
  const ask = (mode: string, id: number) => new Promise<any>((r) => { pending = r; c.send({ id, mode }); });
  for (const mode of ['obj', 'raw', 'jsonstr']) {
    for (let i = 0; i < 500; i++) await ask(mode, i);
    const u0 = process.cpuUsage(); const t0 = Date.now(); const N = 3000;
    for (let i = 0; i < N; i++) { const m = await ask(mode, i); if (mode === 'raw') m.raw.map((v: any[]) => { const o: any = {}; m.cols.forEach((c: string, j: number) => (o[c] = v[j])); return o; }); if (mode === 'jsonstr') { const raw = JSON.parse(m.json); raw.map((v: any[]) => { const o: any = {}; m.cols.forEach((c: string, j: number) => (o[c] = v[j])); return o; }); } }
    const u = process.cpuUsage(u0);
    console.log(ser, mode, 'main cpu µs', ((u.user + u.system) / N).toFixed(0), 'wall µs', ((Date.now() - t0) * 1000 / N).toFixed(0));
  }
  c.kill();
}
