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

/**
 * A loop that runs `pass` at once, then `intervalMs` after each pass ends (passes never overlap); a
 * failed pass is logged and the next one runs on time. Stopping aborts `signal` and waits for the pass in
 * hand: a pass made of many short steps (retention's batches) checks it between steps, so a backlog of
 * hours never holds a shutdown past its deadline.
 */
export function intervalLoop(
  name: string,
  intervalMs: (config: Config) => number,
  pass: (deps: WorkerDeps, signal: AbortSignal) => Promise<void>,
): LoopFactory {
  return (deps) => {
    let timer: NodeJS.Timeout | undefined;
    let current: Promise<void> | undefined;
    const stopping = new AbortController();
    const run = () => {
      timer = undefined;
      // Paused while the database is down: the pass would only fail; it runs on the next tick after its return.
      const ready = deps.database.available() ? pass(deps, stopping.signal) : Promise.resolve();
      current = ready
        .catch((err) => deps.log.error({ err }, `${name} pass failed`))
        .finally(() => {
          current = undefined;
          if (!stopping.signal.aborted) timer = setTimeout(run, intervalMs(deps.config));
        });
    };
    // The first pass runs at once, so work left while no worker ran is not kept waiting an interval.
    timer = setTimeout(run, 0);
    return {
      name,
      async stop() {
        stopping.abort();
        if (timer) clearTimeout(timer);
        await current;
      },
    };
  };
}
