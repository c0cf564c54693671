// What the app itself costs per request, with no sockets: requests through Fastify's `inject()` (auth, rate
// limit, hooks, validation, the statement, serialization, metrics), so that a change of a few microseconds
// shows through the noise of a shared VM that moves `npm run bench` by ±30 % between runs. Compares builds:
// each root is a checkout with its `dist/` built (`npx tsc`), e.g. a `git worktree` of the commit before;
// rounds alternate the roots, each in a fresh process, and the medians are printed.
//   node --import tsx bench/inject.ts [--rounds 5] [--requests 30000] [--scenario by-id,page] <root> [<root> …]
// Per request: CPU (user + system of the process, so V8's helper threads count) and wall time. Absolute
// numbers include light-my-request's own work (~40 % of a point read's): compare roots, not to the HTTP bench.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

type Scenario = 'by-id' | 'page';
interface Sample {
  root: string;
  scenario: Scenario;
  cpuUs: number;
  wallUs: number;
}

const CONTACTS = 200;

async function child(root: string, scenario: Scenario, requests: number): Promise<Sample> {
  const { buildApp } = await import(`${root}/dist/app.js`);
  const { loadConfig } = await import(`${root}/dist/config.js`);
  const { createDatabase, migrate } = await import(`${root}/dist/db/index.js`);
  const { applySetup } = await import(`${root}/dist/admin/setup.js`);
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-inject-'));
  try {
    const config = loadConfig({ DATA_DIR: dir, CRM_SECRET_KEY: '11'.repeat(32), LOG_LEVEL: 'warn', WORKERS: 'false', CRM_NO_DEMO: 'true' });
    const database = createDatabase(config, { sqliteFile: path.join(dir, 'crm.db') });
    await migrate(database);
    const setup = await applySetup(database.db, {
      tenant: { name: 'Bench' },
      users: [{ ref: 'ana', name: 'Ana', email: 'ana@bench.test' }],
      apiKeys: [{ ref: 'k', name: 'bench', user: 'ana', scopes: ['*'], rateLimit: 1000 }],
    });
    // The rate limit is not what is measured: lifted as bench/seed.ts does.
    await database.db.updateTable('api_keys').set({ rate_limit: 1_000_000_000 }).execute();
    const headers = { 'x-api-key': setup.apiKeys.k };
    const app = await buildApp({ config, database });
    await app.ready();
    const ids: string[] = [];
    for (let i = 0; i < CONTACTS; i++) {
      const payload = { firstName: `First${i}`, lastName: 'Last', email: `c${i}@bench.test`, phone: `+5511${String(900000000 + i)}` };
      const r = await app.inject({ method: 'POST', url: '/api/v1/contacts', headers, payload });
      if (r.statusCode !== 201) throw new Error(r.body);
      ids.push(JSON.parse(r.body).id);
    }
    const url = (i: number) => (scenario === 'by-id' ? `/api/v1/contacts/${ids[i % ids.length]}` : `/api/v1/contacts?pageSize=50&page=${1 + (i % 4)}`);
    const run = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await app.inject({ method: 'GET', url: url(i), headers });
        if (r.statusCode !== 200) throw new Error(r.body);
      }
    };
    await run(Math.min(5_000, requests));
    const cpu = process.cpuUsage();
    const started = performance.now();
    await run(requests);
    const used = process.cpuUsage(cpu);
    const wall = performance.now() - started;
    await app.close();
    await database.close();
    return { root, scenario, cpuUs: (used.user + used.system) / requests, wallUs: (wall * 1000) / requests };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

if (process.argv[2] === '--child') {
  const [root, scenario, requests] = process.argv.slice(3);
  console.log(JSON.stringify(await child(root, scenario as Scenario, Number(requests))));
  process.exit(0);
} else {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { rounds: { type: 'string', default: '5' }, requests: { type: 'string', default: '30000' }, scenario: { type: 'string', default: 'by-id,page' } },
  });
  const roots = positionals.map((r) => path.resolve(r));
  if (roots.length === 0) roots.push(path.resolve(fileURLToPath(new URL('..', import.meta.url))));
  const scenarios = values.scenario.split(',') as Scenario[];
  const samples: Sample[] = [];
  for (let round = 0; round < Number(values.rounds); round++) {
    // Alternate the order, so that neither root always runs first.
    const order = round % 2 ? [...roots].reverse() : roots;
    for (const scenario of scenarios) {
      for (const root of order) {
        const p = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', root, scenario, values.requests], {
          encoding: 'utf8',
        });
        if (p.status !== 0) throw new Error(`${root} ${scenario}: ${p.stderr}`);
        const s = JSON.parse(p.stdout.trim().split('\n').at(-1)!) as Sample;
        samples.push(s);
        console.error(`round ${round + 1} ${scenario} ${root}: CPU ${s.cpuUs.toFixed(1)} µs, wall ${s.wallUs.toFixed(1)} µs per request`);
      }
    }
  }
  console.log(`\n| scenario | root | CPU µs/request (median) | wall µs/request (median) | CPU by round |`);
  console.log(`|---|---|--:|--:|---|`);
  for (const scenario of scenarios) {
    for (const root of roots) {
      const mine = samples.filter((s) => s.root === root && s.scenario === scenario);
      const cpu = mine.map((s) => s.cpuUs);
      console.log(
        `| ${scenario} | ${root} | ${median(cpu).toFixed(1)} | ${median(mine.map((s) => s.wallUs)).toFixed(1)} | ${cpu.map((c) => c.toFixed(1)).join(', ')} |`,
      );
    }
  }
}
