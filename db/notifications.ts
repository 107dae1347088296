/**
 * A PostgreSQL `LISTEN` connection that survives: it reconnects (backoff 0.25 s doubling to 5 s)
 * whenever its connection dies, and proves itself alive with a round trip every `heartbeatMs`.
 * `live` is true only while the last round trip finished within `staleAfterMs`: a notification
 * committed before a heartbeat's query is delivered before its answer (one socket, in order), so
 * a live listener has seen every change committed more than `staleAfterMs` ago. Whatever the
 * caller derived from notifications is void when `onReset` fires (connected anew: notifications
 * sent while it was away are lost).
 */
import pg from 'pg';
import { pgClientOptions } from './pgConnection.js';

export interface ListenerOptions {
  databaseUrl: string;
  channel: string;
  onNotify(payload: string): void;
  /** The connection was (re)established or lost: drop everything kept on the strength of notifications. */
  onReset(): void;
  onError?(err: Error): void;
  heartbeatMs?: number;
  staleAfterMs?: number;
}

export interface Listener {
  /** The last round trip on the LISTEN connection finished within `staleAfterMs`. */
  readonly live: boolean;
  close(): Promise<void>;
}

// Raw SQL: `listen` and the heartbeat's `select 1` on a dedicated pg connection (no table; neither the ORM nor Kysely holds a LISTEN).
export function listen(opts: ListenerOptions): Listener {
  const heartbeatMs = opts.heartbeatMs ?? 250;
  const staleAfterMs = opts.staleAfterMs ?? 1000;
  if (!/^\w+$/.test(opts.channel)) throw new Error(`channel ${opts.channel} is not a plain identifier`);
  let client: pg.Client | undefined;
  let aliveAt = -Infinity;
  let closed = false;
  let backoffMs = 250;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let heartbeatSentAt: number | undefined;

  const lost = (c: pg.Client, err?: Error) => {
    if (client !== c) return;
    client = undefined;
    aliveAt = -Infinity;
    heartbeatSentAt = undefined;
    opts.onReset();
    if (err) opts.onError?.(err);
    c.end().catch(() => {});
    if (!closed) reconnectTimer = setTimeout(connect, backoffMs);
    backoffMs = Math.min(backoffMs * 2, 5000);
  };

  async function connect() {
    reconnectTimer = undefined;
    if (closed) return;
    // keepAlive: a peer that vanished without a FIN is noticed by the kernel too, not only by the heartbeat.
    const c = new pg.Client({ ...pgClientOptions(opts.databaseUrl), application_name: `listen:${opts.channel}`, keepAlive: true, keepAliveInitialDelayMillis: 1000 });
    client = c;
    c.on('error', (err) => lost(c, err));
    c.on('end', () => lost(c));
    c.on('notification', (n) => {
      if (n.channel === opts.channel) opts.onNotify(n.payload ?? '');
    });
    try {
      await c.connect();
      // raw SQL: LISTEN on a dedicated pg client (no statement on a table).
      await c.query(`listen ${opts.channel}`);
      if (client !== c) return;
      // Anything derived before this moment may have missed a notification.
      opts.onReset();
      aliveAt = performance.now();
      backoffMs = 250;
    } catch (err) {
      lost(c, err as Error);
    }
  }

  const heartbeat = setInterval(() => {
    const c = client;
    if (!c || aliveAt === -Infinity) return;
    if (heartbeatSentAt !== undefined) {
      // A round trip this late means a connection that hangs (a silent network loss): start over.
      if (performance.now() - heartbeatSentAt > 5 * staleAfterMs) lost(c, new Error('LISTEN connection stopped answering'));
      return;
    }
    heartbeatSentAt = performance.now();
    // raw SQL: the heartbeat round trip of the LISTEN connection.
    c.query('select 1').then(
      () => {
        if (client !== c) return;
        heartbeatSentAt = undefined;
        aliveAt = performance.now();
      },
      (err: Error) => lost(c, err),
    );
  }, heartbeatMs);
  heartbeat.unref();
  void connect();

  return {
    get live() {
      return performance.now() - aliveAt < staleAfterMs;
    },
    async close() {
      closed = true;
      clearInterval(heartbeat);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
