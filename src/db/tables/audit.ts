/** The audit log (CONTRACT D.4, migration 021): one row per change, append-only; field names, never values. */
export interface AuditLogTable {
  tenant_id: string;
  /** `aud_…`, time-ordered (util/ids.ts): newest first is `id` descending. */
  id: string;
  occurred_at: string;
  /** The event type's name (`contact.updated`), or the change's own (`webhook.secret_rotated`, `api_key.created`). */
  action: string;
  object_type: string;
  object_id: string | null;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** The names of the fields the change set or changed, as a JSON array. */
  changes: string;
}
