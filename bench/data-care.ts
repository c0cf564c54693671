// CONTRACT Part D at scale (issue 51), run by `npm run bench` after the load scenarios (scripts/bench.mjs;
// `--no-data-care` skips it), against the real server (`crm serve`, its own process), each with its target:
// 1. duplicates: the first page of GET /contacts/duplicates in a tenant of 100,000 contacts, 1 % of which are a second
//    record of someone (an address with a `+tag` or in capitals, the same name at the same company, Gmail's dots):
//    its latency at one connection, p50 of 50 calls after 5 warm-up calls (the very first call is shown too), < 50 ms;
// 2. merge: POST /contacts/merge of two contacts with 1,000 activities and 100 deals each, timed from the client,
//    every round < 200 ms;
// 3. the audit log's cost on POST /contacts: this build against a copy of its dist/ whose `recordAudit` does nothing
//    (.bench/no-audit; nothing in the service knows of it), side by side in slices that alternate between the two
//    builds (as bench/side-by-side.ts), each on its own copy of the database: the CPU per create (the server's, and on
//    PostgreSQL its backends' too: the statement's work is theirs), the median of the rounds' ratios, ≤ 1.10 ×.
//
// SQLite in a temporary DATA_DIR, or the PostgreSQL of DATABASE_URL (a scratch database whose name holds "bench": its
// schema is dropped), with REDIS_URL when set. The contacts, companies and activities are written straight to the
// tables (bench/seed.ts's bulk writer: migration 022's triggers keep the duplicate keys as the API's writes do); the
// deals and the merges go through the API.
//
// Usage: npm run build && node --import tsx bench/data-care.ts [--contacts 100000] [--merge-rounds 5]
//        [--audit-rounds 10] [--seconds 3] [--connections 50] [--keep (the data dir, SQLite)]
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { applySetup } from '../src/admin/setup.js';
import { FIRST_NAMES, LAST_NAMES, Rand, asciiSlug } from '../src/admin/demo-data.js';
import { loadConfig } from '../src/config.js';
import { createDatabase, migrate } from '../src/db/index.js';
import { withSearchText } from '../src/db/search-text.js';
import { newId } from '../src/util/ids.js';
import { drive } from './drive.js';
import { scenarios, type ScenarioData } from './scenarios.js';
import { quantile } from './raw-http.js';
import { chunked, companyRows, insertBenchKey, iso, openBulk } from './seed.js';
import { CLI, ROOT, SERVE_NODE_ARGS, startProcess, type Proc } from './serve.js';

const { values: args } = parseArgs({
  options: {
    contacts: { type: 'string', default: '100000' },
    'merge-rounds': { type: 'string', default: '5' },
    activities: { type: 'string', default: '1000' },
    deals: { type: 'string', default: '100' },
    'audit-rounds': { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    keep: { type: 'boolean', default: false },
  },
});
const CONTACTS = Number(args.contacts);
/** One contact in a hundred is a second record of another. */
const TWINS = Math.floor(CONTACTS / 100);
const MERGE_ROUNDS = Number(args['merge-rounds']);
const ACTIVITIES = Number(args.activities);
const DEALS = Number(args.deals);
const AUDIT_ROUNDS = Number(args['audit-rounds']);
const TARGETS = { duplicatesMs: 50, mergeMs: 200, auditRatio: 1.1 };
const say = (m: string) => process.stderr.write(m + '\n');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x: number) => x.toFixed(1);

const databaseUrl = process.env.DATABASE_URL ?? '';
if (databaseUrl && !/bench/.test(databaseUrl)) throw new Error('DATABASE_URL must name a scratch database whose name holds "bench"');
const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-care-'));
const env: Record<string, string> = {
  DATA_DIR: dir,
  DATABASE_URL: databaseUrl,
  REDIS_URL: databaseUrl ? (process.env.REDIS_URL ?? '') : '',
  CRM_SECRET_KEY: '22'.repeat(32),
  LOG_LEVEL: 'warn',
  WORKERS: 'false',
  CRM_NO_DEMO: 'true',
};
const engine = databaseUrl ? 'PostgreSQL' : 'SQLite';

