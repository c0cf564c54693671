import type { Redis } from 'ioredis';
import { onUse } from '../util/on-use.js';

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
}

export class MemoryStore implements RateLimitStore {
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

export class RedisStore implements RateLimitStore {
  private redis: Redis;
  private fallback = new MemoryStore();
  private lastWarn = 0;

  constructor(
    url: string,
    private onError: (err: unknown) => void = () => {},
  ) {
    const { Redis: Client } = onUse<typeof import('ioredis')>('ioredis');
    this.redis = new Client(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, commandTimeout: 1000, lazyConnect: false });
    this.redis.on('error', () => {}); // reported per call below
    this.redis.defineCommand('crmHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  }

  async hit(bucket: string, windowMs: number): Promise<Hit> {
    try {
      const [count, ttl] = (await (this.redis as any).crmHit(`crm:rl:${bucket}`, windowMs)) as [number, number];
      return { count, resetAtMs: Date.now() + ttl };
    } catch (err) {
      // NOTE: availability over strictness — with Redis unreachable each process limits on its own.
      if (Date.now() - this.lastWarn > 10_000) {
        this.lastWarn = Date.now();
        this.onError(err);
      }
      return this.fallback.hit(bucket, windowMs);
    }
  }

  async close(): Promise<void> {
    await this.fallback.close();
    this.redis.disconnect();
  }
}

export function createRateLimitStore(redisUrl: string | undefined, onError?: (err: unknown) => void): RateLimitStore {
  return redisUrl ? new RedisStore(redisUrl, onError) : new MemoryStore();
}
