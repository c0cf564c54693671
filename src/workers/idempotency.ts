import { deleteExpiredIdempotencyKeys } from '../plugins/idempotency.js';
import { registerLoop } from './index.js';

/** Often enough that the table stays near one TTL's worth of rows; each pass is a few short deletes. */
const SWEEP_INTERVAL_MS = 60_000;

// Stored idempotent answers past IDEMPOTENCY_TTL_HOURS (C.3) are deleted in small batches. Expired rows
// not swept yet are already ignored by requests, so the sweep only bounds the table's size.
registerLoop(({ database, config, log }) => {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> | undefined;

  const run = () => {
    timer = undefined;
    pass = deleteExpiredIdempotencyKeys(database, config.idempotencyTtlHours)
      .then((n) => {
        if (n) log.debug({ deleted: n }, 'expired idempotency keys deleted');
      })
      .catch((err) => log.error({ err }, 'idempotency key sweep failed'))
      .finally(() => {
        pass = undefined;
        if (!stopped) timer = setTimeout(run, SWEEP_INTERVAL_MS);
      });
  };
  timer = setTimeout(run, 0);

  return {
    name: 'idempotency-keys',
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await pass;
    },
  };
});