// ---- The data: a tenant, 2,000 companies, CONTACTS contacts of which TWINS are someone's second record. ----
const database = createDatabase(loadConfig(env));
if (databaseUrl) await sql`drop schema public cascade; create schema public`.execute(database.db);
await migrate(database);
const setup = await applySetup(database.db, {
  tenant: { name: 'Data care bench' },
  users: [{ ref: 'ana', name: 'Ana', email: 'ana@bench.test' }],
  pipelines: [{ ref: 'p', name: 'P', isDefault: true, stages: [{ ref: 's', name: 'S', probability: 10 }] }],
});
const tenantId = setup.tenantId;
const userId = setup.refs.ana;
const key = await insertBenchKey(database.db, tenantId, userId, 'data care bench');
const seeded = Date.now();
const bulk = openBulk(database, databaseUrl ? undefined : path.join(dir, 'crm.db'));
const rand = new Rand(11);
const companies = companyRows(rand, 2_000, tenantId, [userId]);
await bulk.insert('companies', companies);
const WEBMAIL = ['gmail.com', 'hotmail.com', 'outlook.com', 'yahoo.com.br'];
const INITIALS = 'ABCDEFGHIJKLMNOPRSTV';
/** Distinct names for distinct people: first name, an initial and two surnames (48 × 20 × 36 × 36 = 1,244,160 of them). */
const NAMES = FIRST_NAMES.length * INITIALS.length * LAST_NAMES.length * LAST_NAMES.length;
interface Person {
  first: string;
  last: string;
  email: string;
  companyId: string | null;
}
function person(i: number): Person {
  // A stride prime to NAMES: every i below NAMES has a name of its own, spread over the lists.
  let p = (i * 7_919) % NAMES;
  const pick = <T>(xs: readonly T[]) => {
    const x = xs[p % xs.length];
    p = Math.floor(p / xs.length);
    return x;
  };
  const first = `${pick(FIRST_NAMES)} ${pick([...INITIALS])}.`;
  const last = `${pick(LAST_NAMES)} ${pick(LAST_NAMES)}`;
  const company = i % 10 < 7 ? companies[i % companies.length] : undefined;
  const domain = company?.domain ?? WEBMAIL[i % WEBMAIL.length];
  return { first, last, email: `${asciiSlug(first)}.${asciiSlug(last)}@${domain}`, companyId: company?.id ?? null };
}
/** The k-th twin: a second record of contact `of`, as people make them. */
function twin(k: number, of: Person): Person {
  const [local, domain] = of.email.split('@');
  switch (k % 4) {
    case 0: // the same person signing up with a +tag: the e-mail rule, and the name with the domain
      return { ...of, email: `${local}+crm@${domain}` };
    case 1: // the same name at the same company, another address: the name rule alone (when at a company)
      return { ...of, first: of.first.toUpperCase(), email: `${asciiSlug(of.first)}${k}@work-${k}.example` };
    case 2: // the address in capitals under a nickname: the e-mail rule alone
      return { ...of, first: `Nick ${k}`, email: of.email.toUpperCase() };
    default: // Gmail's dots (another mailbox elsewhere): the e-mail rule once at gmail.com
      return { ...of, email: domain === 'gmail.com' ? `${local.replaceAll('.', '')}@gmail.com` : `${local}.${k}@${domain}` };
  }
}
const rows = chunked(bulk, 'contacts');
const contact = (p: Person, i: number) =>
  withSearchText('contacts', {
    tenant_id: tenantId,
    id: newId('con'),
    first_name: p.first,
    last_name: p.last,
    email: p.email,
    phone: null,
    company_id: p.companyId,
    owner_id: userId,
    score: i % 100,
    custom_properties: '{}',
    created_at: iso(i, CONTACTS),
    updated_at: iso(i, CONTACTS),
    deleted_at: null,
  });
const originals = CONTACTS - TWINS;
for (let i = 0; i < originals; i++) await rows.add(contact(person(i), i));
for (let k = 0; k < TWINS; k++) await rows.add(contact(twin(k, person((k * 97) % originals)), originals + k));
await rows.done();
bulk.close();
say(`seeded ${CONTACTS.toLocaleString('en')} contacts (${TWINS} second records) in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);

/** A copy of this build whose audit log writes nothing: the audit's cost is the difference. */
function noAuditBuild(): string {
  const root = path.join(ROOT, '.bench/no-audit');
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  cpSync(path.join(ROOT, 'dist'), path.join(root, 'dist'), { recursive: true });
  const file = path.join(root, 'dist/modules/audit/audit.service.js');
  const text = readFileSync(file, 'utf8');
  const patched = text.replace(/export function recordAudit\(([^)]*)\) \{/, 'export function recordAudit($1) {\n    return Promise.resolve();');
  if (patched === text) throw new Error(`${file}: no \`export function recordAudit(…) {\` to stub (renamed?)`);
  writeFileSync(file, patched);
  return path.join(root, 'dist/cli/index.js');
}

