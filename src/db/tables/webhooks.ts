export interface WebhooksTable {
  tenant_id: string;
  id: string;
  name: string;
  url: string;
  events: string; // JSON array of event keys
  is_active: number;
  headers: string; // JSON object
  secret_enc: string; // encrypted with CRM_SECRET_KEY
  secret_prefix: string;
  /** End of the first failed attempt after the last success; null while the endpoint answers (C.4). */
  failing_since: string | null;
  /** Why the webhook was deactivated automatically; null while active or deactivated by hand. */
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}
/** Outbox: one row per event, written in the transaction of the change that raised it. */
export interface EventsTable {
  tenant_id: string;
  id: string;
  type: string;
  payload: string;
  created_at: string;
}
export interface WebhookDeliveriesTable {
  tenant_id: string;
  id: string;
  webhook_id: string;
  event_id: string;
  event: string;
  status: string; // pending | retry_scheduled | delivered | permanent_failure
  status_code: number | null;
  response_snippet: string | null;
  duration_ms: number | null;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  /** Attempts allowed before permanent_failure; null = MAX_ATTEMPTS (5). Recovery and manual retries raise it. */
  attempt_limit: number | null;
  created_at: string;
  updated_at: string;
}
