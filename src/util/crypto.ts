import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (CONTRACT A.2 `CRM_SECRET_KEY`): AES-256-GCM with a random 96-bit nonce.
 * Stored form: `v1.<base64 nonce>.<base64 ciphertext>.<base64 tag>`. The `aad` binds a ciphertext to
 * the row it belongs to, so a value copied into another row does not decrypt there.
 */
const VERSION = 'v1';

export function encryptSecret(key: Buffer, plaintext: string, aad: string): string {
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64'), ct.toString('base64'), cipher.getAuthTag().toString('base64')].join('.');
}

export class SecretDecryptError extends Error {}

export function decryptSecret(key: Buffer, stored: string, aad: string): string {
  const parts = stored.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new SecretDecryptError('unknown secret format');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[1], 'base64'));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(parts[3], 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(parts[2], 'base64')), decipher.final()]).toString('utf8');
  } catch {
    // Wrong CRM_SECRET_KEY, or a tampered value. The message never carries key material.
    throw new SecretDecryptError('the secret cannot be decrypted with the configured CRM_SECRET_KEY');
  }
}

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** `whsec_` + standard base64 of 24 random bytes (32 characters): the Standard Webhooks form. */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** What reads show of a secret: `whsec_` + the first 4 characters of the base64 part. */
export function webhookSecretHint(secret: string): string {
  return secret.slice(0, WEBHOOK_SECRET_PREFIX.length + 4);
}

/** `sha256=<hex>`: HMAC-SHA256 of the raw body keyed with the full secret string (CONTRACT B.9). */
export function serviceSignature(secret: string, body: Buffer | string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** Standard Webhooks `v1,<base64>` over `${id}.${timestamp}.${body}`, keyed with the decoded secret. */
export function standardSignature(secret: string, id: string, timestamp: number, body: Buffer | string): string {
  const key = Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/**
 * A key of its own for one use (`label`), derived from the master key by HKDF-SHA256: a value sealed or signed
 * for one use can never be taken for another, and no use holds the master key itself.
 */
export function subkey(master: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), label, 32));
}
