// A PostgreSQL cluster of the test's own (initdb in a scratch directory, its own port), for fault tests
// that freeze, stop and restart the database under a running service without touching the shared one.
// PostgreSQL refuses to run as root, so as root (CI, the developers' machines) it runs as `postgres`.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './server.js';

export interface TestCluster {
  url: string;
  port: number;
  /** SIGSTOP to every process of the cluster: sockets stay open, nothing answers. */
  freeze(): void;
  thaw(): void;
  /** A fast shutdown (SIGINT to the postmaster): sessions are terminated, new connections refused. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data (after stop()); resolves once it accepts sessions. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

function binDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(path.join(root, v, 'bin', 'initdb'))) return path.join(root, v, 'bin');
  return null;
}

/** Why a test cluster cannot be made here (no server binaries, or root without a `postgres` user), or null. */
export function testClusterUnavailable(): string | null {
  if (!binDir()) return 'PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are not installed';
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) return 'running as root without a postgres user';
  return null;
}

/** As root, the uid and gid of `postgres` for the cluster's processes (node sets them itself, no su in between). */
function owner(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid };
}

export async function startTestCluster(): Promise<TestCluster> {
  const bin = binDir()!;
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-pgc-'));
  const data = path.join(dir, 'data');
  const ids = owner();
  if (ids.uid !== undefined) chownSync(dir, ids.uid, ids.gid!);
  const env = { ...process.env, LC_ALL: 'C' };
  const init = spawnSync(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'], {
    encoding: 'utf8',
    env,
    cwd: dir,
    ...ids,
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  let proc: ChildProcess | null = null;

  const launch = async () => {
    const args = [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'shared_buffers=32MB',
      '-c',
      'max_connections=60',
    ];
    proc = spawn(path.join(bin, 'postgres'), args, { detached: true, stdio: 'ignore', env, cwd: dir, ...ids });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = spawnSync(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q']);
      if (r.status === 0) return;
      if (Date.now() > deadline) throw new Error('the test cluster did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const postmasterPid = () => Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  // Every process of the cluster: the postmaster and its children (each backend is a session of its own).
  const clusterPids = (): number[] => {
    if (!existsSync(path.join(data, 'postmaster.pid'))) return [];
    const master = postmasterPid();
    const children = spawnSync('pgrep', ['-P', String(master)], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean)
      .map(Number);
    return [master, ...children];
  };
  const signalAll = (signal: NodeJS.Signals, pids = clusterPids()) => {
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
    }
  };
  const exited = () =>
    new Promise<void>((resolve) => {
      const p = proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once('exit', () => resolve());
    });

  await launch();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    // The postmaster first, so that it forks no new backend meanwhile.
    freeze: () => signalAll('SIGSTOP'),
    thaw: () => signalAll('SIGCONT'),
    async stop() {
      const done = exited();
      process.kill(postmasterPid(), 'SIGINT');
      await done;
      proc = null;
    },
    start: launch,
    async destroy() {
      const pids = clusterPids();
      signalAll('SIGCONT', pids);
      signalAll('SIGKILL', pids);
      await exited();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
