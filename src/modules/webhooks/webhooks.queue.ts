import type { Db } from '../../db/index.js';
import type { QueuedDelivery } from '../../events/deliveries.js';
import type { WebhookRow } from './webhooks.repo.js';

/**
 * What an attempt of a claimed delivery needs, read for the delivery worker and the manual retry. The
 * queue itself, and every write of its rows, is events/deliveries.ts.
 */
export type AttemptTarget = Pick<WebhookRow, 'id' | 'url' | 'is_active' | 'headers' | 'secret_enc'>;

export interface AttemptContext {
  webhook: AttemptTarget | undefined;
  payload: string | undefined;
}

/** The webhook and event payload of each claimed delivery, in one query for the whole batch. */
export async function loadAttemptContexts(db: Db, batch: QueuedDelivery[]): Promise<Map<string, AttemptContext>> {
  const out = new Map<string, AttemptContext>();
  if (batch.length === 0) return out;
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .leftJoin('webhooks as w', (j) => j.onRef('w.tenant_id', '=', 'd.tenant_id').onRef('w.id', '=', 'd.webhook_id'))
    .leftJoin('events as e', (j) => j.onRef('e.tenant_id', '=', 'd.tenant_id').onRef('e.id', '=', 'd.event_id'))
    .select(['d.id as delivery_id', 'w.id as webhook_id', 'w.url', 'w.is_active', 'w.headers', 'w.secret_enc', 'e.payload'])
    .where(({ eb, refTuple, tuple }) =>
      eb(
        refTuple('d.tenant_id', 'd.id'),
        'in',
        batch.map((d) => tuple(d.tenant_id, d.id)),
      ),
    )
    .execute();
  for (const r of rows) {
    out.set(r.delivery_id, {
      webhook: r.webhook_id === null ? undefined : { id: r.webhook_id, url: r.url!, is_active: r.is_active!, headers: r.headers!, secret_enc: r.secret_enc! },
      payload: r.payload ?? undefined,
    });
  }
  return out;
}

export async function isWebhookActive(db: Db, tenantId: string, webhookId: string): Promise<boolean> {
  const row = await db.selectFrom('webhooks').select('is_active').where('tenant_id', '=', tenantId).where('id', '=', webhookId).executeTakeFirst();
  return row?.is_active === 1;
}
