import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type pg from 'pg';
import type { Logger } from 'pino';
import { withTx } from '../db/index.js';
import { DELIVERY_CHANNEL, onDeliveriesQueued } from '../events/outbox.js';
import { deliveryDispatcher } from '../modules/webhooks/webhooks.network.js';
import * as queue from '../modules/webhooks/webhooks.queue.js';
import { sendAttempt, type AttemptResult } from '../modules/webhooks/webhooks.sender.js';
import { openHeaders, secretAad } from '../modules/webhooks/webhooks.service.js';
import { decryptSecret } from '../util/crypto.js';
import { registerLoop, type BackgroundLoop, type WorkerDeps } from './index.js';

/** HTTP attempts in flight per worker process. */
export const MAX_IN_FLIGHT = 16;
/** Spec 3.6 / 6.4: the fifth failed attempt ends the delivery. */
export const MAX_ATTEMPTS = 5;
/** Fallback poll: retries falling due, and wake-ups from other processes on SQLite. */
const POLL_MS = 500;
/** A lease outlives an attempt by this much (CONTRACT B.9: a crashed attempt is redone within timeout + 10 s). */
const LEASE_MARGIN_MS = 10_000;
/** On stop, attempts in flight get this long to finish before they are interrupted and handed back. */
const STOP_GRACE_MS = 5_000;

/**
 * Webhook delivery loop (spec 3.6 and 6, CONTRACT B.9).
 *
 * - Claim: due deliveries are leased (lease = WEBHOOK_TIMEOUT_MS + 10 s), as many as there are free
 *   slots, and their webhooks and events loaded, in one short transaction.
 * - Attempt: at most MAX_IN_FLIGHT HTTP attempts at once. The webhook is checked (gone: the delivery goes;
 *   inactive: it ends as permanent_failure without an attempt), its secret decrypted, the event sent.
 * - Record: the outcomes of attempts ending together are written in one transaction, each only while its
 *   lease is still ours; a slot is free again as soon as its HTTP exchange ends.
 * Wakes on the outbox's signal (LISTEN/NOTIFY on PostgreSQL, in-process on SQLite), on a freed slot and
 * on a short poll. Several processes may share one PostgreSQL queue; a crashed one's leases expire.
 */
