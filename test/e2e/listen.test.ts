// `listen` (issue 50): the SDK's crm-listen and the project's `crm listen`, as real processes against a
// running service, forward the event log to a plain-HTTP receiver on 127.0.0.1 as webhook deliveries:
// the bodies a delivery sends, signed so that the SDK's verifyWebhook and the standardwebhooks package
// both accept them, in the order of the log; --events filters, --replay-from replays, SIGINT exits 0.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../../sdk/src/webhooks.js';
import { CLI, cli, ROOT, serverStarter } from '../helpers/server.js';
import { sampleSetup, scratch, waitUntil } from './cli.helpers.js';

const SDK_BIN = path.join(ROOT, 'sdk/dist/cli-listen.js');

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A plain-HTTP receiver on 127.0.0.1 that keeps every request it gets and answers 200. */
async function receiver() {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, got };
}

interface Listener {
  proc: ChildProcess;
  secret: string;
  stdout(): string;
  /** Sends the signal; resolves the exit code and how long the exit took. */
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
}

/** Starts a listen process and waits for its "Ready" line (the start point is then fixed). */
async function startListen(script: string[], args: string[], env: Record<string, string>): Promise<Listener> {
  const proc = spawn(process.execPath, [...script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  after(() => void (proc.exitCode === null && proc.kill('SIGKILL')));
  await waitUntil(
    async () => {
      if (proc.exitCode !== null) throw new Error(`listen exited (${proc.exitCode}): ${out}${err}`);
      return out.includes('\nReady: ');
    },
    15_000,
    'listen ready',
  );
  const secret = /^Signing secret: (whsec_\S+)$/m.exec(out)?.[1];
  assert.ok(secret, out);
  return {
    proc,
    secret,
    stdout: () => out,
    async stop(signal) {
      const t0 = Date.now();
      proc.kill(signal);
      const code = await exited;
      return { code, ms: Date.now() - t0 };
    },
  };
}

/** Both verifiers accept the delivery; answers its parsed body. */
function verifyBoth(secret: string, r: Received): any {
  const parsed = verifyWebhook(secret, r.headers, r.body);
  const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
  assert.deepEqual(new Webhook(secret).verify(r.body, headers), parsed);
  return parsed;
}

const s = await scratch();
const setup = cli(['setup', 'apply', s.file('setup.json', sampleSetup('Listen e2e'))], s.env);
assert.equal(setup.status, 0, setup.stderr);
const KEY: string = setup.json.apiKeys.full;
const TENANT: string = setup.json.tenantId;
const server = await serverStarter()(s.env);

async function api(method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server.url}/api/v1${p}`, {
    method,
    headers: { 'x-api-key': KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  assert.ok(res.status < 300, `${method} ${p}: ${res.status}`);
  return res.status === 204 ? undefined : res.json();
}

/** Creates, updates and deletes a contact: three events. */
async function lifecycle(email: string): Promise<string> {
  const c = await api('POST', '/contacts', { firstName: 'Ana', lastName: 'Listen', email });
  await api('PATCH', `/contacts/${c.id}`, { score: 42 });
  await api('DELETE', `/contacts/${c.id}`);
  return c.id;
}

/** The stored payload of an event: what a webhook delivery of it sends as its body. */
async function storedPayload(id: string): Promise<string> {
  const row = await s.db().db.selectFrom('events').select('payload').where('id', '=', id).executeTakeFirstOrThrow();
  return row.payload;
}

const allEvents = async (): Promise<{ id: string; type: string }[]> => (await api('GET', '/events?limit=1000')).data;

test('crm listen: from now on, every event of a create-update-delete in order, the bodies of deliveries, verified by both libraries', async () => {
  await api('POST', '/contacts', { firstName: 'Before', email: 'before@listen.test' }); // already in the log: not sent
  const hook = await receiver();
  const l = await startListen([CLI, 'listen'], ['--base-url', server.url, '--key', KEY, '--forward-to', hook.url], s.env);
  const id = await lifecycle('ana.listen@acme.test');
  await waitUntil(async () => hook.got.length >= 3, 10_000, 'three deliveries');

  assert.deepEqual(
    hook.got.map((r) => r.headers['x-service-event']),
    ['contact.created', 'contact.updated', 'contact.deleted'],
  );
  for (const r of hook.got) {
    const body = verifyBoth(l.secret, r);
    assert.equal(body.data.contact.id, id);
    assert.equal(body.tenantId, TENANT);
    // Byte for byte the body the service's delivery sends (the stored payload), with its headers.
    assert.equal(r.body, await storedPayload(String(r.headers['webhook-id'])));
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers['user-agent'], 'Service-Webhook/1.0');
    assert.match(String(r.headers['x-service-signature']), /^sha256=[0-9a-f]{64}$/);
    assert.match(String(r.headers['x-service-delivery']), /^[0-9a-f-]{36}$/);
  }
  assert.equal(hook.got.length, 3, 'nothing else (the earlier contact is not replayed)');
  assert.equal((l.stdout().match(/--> contact\.\w+ evt_\S+ {2}\[200\] \d+ ms/g) ?? []).length, 3, l.stdout());

  const stopped = await l.stop('SIGINT');
  assert.equal(stopped.code, 0);
  assert.ok(stopped.ms < 3000, `SIGINT took ${stopped.ms} ms (the long-poll must be aborted)`);
});

test('npx crm-listen: --events contact.deleted forwards only those; --secret signs with the given secret; SIGTERM exits 0', async () => {
  const hook = await receiver();
  const secret = 'whsec_' + Buffer.alloc(24, 7).toString('base64');
  const args = [
    '--base-url',
    `${server.url}/api/v1`,
    '--key',
    KEY,
    '--forward-to',
    hook.url,
    '--events',
    'contact.deleted',
    '--secret',
    secret,
    '--tenant-id',
    TENANT,
  ];
  const l = await startListen([SDK_BIN], args, s.env);
  assert.equal(l.secret, secret);
  const id = await lifecycle('bruno.listen@acme.test');
  await waitUntil(async () => hook.got.length >= 1, 10_000, 'the deletion');
  await api('POST', '/contacts', { firstName: 'After', email: 'after@listen.test' });
  await api('DELETE', `/contacts/${(await api('POST', '/contacts', { firstName: 'Gone', email: 'gone@listen.test' })).id}`);
  await waitUntil(async () => hook.got.length >= 2, 10_000, 'the second deletion');

  assert.deepEqual(
    hook.got.map((r) => verifyBoth(secret, r).event),
    ['contact.deleted', 'contact.deleted'],
  );
  assert.equal(verifyBoth(secret, hook.got[0]).data.contact.id, id);
  assert.equal(hook.got[0].body, await storedPayload(String(hook.got[0].headers['webhook-id'])));
  const stopped = await l.stop('SIGTERM');
  assert.equal(stopped.code, 0);
  assert.ok(stopped.ms < 3000, `SIGTERM took ${stopped.ms} ms`);
});

test('--replay-from <event id> forwards every event after that one, in the order of the log; `start` every event', async () => {
  const log = await allEvents();
  assert.ok(log.length >= 8, JSON.stringify(log));
  const from = log[2].id;
  const hook = await receiver();
  const l = await startListen([SDK_BIN], ['--base-url', server.url, '--key', KEY, '--forward-to', hook.url, '--replay-from', from], s.env);
  await waitUntil(async () => hook.got.length >= log.length - 3, 10_000, 'the replay');
  assert.deepEqual(
    hook.got.map((r) => r.headers['webhook-id']),
    log.slice(3).map((e) => e.id),
  );
  for (const r of hook.got) verifyBoth(l.secret, r);
  // …and it goes on with new events.
  await lifecycle('carla.listen@acme.test');
  await waitUntil(async () => hook.got.length >= log.length, 10_000, 'the new events');
  assert.deepEqual(
    hook.got.slice(-3).map((r) => verifyBoth(l.secret, r).event),
    ['contact.created', 'contact.updated', 'contact.deleted'],
  );
  assert.equal((await l.stop('SIGINT')).code, 0);

  const all = await receiver();
  const everything = await startListen([SDK_BIN], ['--base-url', server.url, '--key', KEY, '--forward-to', all.url, '--replay-from', 'start'], s.env);
  const now = await allEvents();
  await waitUntil(async () => all.got.length >= now.length, 10_000, 'every event');
  assert.deepEqual(
    all.got.map((r) => r.headers['webhook-id']),
    now.map((e) => e.id),
  );
  assert.equal((await everything.stop('SIGINT')).code, 0);
});

test('a bad key stops at once with exit 1; a command-line mistake is exit 2 with the usage', async () => {
  const bad = spawn(process.execPath, [SDK_BIN, '--base-url', server.url, '--key', 'crm_live_' + 'x'.repeat(40), '--forward-to', 'http://127.0.0.1:1/h'], {
    env: s.env,
  });
  let err = '';
  bad.stderr.on('data', (d) => (err += d));
  assert.equal(await new Promise((r) => bad.on('exit', r)), 1);
  assert.match(err, /answered 401/);
  const usage = cli(['listen', '--key', KEY], s.env);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /--forward-to is required/);
});
