import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createDatabase, migrate } from '../src/db/index.js';
import { directReads } from '../src/db/reads.js';
import { seed } from '../bench/seed.js';
const dir = mkdtempSync(path.join(os.tmpdir(), 'hop-'));
const config = loadConfig({ DATA_DIR: dir, DATABASE_URL: '' });
const database = createDatabase(config);
await migrate(database);
const s = await seed(database, { companies: 200, contacts: 100_000, deals: 100, activities: 100 });
await database.optimize();
database.readPool!.warm();
await new Promise((r) => setTimeout(r, 1000));
const q = (i: number) => database.db.selectFrom('contacts').selectAll().where('tenant_id', '=', s.tenantId).where('deleted_at', 'is', null).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(50).offset((i % 20) * 50);
const direct = directReads(database.db);
const pooled = () => database.readsFor(s.tenantId);
function treeCpu() { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }
import { readFileSync } from 'node:fs';
function childCpu(): number { let t = 0; const kids = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  for (const k of kids) { try { const f = readFileSync(`/proc/${k}/stat`, 'utf8'); const x = f.slice(f.lastIndexOf(')') + 2).split(' '); t += (Number(x[11]) + Number(x[12])) * 10; } catch {} } return t; }
for (const [name, run] of [['direct', (i: number) => direct.all(q(i))], ['pooled', (i: number) => pooled().all(q(i))], ['direct', (i: number) => direct.all(q(i))], ['pooled', (i: number) => pooled().all(q(i))]] as const) {
  for (let i = 0; i < 200; i++) await run(i);
  const c0 = treeCpu(), k0 = childCpu(), t0 = Date.now();
  const N = 2000;
  for (let i = 0; i < N; i++) await run(i);
  const ms = Date.now() - t0; const main = treeCpu() - c0; const kids = childCpu() - k0;
  console.log(name, 'wall µs/q', (ms * 1000 / N).toFixed(0), 'main cpu µs/q', (main * 1000 / N).toFixed(0), 'readers cpu µs/q', (kids * 1000 / N).toFixed(0));
}
await database.close();
