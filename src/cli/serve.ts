import pino from 'pino';
import { buildApp } from '../app.js';
import type { Config } from '../config.js';
import { createDatabase, migrate } from '../db/index.js';
import { startWorkers } from '../workers/index.js';
import { maybeProvisionDemo } from './demo.js';
import '../workers/all.js';

/** `crm serve`: the API on HOST:PORT, with the background workers unless WORKERS=false. */
export async function serve(config: Config): Promise<void> {
  const database = createDatabase(config);
  await migrate(database);
  await maybeProvisionDemo(database, config);
  const app = await buildApp({ config, database });
  const workers = config.workers ? startWorkers({ database, config, log: app.log as unknown as pino.Logger }) : null;
  await app.listen({ port: config.port, host: config.host });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 9_000);
    force.unref();
    try {
      await app.close(); // stops accepting, waits for in-flight requests
      await workers?.stop();
      await database.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
