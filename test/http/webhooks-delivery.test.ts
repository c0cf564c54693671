// The pieces of a delivery attempt, without a server process: secrets at rest, both signatures, the
// private-network guard, and one attempt against a real HTTPS receiver on 127.0.0.1.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Agent } from 'undici';
import { Webhook } from 'standardwebhooks';
import { decryptSecret, encryptSecret, newWebhookSecret, serviceSignature, standardSignature, webhookSecretHint } from '../../src/util/crypto.js';
import { createDeliveryDispatcher, isBlockedAddress } from '../../src/modules/webhooks/webhooks.network.js';
import { sendAttempt, utf8Snippet } from '../../src/modules/webhooks/webhooks.sender.js';
import { makeTestCert, opensslAvailable, type TestCert } from '../helpers/test-cert.js';
import { plainHeaders, startReceiver, type Receiver } from '../helpers/https-receiver.js';

test('secret: whsec_ + standard base64 of 24 random bytes; the hint is whsec_ + 4 characters', () => {
  const s = newWebhookSecret();
  assert.match(s, /^whsec_[A-Za-z0-9+/]{32}$/);
  assert.equal(Buffer.from(s.slice(6), 'base64').length, 24);
  assert.notEqual(newWebhookSecret(), s);
  assert.equal(webhookSecretHint(s), s.slice(0, 10));
  assert.equal(webhookSecretHint(s).length, 10);
});

test('secrets at rest: AES-256-GCM, bound to their row, refused with another key or row, tamper-evident', () => {
  const key = randomBytes(32);
  const s = newWebhookSecret();
  const enc = encryptSecret(key, s, 'webhook:t1:w1');
  assert.ok(!enc.includes(s) && !enc.includes(s.slice(6)));
  assert.notEqual(encryptSecret(key, s, 'webhook:t1:w1'), enc, 'a fresh nonce every time');
  assert.equal(decryptSecret(key, enc, 'webhook:t1:w1'), s);
  assert.throws(() => decryptSecret(randomBytes(32), enc, 'webhook:t1:w1'), /cannot be decrypted/);
  assert.throws(() => decryptSecret(key, enc, 'webhook:t1:w2'), /cannot be decrypted/);
  const parts = enc.split('.');
  const ct = Buffer.from(parts[2], 'base64');
  ct[0] ^= 1;
  assert.throws(() => decryptSecret(key, [parts[0], parts[1], ct.toString('base64'), parts[3]].join('.'), 'webhook:t1:w1'), /cannot be decrypted/);
  assert.throws(() => encryptSecret(randomBytes(16), s, 'x'));
});

test('signatures: X-Service-Signature is GitHub-style hex HMAC; webhook-signature verifies with standardwebhooks', () => {
  const secret = newWebhookSecret();
  const body = Buffer.from(JSON.stringify({ event: 'deal.won', data: { deal: { title: 'Ação ✓' } } }));
  const expected = 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
  assert.equal(serviceSignature(secret, body), expected);
  const ts = Math.floor(Date.now() / 1000);
  const sig = standardSignature(secret, 'evt_1', ts, body);
  assert.match(sig, /^v1,[A-Za-z0-9+/]+=*$/);
  const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': sig };
  assert.deepEqual(new Webhook(secret).verify(body.toString('utf8'), headers), JSON.parse(body.toString('utf8')));
  assert.throws(() => new Webhook(newWebhookSecret()).verify(body.toString('utf8'), headers));
  assert.throws(() => new Webhook(secret).verify(body.toString('utf8') + ' ', headers));
});

test('private-network rule: loopback, private, link-local, unique-local, CGNAT, metadata and reserved addresses are refused', () => {
  const blocked = [
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.10',
    '169.254.169.254',
    '169.254.1.1',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '::',
    '::1',
    'fe80::1',
    'febf::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.1.2.3',
    '::ffff:a9fe:a9fe',
    '64:ff9b::7f00:1',
    '2002:c0a8:0001::1',
    'fe80::1%eth0',
    'not-an-ip',
  ];
  const allowed = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '169.255.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8'];
  for (const ip of blocked) assert.equal(isBlockedAddress(ip), true, ip);
  for (const ip of allowed) assert.equal(isBlockedAddress(ip), false, ip);
});

test('snippets are cut at 1 KiB on a UTF-8 boundary', () => {
  assert.equal(utf8Snippet(Buffer.from('ok')), 'ok');
  const s = utf8Snippet(Buffer.from('é'.repeat(600))); // 1200 bytes
  assert.ok(Buffer.byteLength(s) <= 1024);
  assert.equal(s, 'é'.repeat(512));
  const t = utf8Snippet(Buffer.from('a' + '€'.repeat(400)));
  assert.ok(Buffer.byteLength(t) <= 1024 && !t.includes('\ufffd'));
});

