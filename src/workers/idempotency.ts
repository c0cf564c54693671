import { deleteExpiredIdempotencyKeys } from '../modules/shared/idempotency.repo.js';
import { intervalLoop } from './loop.js';

/** Often enough that the table stays near one TTL's worth of rows; each pass is a few short deletes. */
const SWEEP_INTERVAL_MS = 60_000;

// Stored idempotent answers past IDEMPOTENCY_TTL_HOURS (C.3) are deleted in small batches. Expired rows
// not swept yet are already ignored by requests, so the sweep only bounds the table's size.
export const idempotencyKeysLoop = intervalLoop(
  'idempotency-keys',
  () => SWEEP_INTERVAL_MS,
  async ({ database, config, log }) => {
    const n = await deleteExpiredIdempotencyKeys(database, config.idempotencyTtlHours);
    if (n) log.debug({ deleted: n }, 'expired idempotency keys deleted');
  },
);
