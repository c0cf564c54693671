// Custom webhook headers (often `Authorization` tokens) are encrypted at rest like the secret: neither the
// column nor the database file holds them; reads over the API and the deliveries still carry them in clear.
// Rows written before the change (plaintext JSON) keep working and are sealed at start or on first write.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { withTx } from '../../src/db/index.js';
import { emitEvent } from '../../src/events/outbox.js';
import { encryptSecret, newWebhookSecret, webhookSecretHint } from '../../src/util/crypto.js';
import { secretAad } from '../../src/modules/webhooks/webhooks.service.js';
import { makeTestCert, opensslAvailable } from '../helpers/test-cert.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { http, stack, type Stack } from '../helpers/webhooks-e2e.js';
import { IS_PG, TEST_SECRET, type RunningServer } from '../helpers/server.js';

const skip = !opensslAvailable() && 'openssl is not available to make the test certificate';
const TOKEN = 's3cr3t-token-value';
const LEGACY_TOKEN = 'legacy-plaintext-token-value';

describe('webhook custom headers at rest', { skip }, () => {
  let rx: Receiver;
  let s: Stack;
  let server: RunningServer;
  let api: ReturnType<typeof http>;
  let tenantId: string;

  before(async () => {
    const cert = makeTestCert();
    rx = await startReceiver(cert);
    s = await stack('whk_headers', {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS: '1,1,1,1',
      WEBHOOK_TIMEOUT_MS: '2000',
      NODE_EXTRA_CA_CERTS: cert.caFile,
    });
    const t = await s.tenant();
    tenantId = t.tenantId;
    // A row as the previous version wrote it: headers as plaintext JSON (before the server starts).
    await insertLegacy('whk_legacy_at_start', '/legacy-start');
    server = await s.start();
    api = http(server.url, t.apiKeys.full);
  });
  after(async () => {
    await server?.stop();
    await rx?.close();
  });

  async function insertLegacy(id: string, receiverPath: string) {
    const secret = newWebhookSecret();
    const now = new Date().toISOString();
    await s.database.db
      .insertInto('webhooks')
      .values({
        tenant_id: tenantId,
        id,
        name: id,
        url: rx.url(receiverPath),
        events: JSON.stringify(['deal.won']),
        is_active: 1,
        headers: JSON.stringify({ Authorization: `Bearer ${LEGACY_TOKEN}` }),
        secret_enc: encryptSecret(Buffer.from(TEST_SECRET, 'hex'), secret, secretAad(tenantId, id)),
        secret_prefix: webhookSecretHint(secret),
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  const column = async (id: string) =>
    (await s.database.db.selectFrom('webhooks').select('headers').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirstOrThrow()).headers;

  /** Every byte of the embedded database (main file and write-ahead log). */
  function databaseBytes(): Buffer {
    const file = path.join(s.dataDir, 'crm.db');
    return Buffer.concat([file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f)));
  }

  test("a created webhook's Authorization header is neither in its column nor in the database file; reads mask it, deliveries carry it", async () => {
    const c = await api.post('/webhooks', {
      name: 'h',
      url: rx.url('/new'),
      events: ['deal.won'],
      headers: { Authorization: `Bearer ${TOKEN}`, 'X-Env': 'prod-eu' },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    // C.5: values are write-only after creation, even in the create answer.
    assert.deepEqual(c.body.headers, { Authorization: '••••', 'X-Env': '••••' });
    const raw = await column(c.body.id);
    assert.ok(!raw.includes(TOKEN) && !raw.includes('prod-eu'), `column holds ${raw}`);
    assert.match(raw, /^v1\./, 'the versioned encrypted form');
    if (!IS_PG) {
      const bytes = databaseBytes();
      assert.ok(bytes.length > 0);
      assert.equal(bytes.indexOf(TOKEN), -1, 'the token is in the database file');
    }
    assert.deepEqual((await api.get(`/webhooks/${c.body.id}`)).body.headers, { Authorization: '••••', 'X-Env': '••••' });
    assert.deepEqual((await api.get('/webhooks')).body.find((w: any) => w.id === c.body.id).headers.Authorization, '••••');

    // PATCH re-encrypts the new values.
    const p = await api.patch(`/webhooks/${c.body.id}`, { headers: { Authorization: `Bearer ${TOKEN}-2` } });
    assert.deepEqual(p.body.headers, { Authorization: '••••' });
    assert.ok(!(await column(c.body.id)).includes(TOKEN));

    await withTx(s.database.db, (tx) => emitEvent(tx, tenantId, 'deal.won', { id: 'deal_1', title: 'x' }));
    await rx.waitFor(() => rx.on('/new').length >= 1, 10_000, 'the delivery');
    assert.equal(rx.on('/new')[0].headers.authorization, `Bearer ${TOKEN}-2`);

    const tested = await api.post(`/webhooks/${c.body.id}/test`);
    assert.equal(tested.body.success, true, JSON.stringify(tested.body));
    assert.equal(rx.on('/new').at(-1)!.headers.authorization, `Bearer ${TOKEN}-2`);
  });

  test('a plaintext row from before is sealed at start, and a plaintext row met later works and is sealed on its first write', async () => {
    const atStart = await column('whk_legacy_at_start');
    assert.ok(!atStart.includes(LEGACY_TOKEN), `sealed by the start-up pass: ${atStart}`);
    assert.deepEqual((await api.get('/webhooks/whk_legacy_at_start')).body.headers, { Authorization: '••••' });

    await insertLegacy('whk_legacy_late', '/legacy-late');
    assert.deepEqual((await api.get('/webhooks/whk_legacy_late')).body.headers, { Authorization: '••••' });
    await withTx(s.database.db, (tx) => emitEvent(tx, tenantId, 'deal.won', { id: 'deal_2', title: 'y' }));
    await rx.waitFor(() => rx.on('/legacy-late').length >= 1 && rx.on('/legacy-start').length >= 1, 10_000, 'the legacy deliveries');
    assert.equal(rx.on('/legacy-late')[0].headers.authorization, `Bearer ${LEGACY_TOKEN}`);
    assert.equal(rx.on('/legacy-start')[0].headers.authorization, `Bearer ${LEGACY_TOKEN}`);

    const p = await api.patch('/webhooks/whk_legacy_late', { name: 'renamed' });
    assert.equal(p.status, 200);
    assert.deepEqual(p.body.headers, { Authorization: '••••' });
    const late = await column('whk_legacy_late');
    assert.ok(!late.includes(LEGACY_TOKEN), `sealed on first write: ${late}`);
  });
});
