import type { Redis } from 'ioredis';
import { rateLimitStoreTransitions } from '../metrics.js';
import { onUse } from '../util/on-use.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's rate-limit counters (API keys and public forms); `/readyz` and `/metrics` read its state. */
    rateLimitStore: RateLimitStore;
  }
}

/**
 * Per-key fixed-window counters (CONTRACT B.10): the window starts at a key's first call and resets
 * 60 s later. Hand-written rather than @fastify/rate-limit because the contract fixes the order
 * (key → limit → scope), counts every authenticated call whatever its status, takes the limit from
 * the key itself and shapes the 429 body; the library's hooks would fight all four.
 */
export interface Hit {
  count: number;
  resetAtMs: number;
}

export interface RateLimitStore {
  hit(bucket: string, windowMs: number): Promise<Hit>;
  close(): Promise<void>;
  /** True while a shared store is unreachable and each process counts on its own (`/readyz`, `/metrics`). */
  readonly degraded: boolean;
}

export class MemoryStore implements RateLimitStore {
  readonly degraded = false;
  private windows = new Map<string, Hit>();
  private sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [k, w] of this.windows) if (w.resetAtMs <= now) this.windows.delete(k);
    }, 30_000);
    this.sweeper.unref();
  }

  async hit(bucket: string, windowMs: number): Promise<Hit> {
    return this.hitSync(bucket, windowMs);
  }

  hitSync(bucket: string, windowMs: number): Hit {
    const now = Date.now();
    let w = this.windows.get(bucket);
    if (!w || w.resetAtMs <= now) {
      w = { count: 0, resetAtMs: now + windowMs };
      this.windows.set(bucket, w);
    }
    w.count++;
    return { count: w.count, resetAtMs: w.resetAtMs };
  }

  /** Forgets every window. */
  clear(): void {
    this.windows.clear();
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}