describe('one attempt against a real HTTPS receiver', { skip: !opensslAvailable() && 'openssl is not available' }, () => {
  let cert: TestCert;
  let rx: Receiver;
  let trusting: Agent;
  before(async () => {
    cert = makeTestCert();
    rx = await startReceiver(cert);
    trusting = new Agent({ connect: { ca: cert.ca } });
  });
  after(async () => {
    await trusting?.close();
    await rx?.close();
  });

  const attempt = (url: string, extra: Partial<Parameters<typeof sendAttempt>[0]> = {}) =>
    sendAttempt({
      url,
      secret: extra.secret ?? newWebhookSecret(),
      customHeaders: { Authorization: 'Bearer abc', 'X-Custom': 'yes' },
      eventId: 'evt_test1',
      event: 'deal.won',
      body: Buffer.from(JSON.stringify({ event: 'deal.won', tenantId: 't', timestamp: new Date().toISOString(), data: { deal: { id: 'd1' } } })),
      timeoutMs: 1000,
      dispatcher: trusting,
      ...extra,
    });

  test('headers, exact body, both signatures, custom headers', async () => {
    const secret = newWebhookSecret();
    const r = await attempt(rx.url('/ok?x=1'), { secret });
    assert.equal(r.success, true);
    assert.equal(r.statusCode, 200);
    assert.equal(r.responseSnippet, 'ok');
    const got = rx.on('/ok').at(-1)!;
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['user-agent'], 'Service-Webhook/1.0');
    assert.equal(got.headers['x-service-event'], 'deal.won');
    assert.equal(got.headers['x-service-delivery'], r.attemptId);
    assert.match(String(got.headers['x-service-delivery']), /^[0-9a-f-]{36}$/);
    assert.equal(got.headers['webhook-id'], 'evt_test1');
    assert.ok(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000) < 5);
    assert.equal(got.headers.authorization, 'Bearer abc');
    assert.equal(got.headers['x-custom'], 'yes');
    const mine = Buffer.from('sha256=' + createHmac('sha256', secret).update(got.body).digest('hex'));
    const theirs = Buffer.from(String(got.headers['x-service-signature']));
    assert.ok(mine.length === theirs.length && timingSafeEqual(mine, theirs));
    assert.ok(new Webhook(secret).verify(got.body.toString('utf8'), plainHeaders(got.headers)));
  });

  test('non-2xx, redirects (not followed), 1 KiB snippet, timeout, refused connection', async () => {
    rx.route('/e500', { status: 500, body: 'boom' });
    rx.route('/e404', { status: 404, body: 'nope' });
    rx.route('/redirect', { status: 302, headers: { location: rx.url('/ok') } });
    rx.route('/big', { status: 201, body: 'x'.repeat(100_000) });
    rx.route('/slow', { hang: true });
    const e500 = await attempt(rx.url('/e500'));
    assert.deepEqual([e500.success, e500.statusCode, e500.responseSnippet, e500.error], [false, 500, 'boom', 'HTTP 500']);
    const e404 = await attempt(rx.url('/e404'));
    assert.deepEqual([e404.success, e404.statusCode], [false, 404]);
    const before = rx.on('/ok').length;
    const redirect = await attempt(rx.url('/redirect'));
    assert.equal(redirect.success, false);
    assert.equal(redirect.statusCode, 302);
    assert.match(redirect.error!, /redirect/);
    assert.equal(rx.on('/ok').length, before, 'the redirect was not followed');
    const big = await attempt(rx.url('/big'));
    assert.equal(big.success, true);
    assert.equal(big.responseSnippet, 'x'.repeat(1024));
    const t0 = Date.now();
    const slow = await attempt(rx.url('/slow'), { timeoutMs: 300 });
    assert.equal(slow.success, false);
    assert.equal(slow.statusCode, null);
    assert.match(slow.error!, /timeout/);
    assert.ok(Date.now() - t0 < 2000);
    const refused = await attempt('https://127.0.0.1:1/none');
    assert.equal(refused.success, false);
    assert.match(refused.error!, /refused/);
  });

  test('TLS is verified: an untrusted certificate fails the attempt', async () => {
    const d = createDeliveryDispatcher({ allowPrivateNetworks: true, timeoutMs: 1000 });
    const r = await attempt(rx.url('/ok'), { dispatcher: d });
    await d.close();
    assert.equal(r.success, false);
    assert.match(r.error!, /TLS|certificate/i);
  });

  test('the guard refuses loopback by IP literal and by name (after DNS), unless private networks are allowed', async () => {
    const d = createDeliveryDispatcher({ allowPrivateNetworks: false, timeoutMs: 1000 });
    const n = rx.requests.length;
    const byIp = await attempt(rx.url('/ok'), { dispatcher: d });
    assert.equal(byIp.success, false);
    assert.match(byIp.error!, /127\.0\.0\.1.*private or reserved/);
    const byName = await attempt(`https://localhost:${rx.port}/ok`, { dispatcher: d });
    assert.equal(byName.success, false);
    assert.match(byName.error!, /localhost resolves to .*private or reserved/);
    const v6 = await attempt(`https://[::1]:${rx.port}/ok`, { dispatcher: d });
    assert.match(v6.error!, /::1.*private or reserved/);
    await d.close();
    assert.equal(rx.requests.length, n, 'nothing reached the receiver');
  });
});
