import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Loads a package when it is first needed rather than at start: pg and ioredis only with DATABASE_URL
 * and REDIS_URL, undici only to deliver or test a webhook, sanitize-html only for a description with
 * markup. Each holds 1–5 MiB of heap once loaded, which a server that never needs it (SQLite, the
 * default) kept for nothing: together ~10 MiB of a server's memory at start (bench/journal/).
 * They are CommonJS packages, so this loads them synchronously where they are used.
 */
export function onUse<T>(id: 'pg' | 'ioredis' | 'undici' | 'sanitize-html'): T {
  return require(id) as T;
}
