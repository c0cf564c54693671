// verifyWebhook against the service's own signer (the headers webhooks.sender.ts puts on every attempt)
// and against the Standard Webhooks reference library, both ways; and everything it must refuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError, type WebhookVerificationReason } from '../../sdk/src/index.js';
import { deliveryHeaders } from '../../src/modules/webhooks/webhooks.sender.js';
import { newWebhookSecret } from '../../src/util/crypto.js';

const secret = newWebhookSecret();
const body = Buffer.from(
  JSON.stringify({ event: 'deal.won', tenantId: 'ten_1', timestamp: '2026-11-22T10:00:00.000Z', data: { deal: { id: 'deal_1', title: 'Ação' } } }),
);
const now = Math.floor(Date.now() / 1000);
/** The headers of one attempt, exactly as the service sends them. */
const signed = (at = now, payload = body, key = secret) =>
  deliveryHeaders({ secret: key, customHeaders: { 'X-Tenant': 'acme' }, eventId: 'evt_123', event: 'deal.won', body: payload }, 'attempt-1', at) as Record<
    string,
    string
  >;

const rejects = (reason: WebhookVerificationReason, fn: () => unknown) =>
  assert.throws(fn, (e: unknown) => e instanceof WebhookVerificationError && e.reason === reason, `expected ${reason}`);

test('a delivery signed by the service verifies, from a Buffer, a string, a Uint8Array or a Headers object', () => {
  const headers = signed();
  const payload = verifyWebhook(secret, headers, body);
  assert.equal(payload.event, 'deal.won');
  if (payload.event === 'deal.won') assert.equal(payload.data.deal.id, 'deal_1');
  assert.deepEqual(verifyWebhook(secret, headers, body.toString('utf8')), payload);
  assert.deepEqual(verifyWebhook(secret, headers, new Uint8Array(body)), payload);
  const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
  assert.deepEqual(verifyWebhook(secret, upper, body), payload, 'header names in any case');
  assert.deepEqual(verifyWebhook(secret, new Headers(headers), body), payload);
});

test('agrees with the standardwebhooks library both ways', () => {
  const wh = new Webhook(secret);
  const headers = signed();
  assert.deepEqual(wh.verify(body.toString('utf8'), headers), verifyWebhook(secret, headers, body));

  const at = new Date();
  const signature = wh.sign('msg_1', at, body.toString('utf8'));
  const theirs = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
  assert.equal(verifyWebhook(secret, theirs, body).event, 'deal.won');
  // Several signatures (a secret being rotated): one match is enough.
  const other = new Webhook(newWebhookSecret()).sign('msg_1', at, body.toString('utf8'));
  assert.equal(verifyWebhook(secret, { ...theirs, 'webhook-signature': `${other} ${signature}` }, body).event, 'deal.won');
  rejects('invalid_signature', () => verifyWebhook(secret, { ...theirs, 'webhook-signature': other }, body));
});

test('a changed body, id or timestamp, or another secret, is refused', () => {
  const headers = signed();
  const tampered = Buffer.from(body.toString('utf8').replace('deal_1', 'deal_2'));
  rejects('invalid_signature', () => verifyWebhook(secret, headers, tampered));
  rejects('invalid_signature', () => verifyWebhook(secret, { ...headers, 'webhook-id': 'evt_124' }, body));
  rejects('invalid_signature', () => verifyWebhook(secret, { ...headers, 'webhook-timestamp': String(now - 1) }, body));
  rejects('invalid_signature', () => verifyWebhook(newWebhookSecret(), headers, body));
  // Both signatures must hold when both are sent: a valid standard one does not cover a forged X-Service-Signature.
  rejects('invalid_signature', () => verifyWebhook(secret, { ...headers, 'x-service-signature': signed(now, tampered)['x-service-signature'] }, body));
  rejects('invalid_signature', () => verifyWebhook(secret, { ...headers, 'webhook-signature': 'v1,' }, body));
});

test('a timestamp outside the tolerance, either way, is refused; the tolerance is an option', () => {
  // The clock is pinned to `now` (taken when the file loaded): on a busy machine more than a second may pass
  // before this test runs, and `now + 301` would then fall within the tolerance of the real clock.
  const at = { now: new Date(now * 1000) };
  rejects('timestamp_out_of_tolerance', () => verifyWebhook(secret, signed(now - 301), body, at));
  rejects('timestamp_out_of_tolerance', () => verifyWebhook(secret, signed(now + 301), body, at));
  assert.equal(verifyWebhook(secret, signed(now - 290), body, at).event, 'deal.won');
  assert.equal(verifyWebhook(secret, signed(now + 290), body, at).event, 'deal.won');
  rejects('timestamp_out_of_tolerance', () => verifyWebhook(secret, signed(now - 61), body, { ...at, toleranceSeconds: 60 }));
  assert.equal(verifyWebhook(secret, signed(now - 3600), body, { now: new Date((now - 3600) * 1000) }).event, 'deal.won');
  rejects('invalid_timestamp', () => verifyWebhook(secret, { ...signed(), 'webhook-timestamp': '2026-11-22T10:00:00Z' }, body));
});

test('the X-Service-Signature variant: sha256=<hex> of the body keyed with the whole secret', () => {
  const { 'webhook-signature': _s, 'webhook-id': _i, ...variant } = signed();
  assert.match(variant['x-service-signature'], /^sha256=[0-9a-f]{64}$/);
  assert.equal(verifyWebhook(secret, variant, body).event, 'deal.won');
  rejects('invalid_signature', () => verifyWebhook(secret, variant, Buffer.concat([body, Buffer.from(' ')])));
  rejects('invalid_signature', () => verifyWebhook(secret, { ...variant, 'x-service-signature': variant['x-service-signature'].toUpperCase() }, body));
  rejects('timestamp_out_of_tolerance', () => verifyWebhook(secret, { ...variant, 'webhook-timestamp': String(now - 600) }, body));
});

test('missing headers and a body that is not JSON are refused', () => {
  const headers = signed();
  const without = (...names: string[]) => Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k)));
  rejects('missing_headers', () => verifyWebhook(secret, without('webhook-signature', 'x-service-signature'), body));
  rejects('missing_headers', () => verifyWebhook(secret, without('webhook-timestamp'), body));
  rejects('missing_headers', () => verifyWebhook(secret, without('webhook-id', 'x-service-signature'), body));
  const text = Buffer.from('not json');
  rejects('invalid_payload', () => verifyWebhook(secret, signed(now, text), text));
});
