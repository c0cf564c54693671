import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Agent } from 'undici';
import type { Config } from '../config.js';
import { withTx, type Db } from '../db/index.js';
import type { SqlDialect } from '../db/dialect.js';
import { listenTo } from '../db/notify.js';
import * as deliveries from '../events/deliveries.js';
import { makeAttempt, recordAttempt } from '../modules/webhooks/webhooks.attempts.js';
import { deliveryDispatcher } from '../modules/webhooks/webhooks.network.js';
import * as queue from '../modules/webhooks/webhooks.queue.js';
import type { AttemptResult } from '../modules/webhooks/webhooks.sender.js';
import type { BackgroundLoop, WorkerDeps } from './loop.js';

/** HTTP attempts in flight per worker process. */
export const MAX_IN_FLIGHT = 16;
/** Fallback poll: retries falling due, and wake-ups from other processes on SQLite. */
const POLL_MS = 500;
/** A lease outlives an attempt by this much (CONTRACT B.9: a crashed attempt is redone within timeout + 10 s). */
const LEASE_MARGIN_MS = 10_000;
/** On stop, attempts in flight get this long to finish before they are interrupted and handed back. */
const STOP_GRACE_MS = 5_000;

/** A claimed delivery: the row, the lease token written on it, and what its attempt needs. */
interface Claimed {
  delivery: deliveries.QueuedDelivery;
  owner: string;
  context: queue.AttemptContext;
}

/** A write waiting for the next flush: writes of attempts ending together share one transaction. */
interface PendingWrite {
  write(db: Db): Promise<unknown>;
  done(err?: unknown): void;
}

/**
 * Webhook delivery loop (spec 3.6 and 6, CONTRACT B.9 and C.4), in three named steps:
 *
 * - claim: due deliveries are leased (lease = WEBHOOK_TIMEOUT_MS + 10 s), as many as there are free
 *   slots, and their webhooks and events loaded, in one short transaction.
 * - attempt: at most MAX_IN_FLIGHT HTTP attempts at once. The webhook is checked (gone: the delivery goes;
 *   inactive: it ends as permanent_failure without an attempt), then the event is sent
 *   (webhooks.attempts.ts, shared with the API's manual retry).
 * - record: the outcome (next retry, Retry-After, endpoint health) is written only while the lease is
 *   still ours; outcomes of attempts ending together share one transaction. A slot is free again as soon
 *   as its HTTP exchange ends.
 *
 * Wakes on the outbox's signal (LISTEN/NOTIFY on PostgreSQL, in-process on SQLite), on a freed slot and
 * on a short poll. Several processes may share one PostgreSQL queue; a crashed one's leases expire.
 */
export class DeliveryLoop {
  private readonly log: Logger;
  private readonly db: Db;
  /** False while the database is down: the loop pauses (no claim, no warning a poll) and resumes on its return. */
  private readonly available: () => boolean;
  private readonly config: Config;
  private readonly dialect: SqlDialect;
  private readonly workerId = randomUUID();
  private readonly dispatcher: Agent;
  private readonly leaseMs: number;
  /** HTTP attempts in flight (the bounded part). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Database writes of finished attempts, awaited by stop(). */
  private readonly recording = new Set<Promise<void>>();
  private readonly stopSignal = new AbortController();
  private claimSeq = 0;
  private stopped = false;
  /** A claim pass is running; `claimAgain` asks it to make one more round when it ends. */
  private claiming = false;
  private claimAgain = false;
  private wakeScheduled = false;
  private writes: PendingWrite[] = [];
  private flushScheduled = false;

  constructor(deps: WorkerDeps) {
    this.log = deps.log.child({ loop: 'webhooks' });
    this.db = deps.database.db;
    this.available = () => deps.database.available();
    this.config = deps.config;
    this.dialect = deps.database.dialect;
    this.dispatcher = deliveryDispatcher({ allowPrivateNetworks: this.config.webhookAllowPrivateNetworks, timeoutMs: this.config.webhookTimeoutMs });
    this.leaseMs = this.config.webhookTimeoutMs + LEASE_MARGIN_MS;
    setMaxListeners(MAX_IN_FLIGHT + 10, this.stopSignal.signal); // one listener per attempt in flight
  }

