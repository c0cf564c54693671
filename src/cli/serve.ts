import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { AdminError } from '../admin/keys.js';
import { buildApp } from '../app.js';
import type { Config } from '../config.js';
import { createDatabase, migrate, type Database } from '../db/index.js';
import { sealLegacyHeaders } from '../modules/webhooks/webhooks.service.js';
import { startWorkers } from '../workers/index.js';
import { processLogger } from '../plugins/logging.js';
import { demoKeyLines, localBaseUrl, startBanner } from './banner.js';
import { maybeProvisionDemo } from './demo.js';
import { progress } from './output.js';
import { connectionDrain, type ConnectionDrain } from './drain.js';

// CONTRACT A.1: after SIGTERM/SIGINT the process exits 0 within 10 s. Connections still open this long
// after the signal are closed, so that the rest of the stop can run; past FORCE_EXIT_MS it is forced.
const CUT_CONNECTIONS_MS = 7_000;
const FORCE_EXIT_MS = 9_000;

/**
 * NOTE: V8 grows the old generation to several times what survived its last full collection before
 * collecting it again. Under 50 connections every scavenge promotes the requests in flight, so the server
 * held anywhere from 184 to 258 MiB after the same bench runs. A growing factor of 1.5 collects sooner
 * (concurrently, on a helper thread): 186–192 MiB in every run. 1.25 held 183–188 MiB but made the full
 * collections frequent enough to triple the p99 of a heavy page at one connection (bench/journal/).
 * A factor given on the command line wins.
 *
 * NOTE: the young generation is capped at 8 MiB per semi-space (V8's default grows it to 16) by the Node
 * options `npm start` and the `crm` executable's first line give (`--max-semi-space-size=8`): V8 reads that
 * size once, when the heap is made, so it cannot be set from here. Measured on the full bench: the server's
 * tree holds 193–199 MiB after it instead of 212–220 MiB, for ~5 % more CPU on a page of 50 and ~8 % on a
 * create (more frequent scavenges; bench/journal/). test/e2e/node-options.test.ts keeps the two
 * places, and the bench that reads them, in step.
 *
 * NOTE: the same options turn V8's allocation-site pretenuring off (`--no-allocation-site-pretenuring`).
 * With it, V8 saw a request's objects survive the scavenge that met them in flight and allocated them in
 * the old generation from then on: at one connection a page of deals moved ~1 MB a scavenge to the old
 * generation and ran a full collection every ~0.5 s (2.5–6.5 ms pauses, incremental steps up to 4 ms), which
 * made its p99 3.0–4.2× its median. Without it: 1.8–2.1×, fewer full collections (16 against 25 in the same
 * run), and the same req/s and memory at 50 connections (bench/journal/).
 */
const HEAP_GROWING_PERCENT = 50;

/**
 * NOTE: scavenges run on this thread alone (`--no-parallel-scavenge`; V8 reads the flag at each scavenge, so it
 * can be set here). A scavenge of this server keeps ~17–50 KB of an 8 MiB semi-space: there is almost nothing
 * to share out, and waking V8's helper threads and waiting for them was most of the pause on a 2-core machine
 * whose other core runs the load (`--trace-gc-nvp`: `scavenge.parallel` 0.12–0.18 ms of a 0.3 ms pause, the
 * helpers' own work 0.02–0.04 ms). Three alternating rounds of the bench (bench/journal/): at one
 * connection a page of 50's p99 0.58–0.76 → 0.51–0.57 ms, a create's 0.98–1.12 → 0.83–0.91 ms; at 50
 * connections a page of 50 120–131 → 108–116 µs of CPU. An option given on the command line wins.
 */
export function tuneHeap(): void {
  const given = (flag: RegExp) => process.execArgv.some((a) => flag.test(a));
  if (!given(/heap[-_]growing[-_]percent/)) v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (!given(/parallel[-_]scavenge/)) v8.setFlagsFromString('--no-parallel-scavenge');
}

/** `crm serve`: the API on HOST:PORT, with the background workers unless WORKERS=false. */
export async function serve(config: Config): Promise<void> {
  tuneHeap();
  config.secretKey(); // CONTRACT A.2: fails fast without CRM_SECRET_KEY on PostgreSQL (webhook secrets); SQLite generates it
  const database = createDatabase(config);
  const log = processLogger(config);
  const server = new Serving(config, database, log);

  // Handlers go in first, so a signal during start-up (migrations, demo provisioning) also stops cleanly.
  process.on('SIGTERM', () => void server.shutdown('SIGTERM'));
  process.on('SIGINT', () => void server.shutdown('SIGINT'));

  await migrate(database);
  if (server.stopping) return;
  await sealLegacyHeaders(database.db, config.secretKey());
  const demo = await maybeProvisionDemo(database, config);
  // A key provisioned by this start is never lost: a stop before the banner prints it as the banner would.
  const handOver = () => demo && progress(['', ...demoKeyLines(localBaseUrl(null, config.host, config.port), demo), ''].join('\n'));
  if (server.stopping) return void handOver();
  const app = await server.listen(handOver);
  optimizeHourly(database, log, () => server.stopping);
  if (config.workers && !server.stopping) server.workers = startWorkers({ database, config, log: app.log as unknown as pino.Logger });
  // Last, after the start-up logs, so that the key stays on screen (request logs on a terminal are one line each).
  if (server.stopping) handOver();
  else progress(startBanner(localBaseUrl(app.server.address(), config.host, config.port), demo));
}

