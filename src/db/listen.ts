import type pg from 'pg';

export interface Listener {
  close(): Promise<void>;
}

export interface ListenLog {
  warn(obj: object, msg: string): void;
}

/**
 * LISTEN on one dedicated connection of the pool: `onNotify(payload)` for each NOTIFY on `channel`.
 * Reconnects a second after a lost connection. Calls `onReconnect` each time the LISTEN is in place
 * (at start too), since NOTIFYs sent before were not heard: the caller re-checks what it waits for.
 */
export function listen(pool: pg.Pool, channel: string, onNotify: (payload: string) => void, onReconnect: () => void, log: ListenLog): Listener {
  let client: pg.PoolClient | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  // An outage is logged once, not once a retry; the LISTEN in place again ends it.
  let failing = false;

  const connect = async () => {
    retry = null;
    if (closed) return;
    let c: pg.PoolClient | null = null;
    try {
      c = await pool.connect();
      if (closed) {
        c.release();
        return;
      }
      const me = c;
      me.on('notification', (n) => {
        if (n.channel === channel) onNotify(n.payload ?? '');
      });
      me.on('error', (err) => {
        if (client !== me) return;
        log.warn({ err, channel }, 'LISTEN connection lost; reconnecting');
        client = null;
        me.release(err);
        if (!closed) retry = setTimeout(() => void connect(), 1_000);
      });
      await me.query(`LISTEN ${channel}`);
      if (closed) {
        me.release(true);
        return;
      }
      client = me;
      failing = false;
      // Notifications sent before this point were not heard (at start, or while reconnecting).
      onReconnect();
    } catch (err) {
      c?.release(err as Error);
      if (!failing) log.warn({ err, channel }, 'cannot LISTEN; retrying every second');
      failing = true;
      if (!closed) retry = setTimeout(() => void connect(), 1_000);
    }
  };
  void connect();

  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      if (c) {
        await c.query(`UNLISTEN ${channel}`).catch(() => {});
        c.release(true); // never hand a LISTENing connection back to the pool
      }
    },
  };
}
