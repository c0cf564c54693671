import type { LoopFactory, WorkerDeps } from './loop.js';
import { startWebhookDelivery } from './webhooks.js';
import { dynamicListsLoop } from './dynamic-lists.js';
import { idempotencyKeysLoop } from './idempotency.js';
import { retentionLoop } from './retention.js';
import { plannerStatisticsLoop } from './planner-statistics.js';

export type { BackgroundLoop, LoopFactory, WorkerDeps } from './loop.js';

/** Every background loop of the service; `crm serve` (WORKERS=true) and `crm worker` run them all. */
const LOOPS: readonly LoopFactory[] = [startWebhookDelivery, dynamicListsLoop, idempotencyKeysLoop, retentionLoop, plannerStatisticsLoop];

export function startWorkers(deps: WorkerDeps): { stop(): Promise<void> } {
  const running = LOOPS.map((f) => f(deps));
  deps.log.info({ loops: running.map((l) => l.name) }, 'background workers started');
  // Said once per change, not once per failed pass.
  const paused = (reason: string) => deps.log.warn({ reason }, 'database unavailable: background workers paused');
  const resumed = () => deps.log.info('database available again: background workers resumed');
  deps.database.health?.on('down', paused).on('up', resumed);
  return {
    async stop() {
      deps.database.health?.off('down', paused).off('up', resumed);
      await Promise.all(running.map((l) => l.stop()));
    },
  };
}
