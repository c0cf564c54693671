import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashApiKey, looksLikeApiKey } from '../auth/keys.js';
import type { Principal } from '../auth/principal.js';
import { missingScopes } from '../auth/scopes.js';
import { findKeyByHash, setKeyLastUsed, type KeyOfHash } from '../auth/keys.repo.js';
import type { Db } from '../db/index.js';
import { errors } from '../errors.js';
import { parseJson } from '../util/json.js';
import { routeHooks } from '../http/route-hooks.js';
import { MemoryStore, type RateLimitStore } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** Scopes the endpoint requires (spec 5.6). An /api/v1 route without scopes is refused to keys. */
    scopes?: string[];
    /** Reachable without a key (OpenAPI document). */
    public?: boolean;
  }
}

const WINDOW_MS = 60_000;
// NOTE: B.1 — a revoked or expired key must be refused within 5 s on every process; entries live 2 s.
const CACHE_TTL_MS = 2_000;
const CACHE_MAX = 10_000;
const FAILED_AUTH_LIMIT = 20;
const LAST_USED_GRANULARITY_MS = 60_000;

interface CacheEntry {
  principal: Principal | null;
  loadedAt: number;
}

function principalOf(row: KeyOfHash): Principal {
  return {
    tenantId: row.tenant_id,
    keyId: row.id,
    keyName: row.name,
    userId: row.user_id,
    scopes: parseJson<string[]>(row.scopes, []),
    rateLimit: row.rate_limit,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}

/** Per-process cache of key lookups by hash; a miss or stale entry reads the database. */
export class KeyCache {
  private entries = new Map<string, CacheEntry>();
  private lastUsedWritten = new Map<string, number>();

  constructor(private db: Db) {}

  /** The cached answer when fresh (no promise on the hot path), else undefined. */
  peek(hash: string): Principal | null | undefined {
    const hit = this.entries.get(hash);
    return hit && Date.now() - hit.loadedAt < CACHE_TTL_MS ? hit.principal : undefined;
  }

  async get(hash: string): Promise<Principal | null> {
    const cached = this.peek(hash);
    if (cached !== undefined) return cached;
    const now = Date.now();
    const row = await findKeyByHash(this.db, hash);
    const principal = row ? principalOf(row) : null;
    if (this.entries.size >= CACHE_MAX) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(hash, { principal, loadedAt: now });
    if (principal && !principal.revokedAt) this.touch(principal);
    return principal;
  }

  /** Records lastUsedAt at most once a minute per key and process; never on the request's critical path. */
  private touch(p: Principal): void {
    const now = Date.now();
    if (now - (this.lastUsedWritten.get(p.keyId) ?? 0) < LAST_USED_GRANULARITY_MS) return;
    this.lastUsedWritten.set(p.keyId, now);
    setKeyLastUsed(this.db, p.tenantId, p.keyId, new Date(now).toISOString()).catch(() => {});
  }
}

export interface AuthOptions {
  db: Db;
  store: RateLimitStore;
  /** Hears of each authenticated request's tenant (the body share's fairness: body-share.ts BodyShare.seen). */
  onTenant?: (tenantId: string) => void;
}

/** Refuses a request whose key is missing or not valid, after counting the failure against its address. */
function rejectAuth(failures: MemoryStore, req: FastifyRequest, code: 'missing_api_key' | 'invalid_api_key'): never {
  // NOTE: B.1 — failed authentications are limited per client IP in each process.
  const hit = failures.hitSync(`ip:${req.ip}`, WINDOW_MS);
  if (hit.count > FAILED_AUTH_LIMIT) {
    const retry = Math.max(1, Math.ceil((hit.resetAtMs - Date.now()) / 1000));
    throw errors.rateLimited('Too many failed authentications from this address; retry later', FAILED_AUTH_LIMIT, retry);
  }
  throw code === 'missing_api_key' ? errors.missingApiKey() : errors.invalidApiKey();
}

/** The key's rate limit (B.3): its headers on every answer, 429 past it. */
function applyRateLimit(reply: FastifyReply, limit: number, hit: { count: number; resetAtMs: number }): void {
  reply.header('x-ratelimit-limit', String(limit));
  reply.header('x-ratelimit-remaining', String(Math.max(0, limit - hit.count)));
  reply.header('x-ratelimit-reset', String(Math.ceil(hit.resetAtMs / 1000)));
  if (hit.count > limit) {
    const retry = Math.max(1, Math.ceil((hit.resetAtMs - Date.now()) / 1000));
    throw errors.rateLimited(`Rate limit of ${limit} requests per minute exceeded; retry in ${retry} s`, limit, retry);
  }
}

/** The route's scopes against the key's (spec 5.6): an /api/v1 route without scopes is refused to keys. */
function requireScopes(required: readonly string[] | undefined, principal: Principal): void {
  if (!required || required.length === 0) throw errors.forbidden();
  const missing = missingScopes(required, principal.scopes);
  if (missing.length > 0) throw errors.insufficientScope(required, principal.scopes, missing);
}

export const authPlugin = fp<AuthOptions>(
  async (app, opts) => {
    const keys = new KeyCache(opts.db);
    const failures = new MemoryStore();
    app.addHook('onClose', async () => failures.close());
    app.decorateRequest('principal', null as unknown as Principal);

    async function authenticate(req: FastifyRequest, reply: FastifyReply, required: readonly string[] | undefined): Promise<void> {
      const header = req.headers['x-api-key'];
      const key = Array.isArray(header) ? header[0] : header;
      if (!key) return rejectAuth(failures, req, 'missing_api_key');
      if (!looksLikeApiKey(key)) return rejectAuth(failures, req, 'invalid_api_key');
      const hash = hashApiKey(key);
      const cached = keys.peek(hash);
      const principal = cached !== undefined ? cached : await keys.get(hash);
      if (!principal || principal.revokedAt || (principal.expiresAt && principal.expiresAt <= new Date().toISOString())) {
        return rejectAuth(failures, req, 'invalid_api_key');
      }
      req.principal = principal;
      opts.onTenant?.(principal.tenantId);
      const bucket = `key:${principal.keyId}`;
      const hit = opts.store instanceof MemoryStore ? opts.store.hitSync(bucket, WINDOW_MS) : await opts.store.hit(bucket, WINDOW_MS);
      applyRateLimit(reply, principal.rateLimit, hit);
      requireScopes(required, principal);
    }

    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith('/api/v1/') || route.config?.public) return;
      // The route's scopes are read here, once: req.routeOptions builds a new object on every access.
      const required = route.config?.scopes;
      route.onRequest = [(req: FastifyRequest, reply: FastifyReply) => authenticate(req, reply, required), ...routeHooks(route.onRequest)];
    });
  },
  { name: 'auth' },
);
