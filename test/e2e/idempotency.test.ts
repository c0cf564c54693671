// CONTRACT C.3 with the real process: a stored idempotent answer survives a crash and a restart, and
// the background loop of `crm serve` deletes answers past IDEMPOTENCY_TTL_HOURS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cli, serverStarter } from '../helpers/server.js';
import { sampleSetup, scratch, sleep, waitUntil } from './cli.helpers.js';

const start = serverStarter();

test('an idempotent POST is replayed after kill -9 and restart; the sweep of a restarted server deletes it past its TTL', async () => {
  const s = await scratch();
  const setup = cli(['setup', 'apply', s.file('setup.json', sampleSetup('Idem e2e'))], s.env);
  assert.equal(setup.status, 0, setup.stdout + setup.stderr);
  const apiKey = setup.json.apiKeys.full as string;
  const tenantId = setup.json.tenantId as string;
  const post = (url: string, body: unknown, key: string) =>
    fetch(`${url}/api/v1/contacts`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
  const body = { firstName: 'Restart', email: 'restart@idem.test' };
  const key = 'order-2026-11-23-0001';

  const first = await start(s.env);
  const r1 = await post(first.url, body, key);
  assert.equal(r1.status, 201);
  assert.equal(r1.headers.get('idempotent-replayed'), null);
  const text1 = await r1.text();
  const postedAt = Date.now();
  await first.kill();

  const second = await start(s.env);
  const r2 = await post(second.url, body, key);
  assert.equal(r2.status, 201);
  assert.equal(r2.headers.get('idempotent-replayed'), 'true');
  assert.equal(await r2.text(), text1);
  const reused = await post(second.url, { ...body, firstName: 'Other' }, key);
  assert.equal(reused.status, 422);
  assert.equal((await reused.json()).error, 'idempotency_key_reused');
  assert.equal(await second.stop(), 0);

  const db = s.db().db;
  const contacts = () => db.selectFrom('contacts').select('id').where('tenant_id', '=', tenantId).where('email', '=', body.email).execute();
  assert.equal((await contacts()).length, 1);
  assert.equal((await db.selectFrom('idempotency_keys').select('idem_key').where('tenant_id', '=', tenantId).execute()).length, 1);

  // 0.001 h = 3.6 s: once the answer is older than that, the loop's first pass at start deletes it.
  await sleep(Math.max(0, postedAt + 4_000 - Date.now()));
  const third = await start({ ...s.env, IDEMPOTENCY_TTL_HOURS: '0.001' });
  await waitUntil(
    async () => (await db.selectFrom('idempotency_keys').select('idem_key').where('tenant_id', '=', tenantId).execute()).length === 0,
    10_000,
    'the expired answer to be swept',
  );
  const r3 = await post(third.url, { firstName: 'After TTL' }, key);
  assert.equal(r3.status, 201);
  assert.equal(r3.headers.get('idempotent-replayed'), null);
  assert.equal(await third.stop(), 0);
});
