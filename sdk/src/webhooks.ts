import { createHmac, timingSafeEqual } from 'node:crypto';
import type { webhooks } from './schema.js';

/** The body of a webhook delivery, discriminated by `event` (`contact.created`, `deal.won`, …). */
export type WebhookPayload = {
  [K in keyof webhooks]: webhooks[K]['post'] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
}[keyof webhooks];

/** Headers as Node (`req.headers`), the Fetch API (`Headers`) or a plain object give them; names are matched case-insensitively. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time (tests). */
  now?: Date;
}

export type WebhookVerificationReason = 'missing_headers' | 'invalid_timestamp' | 'timestamp_out_of_tolerance' | 'invalid_signature' | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

const PREFIX = 'whsec_';

/**
 * Verifies a delivery and returns its parsed body; throws `WebhookVerificationError` otherwise.
 * Pass the raw body bytes exactly as received (before any JSON parsing).
 *
 * - `webhook-signature` (Standard Webhooks): `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`,
 *   keyed with the base64-decoded part of the secret after `whsec_`; any of its space-separated signatures may match.
 * - `X-Service-Signature`: `sha256=<hex HMAC-SHA256>` of the body keyed with the whole secret string.
 *
 * Every signature header present must match, and at least one must be. `webhook-timestamp` is required and
 * must be within `toleranceSeconds` of now: the Standard Webhooks signature covers it, which is what makes a
 * captured delivery useless for a replay later. Comparisons are constant-time.
 */
export function verifyWebhook(secret: string, headers: WebhookHeaders, rawBody: string | Uint8Array, options: VerifyOptions = {}): WebhookPayload {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const header = headerReader(headers);
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const standard = header('webhook-signature');
  const service = header('x-service-signature');

  if (standard === undefined && service === undefined)
    throw new WebhookVerificationError('missing_headers', 'no webhook-signature or X-Service-Signature header');
  if (timestamp === undefined) throw new WebhookVerificationError('missing_headers', 'no webhook-timestamp header');
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not a number of seconds');
  const now = Math.floor((options.now?.getTime() ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `webhook-timestamp is more than ${tolerance} s from now`);
  }

  if (standard !== undefined) {
    if (id === undefined) throw new WebhookVerificationError('missing_headers', 'no webhook-id header');
    const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
    const matches = standard.split(' ').some((candidate) => {
      const [version, signature] = candidate.split(',', 2);
      return version === 'v1' && signature !== undefined && safeEqual(Buffer.from(signature, 'base64'), expected);
    });
    if (!matches) throw new WebhookVerificationError('invalid_signature', 'webhook-signature does not match');
  }
  if (service !== undefined) {
    const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(body).digest('hex'));
    if (!safeEqual(Buffer.from(service.trim()), expected)) throw new WebhookVerificationError('invalid_signature', 'X-Service-Signature does not match');
  }

  try {
    return JSON.parse(body.toString('utf8')) as WebhookPayload;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'the body is not JSON');
  }
}

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function headerReader(headers: WebhookHeaders): (name: string) => string | undefined {
  if (typeof (headers as Headers).get === 'function') return (name) => (headers as Headers).get(name) ?? undefined;
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : v]));
  return (name) => lower.get(name) ?? undefined;
}