  /** Wake-ups of one turn of the event loop (several attempts ending together) make one claim pass. */
  readonly wake = (): void => {
    if (this.stopped || !this.available()) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      if (this.stopped) return;
      if (this.claiming) this.claimAgain = true;
      else void this.fill();
    });
  };

  /** Claims until every slot is busy or nothing is due. */
  private async fill(): Promise<void> {
    this.claiming = true;
    try {
      do {
        this.claimAgain = false;
        while (!this.stopped && this.freeSlots() > 0) {
          const want = this.freeSlots();
          const claimed = await this.claim(want);
          for (const c of claimed) this.start(c);
          if (claimed.length < want) break;
        }
      } while (this.claimAgain && !this.stopped && this.freeSlots() > 0);
    } catch (err) {
      this.log.warn({ err }, 'claiming webhook deliveries failed; retrying on the next wake-up');
    } finally {
      this.claiming = false;
    }
  }

  private freeSlots(): number {
    return MAX_IN_FLIGHT - this.inFlight.size;
  }

  /** Step 1: lease up to `limit` due deliveries and load their webhooks and events, in one short transaction. */
  async claim(limit: number): Promise<Claimed[]> {
    const now = Date.now();
    const owner = `${this.workerId}.${++this.claimSeq}`;
    // On SQLite one turn on the connection, however busy the API is.
    const { rows, contexts } = await withTx(this.db, async (tx) => {
      const rows = await deliveries.claimDue(tx, {
        dialect: this.dialect,
        owner,
        now: new Date(now).toISOString(),
        leaseUntil: new Date(now + this.leaseMs).toISOString(),
        limit,
      });
      return { rows, contexts: await queue.loadAttemptContexts(tx, rows) };
    });
    return rows.map((delivery) => ({ delivery, owner, context: contexts.get(delivery.id) ?? { webhook: undefined, payload: undefined } }));
  }

  private start(c: Claimed): void {
    const p: Promise<void> = this.attempt(c)
      .catch((err) => this.log.error({ err, deliveryId: c.delivery.id }, 'webhook delivery attempt failed unexpectedly'))
      .finally(() => {
        this.inFlight.delete(p);
        this.wake();
      });
    this.inFlight.add(p);
  }

  /** Step 2: one HTTP attempt, unless the webhook is gone or inactive or the event is missing. */
  async attempt({ delivery: d, owner, context: { webhook, payload } }: Claimed): Promise<void> {
    const now = new Date().toISOString();
    if (!webhook) {
      this.track(
        this.enqueue((db) => deliveries.dropDelivery(db, d, owner)),
        d.id,
      );
      return;
    }
    // NOTE: B.9 — a deactivated webhook's waiting deliveries are never attempted; they end here
    // (normally the PATCH that deactivated it already ended them; this covers the races).
    if (webhook.is_active !== 1 || payload === undefined) {
      const lastError = webhook.is_active !== 1 ? 'webhook deactivated' : 'event not found';
      const set: deliveries.DeliveryUpdate = { status: 'permanent_failure', last_error: lastError, next_attempt_at: null, updated_at: now };
      this.track(
        this.enqueue((db) => deliveries.finishDelivery(db, d, owner, set)),
        d.id,
      );
      return;
    }
    const result = await makeAttempt(this.config, d, webhook, payload, this.dispatcher, this.stopSignal.signal);
    if (!result.success)
      this.log.debug({ deliveryId: d.id, webhookId: d.webhook_id, attempt: d.attempts + 1, error: result.error }, 'webhook delivery attempt failed');
    // Cut short by shutdown, not by the destination: handed back, not counted.
    this.track(result.interrupted ? deliveries.releaseDelivery(this.db, d, owner) : this.record(d, owner, result), d.id);
  }

  /** Step 3: the outcome, the next retry and the endpoint's health, written while the lease is ours. */
  record(d: deliveries.QueuedDelivery, owner: string, result: AttemptResult): Promise<unknown> {
    return this.enqueue((db) => recordAttempt(db, this.config, d, owner, result));
  }

  /** Keeps a write in `recording` until done; a failed one is logged (its lease expires and the attempt is made again). */
  private track(work: Promise<unknown>, deliveryId: string): void {
    const p: Promise<void> = work
      .then(
        () => undefined,
        (err) => this.log.error({ err, deliveryId }, 'recording a webhook delivery attempt failed'),
      )
      .finally(() => this.recording.delete(p));
    this.recording.add(p);
  }

  private enqueue(write: (db: Db) => Promise<unknown>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.writes.push({ write, done: (err) => (err ? reject(err) : resolve()) });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /** The writes queued in one turn, in one transaction; one by one if that fails, so one bad row holds back no other. */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const batch = this.writes;
    this.writes = [];
    if (batch.length === 0) return;
    try {
      await withTx(this.db, async (tx) => {
        for (const w of batch) await w.write(tx);
      });
      for (const w of batch) w.done();
    } catch {
      for (const w of batch) {
        try {
          await withTx(this.db, (tx) => w.write(tx));
          w.done();
        } catch (err) {
          w.done(err);
        }
      }
    }
  }

  /** Stops claiming, lets attempts in flight finish (interrupting them after a grace period) and waits for their records. */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.claiming) await new Promise((r) => setTimeout(r, 10));
    if (this.inFlight.size) {
      const grace = new Promise<void>((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
      await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
      // Attempts still running are interrupted; their deliveries are handed back, not counted.
      this.stopSignal.abort();
      await Promise.allSettled([...this.inFlight]);
    }
    while (this.recording.size) await Promise.allSettled([...this.recording]);
  }
}

export function startWebhookDelivery(deps: WorkerDeps): BackgroundLoop {
  const loop = new DeliveryLoop(deps);
  const unsubscribe = deliveries.onDeliveriesQueued(loop.wake);
  const poll = setInterval(loop.wake, POLL_MS);
  poll.unref();
  // One LISTEN connection for the deliveries' channel where the database has one (PostgreSQL: db/notify.ts);
  // a reconnect wakes the loop too, in case a NOTIFY was missed meanwhile.
  const listener = listenTo(
    deps.database,
    deliveries.DELIVERY_CHANNEL,
    () => loop.wake(),
    () => loop.wake(),
    deps.log.child({ loop: 'webhooks' }),
  );
  loop.wake();
  // Paused while the database is down (wake() does nothing then); what fell due meanwhile goes at once.
  deps.database.health?.on('up', loop.wake);
  return {
    name: 'webhook-delivery',
    async stop() {
      const stopping = loop.stop(); // no claim from here on
      clearInterval(poll);
      unsubscribe();
      deps.database.health?.off('up', loop.wake);
      await listener?.close();
      await stopping;
    },
  };
}
