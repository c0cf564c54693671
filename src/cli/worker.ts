import pino from 'pino';
import type { Config } from '../config.js';
import { createDatabase, migrate } from '../db/index.js';
import { sealLegacyHeaders } from '../modules/webhooks/webhooks.service.js';
import { startWorkers } from '../workers/index.js';

/** `crm worker`: only the background loops (webhook delivery, dynamic lists), for scaled deployments. */
export async function runWorker(config: Config): Promise<void> {
  config.secretKey(); // CONTRACT A.2: fails fast without CRM_SECRET_KEY on PostgreSQL (webhook secrets); SQLite generates it
  const log = pino({ level: config.logLevel }, pino.destination(2));
  const database = createDatabase(config);
  await migrate(database);
  await sealLegacyHeaders(database.db, config.secretKey());
  const workers = startWorkers({ database, config, log });
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(1), 9_000);
    force.unref();
    await workers.stop();
    await database.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
}
