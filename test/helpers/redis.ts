import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { after } from 'node:test';
import { freePort } from './server.js';

/** A redis-server of the test's own (no persistence), on a fixed port so that it can be restarted there. */
export interface OwnRedis {
  port: number;
  url: string;
  /** Starts the server (again) on the same port and resolves once it answers PING. */
  start(): Promise<void>;
  /** SIGKILL, as a crash would; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Sends a signal to the running server (SIGSTOP freezes it, SIGCONT resumes it). */
  signal(sig: NodeJS.Signals): void;
}

/** True when a Redis on `port` answers PING within `timeoutMs`. */
export function redisAnswers(port: number, timeoutMs = 200): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** Spawns `redis-server` on a free port; it is killed when the file's tests are done. */
export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const kill = async () => {
    const p = proc;
    proc = null;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((resolve) => p.once('exit', resolve));
    p.kill('SIGKILL'); // also ends a stopped (SIGSTOP) server
    await exited;
  };
  after(kill);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
        stdio: 'ignore',
      });
      let failed: Error | null = null;
      proc.on('error', (err) => (failed = err));
      const deadline = Date.now() + 10_000;
      while (!(await redisAnswers(port))) {
        if (failed) throw new Error(`redis-server could not be started: ${(failed as Error).message}`);
        if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    kill,
    signal(sig) {
      proc?.kill(sig);
    },
  };
}