const serve = (cli: string, dataDir: string) => startProcess([...SERVE_NODE_ARGS, cli, 'serve'], { ...env, DATA_DIR: dataDir }, '/healthz');
const lines: string[] = [];
let server: Proc | undefined;
const servers: { name: string; proc: Proc; dir: string }[] = [];
try {
  server = await serve(CLI, dir);
  const get = async (p: string) => {
    const t0 = performance.now();
    const r = await fetch(`${server!.url}/api/v1${p}`, { headers: { 'x-api-key': key } });
    const body = (await r.json()) as any;
    if (r.status !== 200) throw new Error(`${p}: ${r.status} ${JSON.stringify(body)}`);
    return { ms: performance.now() - t0, body };
  };
  const post = async (p: string, body: unknown) => {
    const r = await fetch(`${server!.url}/api/v1${p}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<any>;
  };

  // 1. Duplicates: the first page, at one connection.
  const first = await get('/contacts/duplicates');
  const { total } = first.body.pagination;
  if (total < TWINS / 2) throw new Error(`only ${total} pairs found for ${TWINS} second records`);
  for (let i = 0; i < 5; i++) await get('/contacts/duplicates');
  const dupTimes: number[] = [];
  for (let i = 0; i < 50; i++) dupTimes.push((await get('/contacts/duplicates')).ms);
  const dupP50 = median(dupTimes);
  lines.push(
    `| GET /contacts/duplicates, first page (${CONTACTS.toLocaleString('en')} contacts, ${total} pairs) | p50 ${ms(dupP50)} ms, p99 ${ms(
      quantile(
        [...dupTimes].sort((a, b) => a - b),
        0.99,
      ),
    )} ms, first call ${ms(first.ms)} ms | < ${TARGETS.duplicatesMs} ms | ${dupP50 < TARGETS.duplicatesMs ? 'met' : 'missed'} |`,
  );
  say(lines[lines.length - 1]);

  // 2. Merge: two contacts with ACTIVITIES activities (in the tables) and DEALS deals (through the API) each.
  const loaded = async (name: string) => {
    const { id } = await post('/contacts', { firstName: name, email: `${name}@merge.bench.test` });
    for (let i = 0; i < DEALS; i += 100) {
      const inputs = Array.from({ length: Math.min(100, DEALS - i) }, (_, k) => ({
        title: `${name} ${i + k}`,
        pipelineId: setup.refs.p,
        stageId: setup.refs.s,
        contactId: id,
      }));
      await post('/deals/batch/create', { inputs });
    }
    const now = new Date().toISOString();
    const acts = Array.from({ length: ACTIVITIES }, (_, k) => ({
      tenant_id: tenantId,
      id: newId('act'),
      type: 'call',
      title: `${name} call ${k}`,
      description: null,
      due_date: null,
      completed: 0,
      completed_at: null,
      priority: null,
      assigned_to_id: null,
      owner_id: userId,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < acts.length; i += 200) {
      const chunk = acts.slice(i, i + 200);
      await database.db.insertInto('activities').values(chunk).execute();
      await database.db
        .insertInto('activity_links')
        .values(chunk.map((a) => ({ tenant_id: tenantId, activity_id: a.id, object_type: 'contact', object_id: id, position: 0 })))
        .execute();
    }
    return id;
  };
  const count = async (table: 'deals' | 'activity_links', where: (q: any) => any) =>
    Number(
      (
        await where(
          database.db
            .selectFrom(table)
            .select(sql<number>`count(*)`.as('n'))
            .where('tenant_id', '=', tenantId),
        ).executeTakeFirstOrThrow()
      ).n,
    );
  const mergeTimes: number[] = [];
  for (let round = 0; round < MERGE_ROUNDS; round++) {
    const primary = await loaded(`p${round}`);
    const merged = await loaded(`m${round}`);
    const t0 = performance.now();
    await post('/contacts/merge', { primaryId: primary, mergedId: merged });
    mergeTimes.push(performance.now() - t0);
    const deals = await count('deals', (q) => q.where('contact_id', '=', primary));
    const links = await count('activity_links', (q) => q.where('object_type', '=', 'contact').where('object_id', '=', primary));
    if (deals !== 2 * DEALS || links !== 2 * ACTIVITIES) throw new Error(`merge round ${round}: ${deals} deals, ${links} activity links on the primary`);
  }
  const mergeMax = Math.max(...mergeTimes);
  lines.push(
    `| POST /contacts/merge (${ACTIVITIES.toLocaleString('en')} activities, ${DEALS} deals each; ${MERGE_ROUNDS} rounds) | median ${ms(median(mergeTimes))} ms, max ${ms(mergeMax)} ms | < ${TARGETS.mergeMs} ms | ${mergeMax < TARGETS.mergeMs ? 'met' : 'missed'} |`,
  );
  say(lines[lines.length - 1]);
  await server.stop();
  server = undefined;

  // 3. The audit log's cost: both builds, each on its own copy of the database (one database on PostgreSQL).
  const builds = [
    { name: 'this build', cli: CLI },
    { name: 'recordAudit stubbed', cli: noAuditBuild() },
  ];
  // The copies first, while no server writes.
  const dirs = builds.map((b, i) => {
    if (databaseUrl || i === 0) return dir;
    const copy = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-care-'));
    for (const f of ['crm.db', 'crm.db-wal', 'secret.key']) if (existsSync(path.join(dir, f))) copyFileSync(path.join(dir, f), path.join(copy, f));
    return copy;
  });
  for (const [i, b] of builds.entries()) servers.push({ name: b.name, proc: await serve(b.cli, dirs[i]), dir: dirs[i] });
  const dataFile = path.join(dir, 'scenario-data.json');
  const data: ScenarioData = {
    users: [userId],
    pipelineId: setup.refs.p,
    contactIds: [],
    companyIds: [],
    dealIds: [],
    cursors: { shallow: '', deep: '', deepDepth: 100 },
  };
  writeFileSync(dataFile, JSON.stringify(data));
  const create = scenarios(data).find((s) => s.name === 'POST /contacts (unique e-mails)');
  if (!create) throw new Error('bench/scenarios.ts has no "POST /contacts (unique e-mails)"');
  const cpu = new Map<string, number[]>(servers.map((s) => [s.name, []]));
  const rps = new Map<string, number[]>(servers.map((s) => [s.name, []]));
  const phase = { connections: Number(args.connections), duration: Number(args.seconds) };
  for (let round = 0; round < AUDIT_ROUNDS; round++) {
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      const [r] = await drive(s.proc, create, key, dataFile, [phase], 1, undefined, {
        pgDatabase: databaseUrl ? new URL(databaseUrl).pathname.slice(1) : undefined,
      });
      if (r.non2xx > 0) throw new Error(`${s.name}: ${r.non2xx} answers not 2xx (${JSON.stringify(r.statusCodes)})`);
      // The CPU of a create, the database's included: on PostgreSQL its backends' (bench/pg-cpu.ts) beside the server's.
      const total = (r.serverCpuMicrosPerRequest ?? NaN) + (databaseUrl ? (r.dbCpuMicrosPerRequest ?? NaN) : 0);
      cpu.get(s.name)!.push(total);
      rps.get(s.name)!.push(r.requestsPerSec);
      say(
        `audit round ${round + 1}, ${s.name}: ${r.requestsPerSec} creates/s, ${r.serverCpuMicrosPerRequest} µs of server CPU${databaseUrl ? ` and ${r.dbCpuMicrosPerRequest} µs of PostgreSQL's` : ''} each`,
      );
    }
  }
  const [withAudit, without] = servers.map((s) => ({ cpu: median(cpu.get(s.name)!), rps: median(rps.get(s.name)!) }));
  // The median of each round's ratio: the two builds of a round ran within seconds of each other, under the same
  // drift of this machine's speed (±25 % within minutes), which the medians of each build's rounds do not share.
  const [a, b] = servers.map((s) => cpu.get(s.name)!);
  const ratio = median(a.map((x, i) => x / b[i]));
  lines.push(
    `| the audit log's cost on POST /contacts (${AUDIT_ROUNDS} rounds of ${phase.duration} s at ${phase.connections} connections, alternating) | ${databaseUrl ? 'server + PostgreSQL' : 'server'} µs/create ${without.cpu.toFixed(0)} → ${withAudit.cpu.toFixed(0)} (the rounds' ratios: median ×${ratio.toFixed(3)}); creates/s ${without.rps.toFixed(0)} → ${withAudit.rps.toFixed(0)} (×${(withAudit.rps / without.rps).toFixed(3)}) | ≤ ×${TARGETS.auditRatio.toFixed(2)} by CPU per create | ${ratio <= TARGETS.auditRatio ? 'met' : 'missed'} |`,
  );
} finally {
  await server?.stop();
  for (const s of servers) {
    await s.proc.stop();
    if (s.dir !== dir) rmSync(s.dir, { recursive: true, force: true });
  }
  await database.close();
  if (args.keep) say(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
  rmSync(path.join(ROOT, '.bench/no-audit'), { recursive: true, force: true });
}
console.log(`\nCONTRACT Part D at scale (${engine}; bench/data-care.ts)\n`);
console.log('| what | measured | target | |');
console.log('|---|---|---|---|');
for (const l of lines) console.log(l);
