// A keep-alive HTTP/1.1 client connection written by hand, for the long-poll benchmarks: holding 1,000
// requests and timing their answers must measure the server, not the client. undici's Pool spends tens of
// microseconds of the client's one thread per answer (parser, promises, body stream, JSON), so the last of
// 1,000 answers that arrive together waits for the client to get through the others first; here an answer
// costs a buffer search and a slice. Answers must carry Content-Length (Fastify sends it for JSON bodies).
import net from 'node:net';
import { performance } from 'node:perf_hooks';

export interface RawResponse {
  status: number;
  body: Buffer;
  /** performance.now() when the answer's last byte was read. */
  at: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export class RawConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting?: { resolve(r: RawResponse): void; reject(e: Error): void };

  private constructor(
    private readonly socket: net.Socket,
    private readonly hostHeader: string,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host }, () => resolve(new RawConnection(socket, `${host}:${port}`)));
      socket.once('error', reject);
    });
  }

  /** One request at a time per connection (no pipelining). */
  request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
    if (this.waiting) return Promise.reject(new Error('a request is already in flight on this connection'));
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    if (body !== undefined) head += `content-length: ${Buffer.byteLength(body)}\r\n`;
    const promise = new Promise<RawResponse>((resolve, reject) => (this.waiting = { resolve, reject }));
    this.socket.write(head + '\r\n' + (body ?? ''));
    return promise;
  }

  close(): void {
    this.waiting = undefined;
    this.socket.destroy();
  }

  private fail(err: Error): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(err);
  }

  private onData(chunk: Buffer): void {
    const at = performance.now();
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const end = this.buffer.indexOf(HEAD_END);
    if (end < 0) return;
    const head = this.buffer.subarray(0, end).toString('latin1');
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) return this.fail(new Error(`an answer without Content-Length: ${head.split('\r\n')[0]}`));
    const total = end + HEAD_END.length + Number(length[1]);
    if (this.buffer.length < total) return;
    const body = this.buffer.subarray(end + HEAD_END.length, total);
    this.buffer = this.buffer.subarray(total);
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve({ status: Number(head.slice(9, 12)), body, at });
  }
}

/** `n` connections to the same server. */
export function openConnections(port: number, n: number): Promise<RawConnection[]> {
  return Promise.all(Array.from({ length: n }, () => RawConnection.open(port)));
}

/** The q-th quantile of ascending `sorted` values (the value below which a share q of them lie). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
