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
  created_at: string;
  updated_at: string;
}
/** Outbox: one row per event, written in the transaction of the change that raised it. */
export interface EventsTable { tenant_id: string; id: string; type: string; payload: string; created_at: string }
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
  created_at: string;
  updated_at: string;
}