/** The server of `crm serve` and what its stop closes, in order: connections, app, workers, database. */
class Serving {
  app: FastifyInstance | undefined;
  connections: ConnectionDrain | undefined;
  workers: { stop(): Promise<void> } | null = null;
  stopping = false;
  /** Which step the stop is in, so that a forced exit says what held it. */
  private step = 'drain';

  constructor(
    private readonly config: Config,
    private readonly database: Database,
    private readonly log: Logger,
  ) {}

  /** The app on HOST:PORT; a failure to listen closes what was opened and is an AdminError. */
  async listen(handOver: () => void): Promise<FastifyInstance> {
    const { config, database } = this;
    const app = (this.app = await buildApp({ config, database }));
    app.addHook('onSend', (_req, reply, payload, done) => {
      if (this.stopping) reply.header('connection', 'close');
      done(null, payload);
    });
    this.connections = connectionDrain(app.server);
    try {
      await app.listen({ port: config.port, host: config.host });
    } catch (err) {
      handOver();
      await app.close().catch(() => {});
      await database.close().catch(() => {});
      const e = err as NodeJS.ErrnoException;
      throw new AdminError('listen_failed', `cannot listen on ${config.host}:${config.port}: ${e.code ?? e.message}`);
    }
    return app;
  }

  async shutdown(signal: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const signalledAt = Date.now();
    (this.app?.log ?? this.log).info({ signal, drainMs: this.config.shutdownDrainMs }, 'shutting down: not ready, draining, then finishing requests in flight');
    const force = setTimeout(() => {
      (this.app?.log ?? this.log).error({ step: this.step }, 'shutdown took too long; exiting');
      process.exit(1);
    }, FORCE_EXIT_MS);
    force.unref();
    try {
      if (this.app) await this.drain(this.app, signalledAt);
      this.step = 'background workers';
      await this.workers?.stop();
      this.step = 'database';
      await this.database.close();
      process.exit(0);
    } catch (err) {
      (this.app?.log ?? this.log).error({ err }, 'error during shutdown');
      process.exit(1);
    }
  }

  private async drain(app: FastifyInstance, signalledAt: number): Promise<void> {
    // CONTRACT A.1: readiness turns 503 at once, so a load balancer stops sending; meanwhile the
    // server keeps accepting and answering (connections the kernel already queued are served, not
    // reset), with `Connection: close` on each answer so clients move to fresh connections.
    app.draining = true;
    // C.4: long-polls of the event log answer what they have at once (200, empty) rather than hold the stop.
    app.eventWaiters.close();
    await new Promise((r) => setTimeout(r, this.config.shutdownDrainMs));
    // Then: stop accepting, answer every request that reached the server (from the signal on, the onSend
    // hook of listen() marks each answer `Connection: close`), and close the keep-alive connections left idle
    // without resetting one a client may be writing to (drain.ts).
    this.step = 'requests in flight';
    // A request whose body never finishes arriving never turns its connection idle, and would hold the
    // stop until it is forced (exit 1). Every request had CUT_CONNECTIONS_MS to finish; past that, close.
    const { server, log: appLog } = app;
    const cut = setTimeout(
      () => {
        server.getConnections((_err, connections) => appLog.warn({ connections }, 'shutdown: closing the connections still open'));
        server.closeAllConnections();
      },
      Math.max(0, CUT_CONNECTIONS_MS - (Date.now() - signalledAt)),
    );
    cut.unref();
    await this.connections?.finish();
    clearTimeout(cut);
    await app.close();
  }
}

/**
 * Planner statistics once listening and then hourly (a no-op on PostgreSQL, whose autovacuum analyzes):
 * measuring the indexes of a large database takes seconds on the read pool, and needs no one to wait.
 */
function optimizeHourly(database: Database, log: Logger, stopping: () => boolean): void {
  const optimize = () =>
    void database
      .optimize((index, err) => {
        if (!stopping()) log.warn({ err, index }, 'planner statistics: index not measured; it keeps its sampled statistics');
      })
      .catch((err) => {
        if (!stopping()) log.warn({ err }, 'optimize failed');
      });
  optimize();
  setInterval(optimize, 3_600_000).unref();
}
