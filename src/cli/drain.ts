import net from 'node:net';
import type { Server } from 'node:http';

/**
 * The end of `crm serve`'s drain (CONTRACT A.1): stop accepting without resetting a connection the server
 * took, answer every request that reached it, and close the rest so cleanly that a client can tell it was
 * never read.
 *
 * Two races make the obvious `server.close()` reset connections:
 * - Node's `http.Server#close()` destroys every idle keep-alive connection at once. A request a client has
 *   just written on one sits unread in the socket's buffer, so it is not "in progress"; destroying a socket
 *   with unread bytes sends a reset, and the client cannot know whether the request ran.
 * - Connections the kernel completed but the process has not yet accepted are reset when the listening
 *   socket closes.
 * So the listener is closed on its own (`net.Server#close`), right after an I/O poll that accepted nothing;
 * idle connections are left alone for SETTLE_MS, time for bytes written before that close to be read and
 * become requests (answered, with `Connection: close`), and only then is each connection still idle closed:
 * its reading stops (nothing it receives later is parsed or run), a FIN tells the client it is closed, and the
 * socket is destroyed LINGER_MS later, after the client has seen that FIN.
 *
 * What remains is physics: the kernel completes connections on its own, and one completed in the microseconds
 * between that last poll and the close is still reset. Readiness answering 503 from the signal on is what stops
 * new connections arriving by then; test/e2e/serve-drain-hammer.test.ts measures the rest under load.
 */

/** How long after the listener closed a connection with no request in progress is taken for idle. */
const SETTLE_MS = 100;
/** How often idle connections are looked for until every connection has closed. */
const SWEEP_MS = 50;
/** How long a connection closed for idleness lingers (unread) before it is destroyed. */
const LINGER_MS = 250;
/**
 * The listener closes once this long has passed without a connection accepted or an answer under way: time for
 * a client answered last to have opened its next connection (accepted, and held unread, before the close).
 */
const QUIET_MS = 5;
/** At most this long is spent waiting for such a quiet moment before the listener closes anyway. */
const QUIET_POLL_MAX_MS = 500;

export interface ConnectionDrain {
  /**
   * Stops accepting, answers what reached the server, closes idle connections without a reset; resolves when
   * the listener and every connection have closed.
   */
  finish(): Promise<void>;
}

type HttpSocket = net.Socket & { _httpMessage?: unknown };

/** Tracks the server's connections from now on (call it before `listen`). */
export function connectionDrain(server: Server): ConnectionDrain {
  return new TrackedConnections(server);
}

class TrackedConnections implements ConnectionDrain {
  private readonly sockets = new Set<HttpSocket>();
  private readonly closing = new WeakSet<net.Socket>();
  private accepted = 0;
  /** While the listener is being closed, connections are not read (see stopAccepting). */
  private hold: ((socket: net.Socket) => void) | null = null;

  constructor(private readonly server: Server) {
    server.on('connection', (socket: net.Socket) => {
      this.accepted++;
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      // After the http server's own set-up, whose first read is started on the next tick.
      if (this.hold) process.nextTick(() => this.hold?.(socket));
    });
  }

  async finish(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.once('close', resolve));
    await this.stopAccepting();
    // Looked for in the check phase, right after a poll has read what had reached the sockets: after a stall
    // of the process, a timer runs before that poll.
    const closeIdleAfterPoll = () => setImmediate(() => this.closeIdle());
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    closeIdleAfterPoll();
    const sweep = setInterval(closeIdleAfterPoll, SWEEP_MS);
    try {
      await closed;
    } finally {
      clearInterval(sweep);
    }
  }

  private closeIdle(): void {
    for (const socket of this.sockets) {
      // Node's http server keeps the response in progress on its socket (`_httpMessage`) from the moment a
      // request's head is parsed until the response has been written.
      if (this.closing.has(socket) || socket._httpMessage) continue;
      this.closing.add(socket);
      socket.pause(); // the http server stops reading the socket: a request that arrives now is never parsed nor run
      socket.end(); // FIN: the client sees the connection closed, not reset
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    }
  }

  private answering(): boolean {
    for (const socket of this.sockets) if (socket._httpMessage) return true;
    return false;
  }

  /**
   * Closes the listening socket only (`http.Server#close` would also destroy the idle keep-alive connections),
   * in the check phase right after an I/O poll, once QUIET_MS have passed without a connection accepted or an
   * answer under way: the kernel's accept queue was empty at that poll, and what reaches it between then and
   * the close is the few microseconds of that poll. Meanwhile (a few loop turns) the connections are not read,
   * new ones included: no new request starts, those under way finish and are answered, and a client waiting
   * for an answer opens no new connection. Under a steady stream of new connections, or an answer that takes
   * longer, it closes after QUIET_POLL_MAX_MS anyway.
   */
  private stopAccepting(): Promise<void> {
    return new Promise((resolve) => {
      const held: net.Socket[] = [];
      this.hold = (socket) => {
        if (socket.isPaused() || this.closing.has(socket)) return; // paused by the http server itself (backpressure)
        socket.pause();
        held.push(socket);
      };
      for (const socket of this.sockets) this.hold(socket);
      const deadline = Date.now() + QUIET_POLL_MAX_MS;
      let seen = this.accepted;
      let busyAt = Date.now();
      const attempt = () => {
        const now = Date.now();
        if (this.accepted !== seen || this.answering()) busyAt = now;
        seen = this.accepted;
        if (now - busyAt < QUIET_MS && now < deadline) {
          setImmediate(attempt);
          return;
        }
        net.Server.prototype.close.call(this.server);
        this.hold = null;
        for (const socket of held) if (!this.closing.has(socket)) socket.resume();
        resolve();
      };
      // Each check phase follows one poll.
      setImmediate(attempt);
    });
  }
}
