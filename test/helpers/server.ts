import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const CLI = path.join(ROOT, 'dist/cli/index.js');
export const IS_PG = process.env.TEST_DB === 'postgres';
export const TEST_SECRET = '22'.repeat(32);

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export function tmpDataDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'crm-e2e-'));
}

/** Environment for a real process of the service, on the dialect of the current test pass. */
export function processEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    CRM_NO_DEMO: 'true',
    LOG_LEVEL: 'warn',
    DATABASE_URL: IS_PG ? (process.env.DATABASE_URL ?? '') : '',
    REDIS_URL: IS_PG ? (process.env.REDIS_URL ?? '') : '',
    CRM_SECRET_KEY: TEST_SECRET,
    ...extra,
  };
  return env;
}

/** Runs a CLI command to completion; stdout parsed as JSON. */
export function cli(args: string[], env: Record<string, string>): { status: number; json: any; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8' });
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { status: r.status ?? -1, json, stdout: r.stdout, stderr: r.stderr };
}

export interface RunningServer {
  url: string;
  port: number;
  proc: ChildProcess;
  stderr(): string;
  /** SIGTERM and wait for exit; resolves the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

// Servers a failed test never stopped die with the test process: left running, they held CPU and ports through the
// rest of a CI run.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of live) if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
});

/** Starts `crm serve` (or another command) and waits until /healthz answers. */
export async function startServer(env: Record<string, string>, command = 'serve'): Promise<RunningServer> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const proc = spawn(process.execPath, [CLI, command], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  proc.stdout!.on('data', () => {});
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  if (command === 'serve') {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode}): ${err}`);
      try {
        const r = await fetch(`${url}/healthz`);
        if (r.ok) break;
      } catch {
        /* not up yet */
      }
      if (Date.now() > deadline) throw new Error(`server did not start: ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    port,
    proc,
    stderr: () => err,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * A fresh PostgreSQL database beside DATABASE_URL's, for tests whose real processes must not share the
 * cross-tenant delivery queue or dynamic-list pass with other files. The caller drops it when done.
 */
export async function createScratchPostgres(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const { randomBytes } = await import('node:crypto');
  const { default: pg } = await import('pg');
  const base = new URL(process.env.DATABASE_URL!);
  const name = `crm_${label}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  base.pathname = `/${name}`;
  return {
    url: base.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/**
 * `start(env)` for one test file: each server it starts is killed when the file's tests are done.
 * Call it at the top level of the file.
 */
export function serverStarter(): (env: Record<string, string>) => Promise<RunningServer> {
  const servers: RunningServer[] = [];
  after(async () => {
    for (const s of servers) await s.kill();
  });
  return async (env) => {
    const s = await startServer(env);
    servers.push(s);
    return s;
  };
}