export function startWebhookDelivery(deps: WorkerDeps): BackgroundLoop {
  const { database, config } = deps;
  const log: Logger = deps.log.child({ loop: 'webhooks' });
  const db = database.db;
  const postgres = database.dialect.name === 'postgres';
  const workerId = randomUUID();
  const dispatcher = deliveryDispatcher({ allowPrivateNetworks: config.webhookAllowPrivateNetworks, timeoutMs: config.webhookTimeoutMs });
  const leaseMs = config.webhookTimeoutMs + LEASE_MARGIN_MS;
  /** HTTP attempts in flight (the bounded part). */
  const inFlight = new Set<Promise<void>>();
  /** Database writes of finished attempts, awaited by stop(). */
  const recording = new Set<Promise<void>>();
  const stopSignal = new AbortController();
  setMaxListeners(MAX_IN_FLIGHT + 10, stopSignal.signal); // one listener per attempt in flight
  let claimSeq = 0;
  let stopped = false;
  let ticking = false;
  let again = false;
  let scheduled = false;

  // Wake-ups of one turn of the event loop (several attempts ending together) make one claim.
  const wake = () => {
    if (stopped) return;
    if (ticking) {
      again = true;
      return;
    }
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      if (stopped) return;
      if (ticking) again = true;
      else void tick();
    });
  };

  async function tick(): Promise<void> {
    ticking = true;
    try {
      do {
        again = false;
        while (!stopped && inFlight.size < MAX_IN_FLIGHT) {
          const want = MAX_IN_FLIGHT - inFlight.size;
          const now = Date.now();
          const owner = `${workerId}.${++claimSeq}`;
          // One short transaction: on SQLite one turn on the connection, however busy the API is.
          const { claimed, contexts } = await withTx(db, async (tx) => {
            const rows = await queue.claimDue(tx, {
              postgres,
              owner,
              now: new Date(now).toISOString(),
              leaseUntil: new Date(now + leaseMs).toISOString(),
              limit: want,
            });
            return { claimed: rows, contexts: await queue.loadAttemptContexts(tx, rows) };
          });
          for (const d of claimed) start(d, owner, contexts.get(d.id) ?? { webhook: undefined, payload: undefined });
          if (claimed.length < want) break;
        }
      } while (again && !stopped && inFlight.size < MAX_IN_FLIGHT);
    } catch (err) {
      log.warn({ err }, 'claiming webhook deliveries failed; retrying on the next wake-up');
    } finally {
      ticking = false;
    }
  }

  function start(d: queue.QueuedDelivery, owner: string, context: queue.AttemptContext): void {
    const p: Promise<void> = attempt(d, owner, context)
      .catch((err) => log.error({ err, deliveryId: d.id }, 'webhook delivery attempt failed unexpectedly'))
      .finally(() => {
        inFlight.delete(p);
        wake();
      });
    inFlight.add(p);
  }

  function track(work: Promise<unknown>, deliveryId: string): void {
    const p: Promise<void> = work
      .then(
        () => undefined,
        // The lease expires and the attempt is made again: at least once, never lost.
        (err) => log.error({ err, deliveryId }, 'recording a webhook delivery attempt failed'),
      )
      .finally(() => recording.delete(p));
    recording.add(p);
  }

  async function attempt(d: queue.QueuedDelivery, owner: string, { webhook, payload }: queue.AttemptContext): Promise<void> {
    const nowIso = new Date().toISOString();
    if (!webhook) {
      track(queue.dropDelivery(db, d, owner), d.id);
      return;
    }
    // NOTE: B.9 — a deactivated webhook's waiting deliveries are never attempted; they end here
    // (normally the PATCH that deactivated it already ended them; this covers the races).
    if (webhook.is_active !== 1) {
      track(finish(d, owner, { status: 'permanent_failure', last_error: 'webhook deactivated', next_attempt_at: null, updated_at: nowIso }), d.id);
      return;
    }
    if (payload === undefined) {
      track(finish(d, owner, { status: 'permanent_failure', last_error: 'event not found', next_attempt_at: null, updated_at: nowIso }), d.id);
      return;
    }
    let secret: string | undefined;
    let customHeaders: Record<string, string> = {};
    try {
      secret = decryptSecret(config.secretKey(), webhook.secret_enc, secretAad(d.tenant_id, webhook.id));
      customHeaders = openHeaders(config.secretKey(), d.tenant_id, webhook.id, webhook.headers);
    } catch (err) {
      secret = undefined; // never send an attempt without the headers the destination expects
      log.error({ err: { message: (err as Error).message }, webhookId: webhook.id }, 'cannot decrypt a webhook secret or its headers');
    }
    const result: AttemptResult =
      secret === undefined
        ? {
            success: false,
            statusCode: null,
            responseSnippet: null,
            durationMs: 0,
            error: 'the signing secret or the custom headers cannot be decrypted (CRM_SECRET_KEY changed?)',
            attemptId: randomUUID(),
            endedAt: new Date(),
          }
        : await sendAttempt({
            url: webhook.url,
            secret,
            customHeaders,
            eventId: d.event_id,
            event: d.event,
            body: Buffer.from(payload, 'utf8'),
            timeoutMs: config.webhookTimeoutMs,
            dispatcher,
            signal: stopSignal.signal,
          });
    // The attempt was cut short by shutdown, not by the destination: handed back, not counted.
    track(result.interrupted ? queue.releaseDelivery(db, d, owner) : record(d, owner, result), d.id);
  }

  async function record(d: queue.QueuedDelivery, owner: string, r: AttemptResult): Promise<void> {
    const attempts = d.attempts + 1;
    const end = r.endedAt.toISOString();
    const common = { status_code: r.statusCode, response_snippet: r.responseSnippet, duration_ms: r.durationMs, attempts, updated_at: end };
    if (r.success) {
      await finish(d, owner, { ...common, status: 'delivered', last_error: null, next_attempt_at: null, delivered_at: end });
      return;
    }
    log.debug({ deliveryId: d.id, webhookId: d.webhook_id, attempt: attempts, error: r.error }, 'webhook delivery attempt failed');
    let status = attempts >= MAX_ATTEMPTS ? 'permanent_failure' : 'retry_scheduled';
    let lastError = r.error ?? 'failed';
    // A retry's delay counts from the end of the failed attempt (B.9).
    let next: string | null = status === 'retry_scheduled' ? new Date(r.endedAt.getTime() + config.webhookRetryDelays[attempts - 1] * 1000).toISOString() : null;
    // Deactivated while this attempt was in flight: no retry.
    if (status === 'retry_scheduled' && !(await queue.isWebhookActive(db, d.tenant_id, d.webhook_id))) {
      status = 'permanent_failure';
      lastError = `${lastError}; webhook deactivated`;
      next = null;
    }
    await finish(d, owner, { ...common, status, last_error: lastError, next_attempt_at: next });
  }

  // ---- outcomes of attempts ending together are written in one transaction ----
  type PendingFinish = { d: queue.QueuedDelivery; owner: string; set: queue.DeliveryUpdate; done(err?: unknown): void };
  let finishes: PendingFinish[] = [];
  let flushScheduled = false;

  function finish(d: queue.QueuedDelivery, owner: string, set: queue.DeliveryUpdate): Promise<void> {
    return new Promise((resolve, reject) => {
      finishes.push({ d, owner, set, done: (err) => (err ? reject(err) : resolve()) });
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(() => void flush());
      }
    });
  }

  async function flush(): Promise<void> {
    flushScheduled = false;
    const batch = finishes;
    finishes = [];
    if (batch.length === 0) return;
    try {
      if (batch.length === 1) await queue.finishDelivery(db, batch[0].d, batch[0].owner, batch[0].set);
      else {
        await withTx(db, async (tx) => {
          for (const f of batch) await queue.finishDelivery(tx, f.d, f.owner, f.set);
        });
      }
      for (const f of batch) f.done();
    } catch {
      // One by one, so that one failing row cannot hold back the others.
      for (const f of batch) {
        try {
          await queue.finishDelivery(db, f.d, f.owner, f.set);
          f.done();
        } catch (err) {
          f.done(err);
        }
      }
    }
  }

  // ---- wake-ups ----
  const unsubscribe = onDeliveriesQueued(wake);
  const poll = setInterval(wake, POLL_MS);
  poll.unref();
  const listener = postgres && database.pool ? listen(database.pool, wake, log) : null;
  wake();

  return {
    name: 'webhook-delivery',
    async stop() {
      stopped = true;
      clearInterval(poll);
      unsubscribe();
      await listener?.close();
      while (ticking) await new Promise((r) => setTimeout(r, 10));
      if (inFlight.size) {
        const grace = new Promise<void>((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
        await Promise.race([Promise.allSettled([...inFlight]), grace]);
        // Attempts still running are interrupted; their deliveries are handed back, not counted.
        stopSignal.abort();
        await Promise.allSettled([...inFlight]);
      }
      while (recording.size) await Promise.allSettled([...recording]);
    },
  };
}

/**
 * LISTEN on a dedicated client of the pool; reconnects after a lost connection (and wakes the loop, in
 * case a NOTIFY was missed meanwhile).
 */
function listen(pool: pg.Pool, onNotify: () => void, log: Logger): { close(): Promise<void> } {
  let client: pg.PoolClient | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const connect = async () => {
    retry = null;
    if (closed) return;
    let c: pg.PoolClient | null = null;
    try {
      c = await pool.connect();
      if (closed) {
        c.release();
        return;
      }
      const me = c;
      me.on('notification', () => onNotify());
      me.on('error', (err) => {
        if (client !== me) return;
        log.warn({ err }, 'LISTEN connection lost; reconnecting');
        client = null;
        me.release(err);
        if (!closed) retry = setTimeout(connect, 1_000);
      });
      await me.query(`LISTEN ${DELIVERY_CHANNEL}`);
      client = me;
      onNotify();
    } catch (err) {
      c?.release(err as Error);
      log.warn({ err }, 'cannot LISTEN for webhook deliveries; polling meanwhile');
      if (!closed) retry = setTimeout(connect, 1_000);
    }
  };
  void connect();

  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      if (c) {
        await c.query(`UNLISTEN ${DELIVERY_CHANNEL}`).catch(() => {});
        c.release(true); // never hand a LISTENing connection back to the pool
      }
    },
  };
}

registerLoop(startWebhookDelivery);
