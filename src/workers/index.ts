import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/index.js';

export interface WorkerDeps {
  database: Database;
  config: Config;
  log: Logger;
}

/** A background loop: started once, stopped cleanly (finishing what it has in hand). */
export interface BackgroundLoop {
  name: string;
  stop(): Promise<void>;
}

export type LoopFactory = (deps: WorkerDeps) => BackgroundLoop;

// Every background loop of the service; `crm serve` (WORKERS=true) and `crm worker` run them all.
const LOOPS: LoopFactory[] = [];

export function registerLoop(f: LoopFactory): void {
  LOOPS.push(f);
}

export function startWorkers(deps: WorkerDeps): { stop(): Promise<void> } {
  const running = LOOPS.map((f) => f(deps));
  deps.log.info({ loops: running.map((l) => l.name) }, 'background workers started');
  return {
    async stop() {
      await Promise.all(running.map((l) => l.stop()));
    },
  };
}
