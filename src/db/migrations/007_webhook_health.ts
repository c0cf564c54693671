import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Delivery operations and endpoint health (CONTRACT C.4).
 * - `webhooks.failing_since`: when the first failed attempt after the last success ended (null while the
 *   endpoint answers); `disabled_reason`: why the webhook was deactivated automatically (null otherwise).
 * - `webhook_deliveries.attempt_limit`: the attempts a delivery may reach before `permanent_failure`;
 *   null means the spec's 5. A recovery gives a delivery 5 more, a manual retry one more.
 * - The history is paged by keyset on (created_at, id) within a webhook (GET …/deliveries with `cursor`).
 * Added columns are nullable, so the change is instant on both databases and old rows need no rewrite.
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  for (const statement of [
    sql`alter table webhooks add column failing_since text`,
    sql`alter table webhooks add column disabled_reason text`,
    sql`alter table webhook_deliveries add column attempt_limit integer`,
    sql`create index webhook_deliveries__webhook_page on webhook_deliveries (tenant_id, webhook_id, created_at, id)`,
  ]) {
    await statement.execute(db);
  }
}
