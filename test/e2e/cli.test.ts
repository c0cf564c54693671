// The operator CLI as a real process (CONTRACT A.1): stdout is only JSON, exit 0 on success, non-zero
// with `{ error, message }` on failure; setup apply is all-or-nothing and names the bad path.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { cli, IS_PG, startServer, type RunningServer } from '../helpers/server.js';
import { countTenants, sampleSetup, scratch, sleep, waitUntil } from './cli.helpers.js';

const servers: RunningServer[] = [];
after(async () => {
  for (const s of servers) await s.stop();
});

/** Every CLI answer: stdout is one JSON document (nothing else), whatever the outcome. */
function run(args: string[], env: Record<string, string>) {
  const r = cli(args, env);
  assert.ok(r.json !== undefined, `stdout of crm ${args.join(' ')} is not JSON: ${JSON.stringify(r.stdout)}`);
  return r;
}

function assertFails(args: string[], env: Record<string, string>, error?: string) {
  const r = run(args, env);
  assert.notEqual(r.status, 0, `crm ${args.join(' ')} should fail`);
  assert.equal(typeof r.json.error, 'string', r.stdout);
  assert.equal(typeof r.json.message, 'string', r.stdout);
  assert.ok(r.json.message.length > 0);
  if (error) assert.equal(r.json.error, error, r.stdout);
  return r.json;
}

const KEY_FIELDS = ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'rateLimit', 'revokedAt', 'scopes'];

test('migrate applies the schema once, then nothing', async () => {
  const s = await scratch();
  const first = run(['migrate'], s.env);
  assert.equal(first.status, 0, first.stderr);
  assert.ok(first.json.applied.includes('001_initial'), first.stdout);
  const second = run(['migrate'], s.env);
  assert.equal(second.status, 0);
  assert.deepEqual(second.json, { applied: [] });
});

