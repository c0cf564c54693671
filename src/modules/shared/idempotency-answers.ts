/**
 * How stored idempotent answers are sealed at rest (CONTRACT C.3): the idempotency plugin seals and opens them;
 * erasure (D.5) opens a tenant's answers to forget those that hold an erased person.
 */
import type { Db } from '../../db/index.js';
import { decryptSecret, encryptSecret, subkey } from '../../util/crypto.js';
import * as repo from './idempotency.repo.js';

/** What binds a sealed answer to its row. */
export interface SealedRow {
  tenantId: string;
  keyId: string;
  idemKey: string;
  fingerprint: string;
}

/**
 * Stored answers are sealed at rest: a POST /webhooks or rotate-secret answer holds the whole `whsec_…`, and any
 * answer may hold personal data, kept for IDEMPOTENCY_TTL_HOURS. AES-256-GCM (`encryptSecret`) under a key of
 * its own derived from CRM_SECRET_KEY; the additional data binds the text to its row (tenant, API key,
 * idempotency key) and to the row's request and status, so a sealed answer copied into another row, or a row
 * whose fingerprint or status was edited, does not open.
 */
const SEAL_LABEL = 'crm/idempotency-answer/v1';
const SEALED_PREFIX = 'v1.';

function answerAad(tenantId: string, keyId: string, idemKey: string, fingerprint: string, status: number): string {
  return `${SEAL_LABEL}\0${tenantId}\0${keyId}\0${idemKey}\0${fingerprint}\0${status}`;
}

export class StoredAnswerUnreadable extends Error {}

/** `body` as stored: sealed. A missing body (no content) stays null: there is nothing to hide. */
export function sealAnswer(key: Buffer, run: SealedRow, status: number, body: string | null): string | null {
  if (body === null) return null;
  return encryptSecret(key, body, answerAad(run.tenantId, run.keyId, run.idemKey, run.fingerprint, status));
}

/**
 * The answer's body from its stored form. Rows stored before sealing (plain JSON, which never begins with
 * `v1.`) are replayed as they are: they expire with the TTL. A sealed body that does not open (another
 * CRM_SECRET_KEY, or an edited row) cannot be replayed, and running the request again could repeat its change
 * (a second contact): the replay fails (500) rather than guess, until the row expires.
 */
export function openAnswer(
  key: Buffer,
  row: { tenantId: string; keyId: string; idemKey: string; fingerprint: string; status: number },
  stored: string,
): string {
  if (!stored.startsWith(SEALED_PREFIX)) return stored;
  try {
    return decryptSecret(key, stored, answerAad(row.tenantId, row.keyId, row.idemKey, row.fingerprint, row.status));
  } catch {
    throw new StoredAnswerUnreadable('the stored answer of an Idempotency-Key cannot be decrypted with the configured CRM_SECRET_KEY');
  }
}

/** The key answers are sealed with, derived from CRM_SECRET_KEY. */
export function answerKeyOf(secretKey: Buffer): Buffer {
  return subkey(secretKey, SEAL_LABEL);
}

/**
 * D.5: every stored answer of the tenant whose body holds one of `needles` (an erased contact's id, e-mail, phone)
 * becomes `status` with `body` (the 404 of an erased record): a replay answers that, never the person. Answers
 * are sealed, so each one of the tenant is opened (they live IDEMPOTENCY_TTL_HOURS: a day's answers by default).
 * Returns how many were replaced.
 */
export async function forgetAnswersHolding(db: Db, key: Buffer, tenantId: string, needles: readonly string[], status: number, body: string): Promise<number> {
  let n = 0;
  for (const row of await repo.answersOfTenant(db, tenantId)) {
    const at = { tenantId, keyId: row.key_id, idemKey: row.idem_key, fingerprint: row.fingerprint };
    let text: string;
    try {
      text = openAnswer(key, { ...at, status: row.status_code }, row.body!);
    } catch {
      continue; // sealed under another key: nobody can read it, and it expires with its TTL
    }
    if (!needles.some((needle) => needle !== '' && text.includes(needle))) continue;
    await repo.replaceAnswer(db, at, status, sealAnswer(key, at, status, body));
    n++;
  }
  return n;
}