// INCR, then start the window on the first call; PTTL gives every process the same reset time.
const HIT_SCRIPT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local t = redis.call('PTTL', KEYS[1])
if t < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); t = tonumber(ARGV[1]) end
return {c, t}
`;

/** Where the store reports its transitions (pino's logger, `app.log`, fits). */
export interface StoreLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

const SILENT: StoreLog = { warn() {}, info() {} };

// No answer to a command for this long, with commands waiting, means a frozen server (a dead one closes
// the connection, which opens the circuit at once, without waiting for this).
const COMMAND_TIMEOUT_MS = 500;
// A connection not ready this long after its attempt began (TCP, then the ready check's INFO) is dropped.
const CONNECT_TIMEOUT_MS = 1000;
const WATCH_EVERY_MS = 100;
// How long the first calls after start may wait for the first connection's outcome.
const START_WAIT_MS = 1000;
// Reconnection attempts after a loss come at most this far apart, so a returning Redis is seen in time.
const RECONNECT_MAX_MS = 500;

type Mode = 'starting' | 'shared' | 'per_process';

/**
 * Redis counters behind a circuit breaker (DESIGN §4: a failing dependency gets a fast answer, never a
 * wait). While Redis is unreachable the circuit is open: every hit is counted by this process alone, with
 * no command sent and nothing awaited. ioredis's connection events drive it: `error` or `close` opens it
 * at once, `ready` (which follows a successful ready check, INFO) closes it. A frozen server, which keeps
 * the connection open, is found by a watchdog (commands waiting, no answer for COMMAND_TIMEOUT_MS): the
 * circuit opens and the connection is dropped, so that ioredis reconnects until a server answers. On
 * closing, the in-process counts are dropped: the shared window is authoritative. Each transition is
 * logged once and counted (crm_rate_limit_store_transitions_total).
 */
export class RedisStore implements RateLimitStore {
  private redis: Redis;
  private fallback = new MemoryStore();
  private mode: Mode = 'starting';
  /** While starting, settles when the first connection attempt has an outcome or after START_WAIT_MS. */
  private started: Promise<void> | null = null;
  /** Commands sent and not answered, and when the last one was sent to an idle connection or answered. */
  private pending = 0;
  private progressAt = 0;
  /** When the current connection attempt, or its ready check, began. */
  private connectingSince = Date.now();
  private watchdog: NodeJS.Timeout;
  private closing = false;

  constructor(
    url: string,
    private log: StoreLog = SILENT,
  ) {
    const { Redis: Client } = onUse<typeof import('ioredis')>('ioredis');
    // No offline queue and no retries: a command is sent on a live connection or fails at once. Timeouts
    // are the watchdog's rather than ioredis's own (see watch()).
    this.redis = new Client(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 0,
      disconnectTimeout: 100,
      retryStrategy: (attempt) => Math.min(50 * attempt, RECONNECT_MAX_MS),
    });
    this.redis.defineCommand('crmHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    const attempt = () => (this.connectingSince = Date.now());
    this.redis.on('connecting', attempt).on('connect', attempt);
    this.redis.on('ready', () => this.toShared());
    this.redis.on('error', (err: Error) => this.toPerProcess(err));
    this.redis.on('close', () => this.toPerProcess(new Error('connection to Redis closed')));
    this.watchdog = setInterval(() => this.watch(), WATCH_EVERY_MS);
    this.watchdog.unref();
  }

  /** True while Redis is unreachable and this process counts on its own (readiness and metrics say so). */
  get degraded(): boolean {
    return this.mode === 'per_process';
  }

  hit(bucket: string, windowMs: number): Promise<Hit> {
    if (this.mode === 'shared') return this.sharedHit(bucket, windowMs);
    if (this.mode === 'per_process') return Promise.resolve(this.fallback.hitSync(bucket, windowMs));
    // Only the calls before the first connection's outcome wait for it, and not for long.
    this.started ??= this.firstOutcome();
    return this.started.then(() => (this.mode === 'shared' ? this.sharedHit(bucket, windowMs) : this.fallback.hitSync(bucket, windowMs)));
  }

  /**
   * Resolves when the first connection is ready or has failed, or after START_WAIT_MS (those calls are then
   * counted in process, without opening the circuit).
   */
  private firstOutcome(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done).off('error', done).off('close', done);
        resolve();
      };
      const timer = setTimeout(done, START_WAIT_MS);
      this.redis.once('ready', done).once('error', done).once('close', done);
    });
  }

  private async sharedHit(bucket: string, windowMs: number): Promise<Hit> {
    if (this.pending++ === 0) this.progressAt = Date.now();
    try {
      const [count, ttl] = (await (this.redis as any).crmHit(`crm:rl:${bucket}`, windowMs)) as [number, number];
      return { count, resetAtMs: Date.now() + ttl };
    } catch (err) {
      this.toPerProcess(err);
      return this.fallback.hitSync(bucket, windowMs);
    } finally {
      this.pending--;
      this.progressAt = Date.now();
    }
  }

  /** Why the connection is stuck (a frozen or unreachable server), or null. */
  private stuck(): string | null {
    const now = Date.now();
    const status = this.redis.status;
    if ((status === 'connecting' || status === 'connect') && now - this.connectingSince > CONNECT_TIMEOUT_MS) {
      return `Redis not ready within ${CONNECT_TIMEOUT_MS} ms`;
    }
    if (status === 'ready' && this.pending > 0 && now - this.progressAt > COMMAND_TIMEOUT_MS) {
      return `Redis did not answer within ${COMMAND_TIMEOUT_MS} ms`;
    }
    return null;
  }

  /**
   * Opens the circuit and drops the connection when it is stuck. A busy event loop runs its timers before
   * it reads the sockets, so a verdict reached on this timer is checked again once the pending I/O has
   * been read (setImmediate): a server that did answer during a long pause of this process is not blamed.
   */
  private watch(): void {
    if (this.closing || this.stuck() === null) return;
    setImmediate(() => {
      const why = this.closing ? null : this.stuck();
      if (why === null) return;
      this.toPerProcess(new Error(why));
      this.connectingSince = Date.now();
      this.redis.disconnect(true); // ioredis reconnects (retryStrategy); its `ready` closes the circuit
    });
  }

  private toPerProcess(err: unknown): void {
    if (this.mode === 'per_process' || this.closing) return;
    this.mode = 'per_process';
    rateLimitStoreTransitions.inc({ to: 'per_process' });
    this.log.warn({ err }, 'Redis unreachable: rate limits are counted per process until it answers again');
  }

  private toShared(): void {
    if (this.mode === 'shared' || this.closing) return;
    const recovered = this.mode === 'per_process';
    this.mode = 'shared';
    this.fallback.clear();
    if (!recovered) return;
    rateLimitStoreTransitions.inc({ to: 'shared' });
    this.log.info({}, 'Redis answers again: rate limits are shared again');
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.watchdog);
    await this.fallback.close();
    this.redis.disconnect();
  }
}

export function createRateLimitStore(redisUrl: string | undefined, log?: StoreLog): RateLimitStore {
  return redisUrl ? new RedisStore(redisUrl, log) : new MemoryStore();
}
