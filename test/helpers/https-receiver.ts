import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TestCert } from './test-cert.js';

/** One request as the receiver got it. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw bytes, exactly as sent (what the signatures cover). */
  body: Buffer;
  json: any;
  /** Date.now() when the body was complete. */
  at: number;
}

/** What to answer; `hang` never answers, `destroy` drops the connection, `delayMs` waits first. */
export interface Answer {
  status?: number;
  body?: string | Buffer;
  headers?: Record<string, string>;
  delayMs?: number;
  hang?: boolean;
  destroy?: boolean;
}

export type Behaviour = (req: Received) => Answer | undefined;

export interface Receiver {
  port: number;
  url(path?: string): string;
  requests: Received[];
  /** Requests to a path (exact match). */
  on(path: string): Received[];
  /** Default answer per path prefix; the longest matching prefix wins; unmatched paths answer 200. */
  route(prefix: string, behaviour: Behaviour | Answer): void;
  /** Waits until `pred` holds (polls every 20 ms); throws with `what` after `timeoutMs`. */
  waitFor(pred: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Highest number of requests in flight at once for one (path, webhook-id) pair. */
  maxConcurrentPerEvent(): number;
  close(): Promise<void>;
}

/** A real HTTPS server on 127.0.0.1 (certificate from test-cert.ts) that records every request. */
export async function startReceiver(cert: TestCert): Promise<Receiver> {
  const requests: Received[] = [];
  const routes = new Map<string, Behaviour>();
  const inFlight = new Map<string, number>();
  let maxConcurrent = 0;
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();

  const server = https.createServer({ key: cert.key, cert: cert.cert }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    const path = (req.url ?? '/').split('?')[0];
    const key = `${path}\0${req.headers['webhook-id'] ?? ''}`;
    const n = (inFlight.get(key) ?? 0) + 1;
    inFlight.set(key, n);
    maxConcurrent = Math.max(maxConcurrent, n);
    let counted = true;
    const done = () => {
      if (!counted) return;
      counted = false;
      const left = (inFlight.get(key) ?? 1) - 1;
      if (left) inFlight.set(key, left);
      else inFlight.delete(key);
    };
    res.on('close', done);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let json: any;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      const rec: Received = { path, headers: req.headers, body, json, at: Date.now() };
      requests.push(rec);
      let best = '';
      for (const prefix of routes.keys()) if (path.startsWith(prefix) && prefix.length >= best.length) best = prefix;
      const answer = (routes.get(best) ?? (() => undefined))(rec) ?? {};
      const reply = () => {
        if (answer.hang) {
          hanging.add(res);
          return;
        }
        if (answer.destroy) {
          done();
          req.socket.destroy();
          return;
        }
        res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? 'ok');
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    url: (p = '/') => `https://127.0.0.1:${port}${p}`,
    requests,
    on: (p) => requests.filter((r) => r.path === p),
    route(prefix, behaviour) {
      routes.set(prefix, typeof behaviour === 'function' ? behaviour : () => behaviour);
    },
    async waitFor(pred, timeoutMs = 10_000, what = 'condition') {
      const until = Date.now() + timeoutMs;
      while (!pred()) {
        if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    maxConcurrentPerEvent: () => maxConcurrent,
    async close() {
      for (const r of hanging) r.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Headers as a plain string map (for verifier libraries). */
export function plainHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (typeof v === 'string') out[k] = v;
  return out;
}