test('usage errors, bad flags and bad values answer JSON errors with a non-zero exit', async () => {
  const s = await scratch();
  const setup = run(['setup', 'apply', s.file('setup.json', sampleSetup())], s.env);
  assert.equal(setup.status, 0, setup.stdout + setup.stderr);
  const tenant = setup.json.tenantId;
  const ok = ['keys', 'create', '--tenant', tenant, '--name', 'n', '--scopes', 'contacts:read'];

  for (const args of [[], ['bogus'], ['keys'], ['migrate', 'extra'], ['setup', 'apply'], ['--nope']]) {
    assertFails(args, s.env, 'usage');
  }
  assertFails(['keys', 'create', '--tenant', tenant, '--name', 'n'], s.env, 'usage'); // missing --scopes
  assertFails([...ok, '--bogus', '1'], s.env, 'usage');
  assertFails([...ok, '--rate-limit'], s.env, 'usage'); // flag without its value
  for (const rl of ['5000', 'abc', '0']) {
    const e = assertFails([...ok, '--rate-limit', rl], s.env, 'validation_failed');
    assert.match(e.message, /rateLimit/);
  }
  assert.equal(assertFails([...ok.slice(0, -1), 'contacts:read,nope:read'], s.env, 'validation_failed').path, 'scopes[1]');
  assertFails([...ok, '--expires-at', 'next tuesday'], s.env, 'validation_failed');
  assertFails([...ok, '--user', 'usr_missing'], s.env, 'not_found');
  assertFails(['keys', 'create', '--tenant', 'ten_missing', '--name', 'n', '--scopes', 'contacts:read'], s.env, 'not_found');
  assertFails(['keys', 'list', '--tenant', 'ten_missing'], s.env, 'not_found');
  assertFails(['keys', 'revoke', 'key_missing'], s.env, 'not_found');
  assertFails(['setup', 'apply', `${s.dataDir}/missing.json`], s.env);
  assertFails(['setup', 'apply', s.file('broken.json', '{ "tenant": ')], s.env);

  // Configuration errors name the variable.
  for (const [name, value] of [
    ['PORT', 'abc'],
    ['WORKERS', 'maybe'],
    ['DATABASE_URL', 'mysql://x'],
  ]) {
    const e = assertFails(['migrate'], { ...s.env, [name]: value }, 'invalid_config');
    assert.match(e.message, new RegExp(name));
  }
  assertFails(['serve'], { ...s.env, PORT: 'abc' }, 'invalid_config');
  assertFails(['migrate'], { ...s.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere', CRM_SECRET_KEY: '33'.repeat(32) }, 'database_unavailable');

  // Nothing above created a key.
  assert.deepEqual(run(['keys', 'list', '--tenant', tenant], s.env).json.length, 2);

  // --help succeeds and still prints JSON.
  const help = run(['--help'], s.env);
  assert.equal(help.status, 0);
  assert.match(help.json.help, /keys/);
});

test('setup apply provisions a tenant and maps refs to ids; the keys work', async () => {
  const s = await scratch();
  const r = run(['setup', 'apply', s.file('setup.json', sampleSetup())], s.env);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.deepEqual(Object.keys(r.json).sort(), ['apiKeys', 'refs', 'tenantId']);
  assert.equal(typeof r.json.tenantId, 'string');
  for (const ref of ['ana', 'bruno', 'full', 'ro', 'sales', 'lead', 'proposal', 'won', 'lost', 'price', 'segment', 'contact_us', 'hot', 'vip']) {
    assert.equal(typeof r.json.refs[ref], 'string', `ref ${ref}`);
  }
  assert.equal(new Set(Object.values(r.json.refs)).size, Object.keys(r.json.refs).length);
  assert.deepEqual(Object.keys(r.json.apiKeys).sort(), ['full', 'ro']);
  for (const k of Object.values<string>(r.json.apiKeys)) assert.match(k, /^crm_live_[0-9A-Za-z]{32,}$/);
  assert.equal(await countTenants(s), 1);

  const server = await startServer(s.env);
  servers.push(server);
  const get = (url: string, key: string) => fetch(`${server.url}/api/v1${url}`, { headers: { 'x-api-key': key } });
  const pipelines = await get('/pipelines', r.json.apiKeys.full);
  assert.equal(pipelines.status, 200);
  const body: any = await pipelines.json();
  const sales = (Array.isArray(body) ? body : body.data).find((p: any) => p.id === r.json.refs.sales);
  assert.ok(sales, 'the provisioned pipeline is served');
  // The read-only key is limited to its scope.
  assert.equal((await get('/pipelines', r.json.apiKeys.ro)).status, 403);
  await server.stop();
});

test('an invalid setup file changes nothing and names the path of the bad value', async () => {
  const s = await scratch();
  assert.equal(run(['migrate'], s.env).status, 0);
  // A representative set through the real process; test/http/setup.test.ts covers every rule of applySetup.
  const cases: [string, (f: any) => void, string][] = [
    ['probability over 100', (f) => (f.pipelines[0].stages[2].probability = 150), 'pipelines[0].stages[2].probability'],
    ['unknown field', (f) => (f.pipelines[0].stages[1].color = 'red'), 'pipelines[0].stages[1].color'],
    ['bad scope', (f) => (f.apiKeys[1].scopes = ['contacts:read', 'nope:read']), 'apiKeys[1].scopes[1]'],
    ['duplicate ref', (f) => (f.pipelines[0].stages[1].ref = 'ana'), 'pipelines[0].stages[1].ref'],
    ['bad filter field', (f) => (f.lists[0].filters.conditions[0].field = 'nope'), 'lists[0].filters.conditions[0].field'],
    ['mapsTo an unknown property', (f) => (f.forms[0].fields[2].mapsTo = 'customProperties.ghost'), 'forms[0].fields[2].mapsTo'],
  ];
  for (const [what, mutate, path] of cases) {
    const f = sampleSetup();
    mutate(f);
    const e = assertFails(['setup', 'apply', s.file('bad.json', f)], s.env, 'validation_failed');
    assert.equal(e.path, path, `${what}: ${e.message}`);
    assert.ok(e.message.includes(path), `${what}: the message names the path (${e.message})`);
    assert.equal(await countTenants(s), 0, `${what}: nothing written`);
  }
  // The valid file still applies afterwards, and twice (a second tenant; user e-mails may repeat across tenants).
  assert.equal(run(['setup', 'apply', s.file('good.json', sampleSetup())], s.env).status, 0);
  assert.equal(run(['setup', 'apply', s.file('good.json', sampleSetup())], s.env).status, 0);
  assert.equal(await countTenants(s), 2);
});

test('keys: create, list without secrets, use, revoke (refused by a running server within 5 s), expiry', async () => {
  const s = await scratch();
  const setup = run(['setup', 'apply', s.file('setup.json', sampleSetup())], s.env).json;
  const tenant = setup.tenantId;
  const server = await startServer(s.env);
  servers.push(server);
  const call = async (key: string, url = '/contacts') => {
    const r = await fetch(`${server.url}/api/v1${url}`, { headers: { 'x-api-key': key } });
    return { status: r.status, body: (await r.json()) as any };
  };

  const created = run(
    ['keys', 'create', '--tenant', tenant, '--name', ' Reporting ', '--scopes', 'contacts:read, deals:read', '--user', setup.refs.ana, '--rate-limit', '50'],
    s.env,
  );
  assert.equal(created.status, 0, created.stdout);
  assert.deepEqual(Object.keys(created.json).sort(), ['expiresAt', 'id', 'key', 'name', 'rateLimit', 'scopes']);
  assert.match(created.json.key, /^crm_live_[0-9A-Za-z]{32,}$/);
  assert.equal(created.json.name, 'Reporting');
  assert.deepEqual(created.json.scopes, ['contacts:read', 'deals:read']);
  assert.equal(created.json.rateLimit, 50);
  assert.equal(created.json.expiresAt, null);

  // Defaults: no user, rate limit 100 (spec), no expiry; `*` is a scope.
  const plain = run(['keys', 'create', '--tenant', tenant, '--name', 'Everything', '--scopes', '*'], s.env).json;
  assert.equal(plain.rateLimit, 100);
  assert.deepEqual(plain.scopes, ['*']);

  const ok = await call(created.json.key);
  assert.equal(ok.status, 200);
  assert.equal((await call(created.json.key, '/deals')).status, 200);
  assert.equal((await call(created.json.key, '/companies')).status, 403); // scopes are literal

  const list = run(['keys', 'list', '--tenant', tenant], s.env);
  assert.equal(list.status, 0);
  assert.ok(Array.isArray(list.json));
  assert.equal(list.json.length, 4);
  for (const k of list.json) {
    assert.deepEqual(Object.keys(k).sort(), KEY_FIELDS);
    assert.ok(created.json.key.startsWith(k.prefix) || !k.id.includes(created.json.id));
  }
  const mine = list.json.find((k: any) => k.id === created.json.id);
  assert.ok(created.json.key.startsWith(mine.prefix) && mine.prefix.length < 20, 'only a short display prefix');
  assert.deepEqual(mine.scopes, ['contacts:read', 'deals:read']);
  assert.equal(mine.revokedAt, null);
  assert.doesNotMatch(list.stdout, new RegExp(created.json.key.slice(14)), 'no secret in the listing');

  // Revocation: refused by the running server within 5 s.
  const revoked = run(['keys', 'revoke', created.json.id], s.env);
  assert.equal(revoked.status, 0);
  assert.deepEqual(Object.keys(revoked.json).sort(), ['id', 'revokedAt']);
  assert.equal(revoked.json.id, created.json.id);
  assert.match(revoked.json.revokedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const took = await waitUntil(
    async () => {
      const r = await call(created.json.key);
      if (r.status === 401) assert.equal(r.body.error, 'invalid_api_key');
      return r.status === 401;
    },
    5_000,
    'revoked key refused',
  );
  assert.ok(took <= 5_000);
  assert.equal(run(['keys', 'list', '--tenant', tenant], s.env).json.find((k: any) => k.id === created.json.id).revokedAt, revoked.json.revokedAt);
  // Other keys are unaffected.
  assert.equal((await call(setup.apiKeys.full)).status, 200);

  // Expiry: works until expiresAt, refused within 5 s after it.
  const expiresAt = new Date(Date.now() + 3_000).toISOString();
  const temp = run(['keys', 'create', '--tenant', tenant, '--name', 'Temp', '--scopes', 'contacts:read', '--expires-at', expiresAt], s.env).json;
  assert.equal(temp.expiresAt, expiresAt);
  assert.equal((await call(temp.key)).status, 200);
  await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()));
  await waitUntil(async () => (await call(temp.key)).status === 401, 5_000, 'expired key refused');

  // A key is tenant-bound: another tenant's key cannot list this tenant's keys through the API, and
  // the CLI's listing is per tenant.
  const other = run(['setup', 'apply', s.file('other.json', sampleSetup('Other'))], s.env).json;
  assert.equal(run(['keys', 'list', '--tenant', other.tenantId], s.env).json.length, 2);
  await server.stop();
});

test('crm demo provisions a realistic tenant in well under a minute', { timeout: 120_000 }, async () => {
  const s = await scratch();
  const started = Date.now();
  const r = run(['demo'], s.env);
  const took = Date.now() - started;
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.ok(took < 60_000, `demo took ${took} ms`);
  assert.deepEqual(Object.keys(r.json).sort(), ['apiKeys', 'refs', 'tenantId']);
  assert.match(r.json.apiKeys.full, /^crm_live_/);
  assert.ok(r.stderr.length > 0, 'progress on stderr');

  const server = await startServer(s.env);
  servers.push(server);
  const get = async (url: string) => {
    const res = await fetch(`${server.url}/api/v1${url}`, { headers: { 'x-api-key': r.json.apiKeys.full } });
    assert.equal(res.status, 200, url);
    return (await res.json()) as any;
  };
  assert.ok((await get('/contacts?pageSize=1')).pagination.total >= 150);
  assert.ok((await get('/companies?pageSize=1')).pagination.total >= 40);
  const deals = await get('/deals?pageSize=100');
  assert.ok(deals.pagination.total >= 60);
  assert.ok((await get('/deals?isWon=true&pageSize=1')).pagination.total > 0);
  assert.ok((await get('/deals?isLost=true&pageSize=1')).pagination.total > 0);
  // Proposals in every status, lists with members (the dynamic ones computed), form submissions.
  const proposals = await get('/proposals?limit=100');
  assert.deepEqual([...new Set(proposals.data.map((p: any) => p.status))].sort(), ['accepted', 'declined', 'draft', 'expired', 'sent']);
  const lists = await get('/lists');
  assert.ok(lists.some((l: any) => l.kind === 'static' && l.memberCount > 0));
  assert.ok(lists.some((l: any) => l.kind === 'dynamic' && l.memberCount > 0));
  const forms = await get('/forms');
  const formList = Array.isArray(forms) ? forms : forms.data;
  assert.ok(formList.length > 0);
  assert.ok((await get(`/forms/${formList[0].id}/submissions?limit=1`)).pagination.total >= 10);
  // Activities of every type hang off the deals.
  const types = new Set<string>();
  for (const d of deals.data) {
    const acts = await get(`/activities?relatedType=deal&relatedId=${d.id}`);
    for (const a of Array.isArray(acts) ? acts : acts.data) types.add(a.type);
  }
  assert.deepEqual([...types].sort(), ['call', 'custom', 'email', 'linkedin', 'meeting', 'note', 'task', 'whatsapp']);
  // The read-only key reads but cannot write.
  const ro = Object.entries<string>(r.json.apiKeys).find(([ref]) => ref !== 'full')![1];
  const roGet = await fetch(`${server.url}/api/v1/deals?pageSize=1`, { headers: { 'x-api-key': ro } });
  assert.equal(roGet.status, 200);
  const roPost = await fetch(`${server.url}/api/v1/contacts`, {
    method: 'POST',
    headers: { 'x-api-key': ro, 'content-type': 'application/json' },
    body: JSON.stringify({ firstName: 'X' }),
  });
  assert.equal(roPost.status, 403);
  await server.stop();
  if (!IS_PG) assert.ok(took < 30_000, `demo took ${took} ms on SQLite`);
});

test('keys commands never create an empty database; they name the database they used', async () => {
  const s = await scratch();
  const args = ['keys', 'create', '--tenant', 'ten_nowhere', '--name', 'n', '--scopes', '*'];
  if (!IS_PG) {
    // A DATA_DIR that is not the server's: refused, and nothing is created there.
    for (const a of [args, ['keys', 'list', '--tenant', 'ten_nowhere'], ['keys', 'revoke', 'key_nowhere']]) {
      const e = assertFails(a, s.env, 'database_not_found');
      assert.ok(e.message.includes(path.join(s.dataDir, 'crm.db')), e.message);
    }
    assert.equal(existsSync(path.join(s.dataDir, 'crm.db')), false, 'no crm.db was created');
  }
  // A database that exists, without that tenant: not_found, naming the database (never a password).
  assert.equal(run(['migrate'], s.env).status, 0);
  const e = assertFails(args, s.env, 'not_found');
  const where = IS_PG ? `postgres://${new URL(s.env.DATABASE_URL).host}${new URL(s.env.DATABASE_URL).pathname}` : path.join(s.dataDir, 'crm.db');
  assert.ok(e.message.includes(`(database: ${where})`), e.message);
});
