export interface IdempotencyKeysTable {
  tenant_id: string;
  key_id: string;
  idem_key: string;
  /** sha256 of method, path and canonical body: a reuse with another request is refused. */
  fingerprint: string;
  status_code: number;
  /** The response body as first sent, sealed (plugins/idempotency.ts sealAnswer; plain in rows from before); null when there was none. */
  body: string | null;
  created_at: string;
}
