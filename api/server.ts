/** Creates the API's dependencies and an HTTP server; used by `api/main.ts`, `npm start` and tests. */
import type { Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import type { Config } from '../domain/config.js';
import { openStores } from '../db/connect.js';
import { createContactReader } from '../db/contactRead.js';
import { createBalanceReader } from '../db/credits.js';
import { listen } from '../db/notifications.js';
import { pendingMigrations } from '../db/orm.js';
import { createPayloadCodec } from '../domain/payloadCodec.js';
import { createLogger } from '../telemetry/log.js';
import { startMetricsServer } from '../telemetry/metricsServer.js';
import type { OperatorServer } from '../telemetry/operatorHttp.js';
import { uuidv7Pooled } from '../domain/ids.js';
import { MAX_URL_BYTES, createApp, errorBody, uriTooLong } from './app.js';
import { startCodecServer } from './codecServer.js';
import { AUTH_CHANGED_CHANNEL, ApiKeyCache } from './middleware/auth.js';
import type { AppDeps } from './deps.js';
import { startReplicaHeartbeat } from './replicas.js';

export interface ApiServer {
  deps: AppDeps;
  server: Server;
  url: string;
  /** Operator endpoints, when their ports are configured (`METRICS_PORT`, `CODEC_PORT`). */
  metricsUrl?: string;
  codecUrl?: string;
  close(): Promise<void>;
}

/**
 * How long a closing API keeps its open keep-alive connections for what their clients send next
 * (answered with `Connection: close`) before it closes those still idle.
 */
const DRAIN_MS = 500;

export async function startApiServer(config: Config, opts: { log?: Logger; port?: number } = {}): Promise<ApiServer> {
  // Asynchronous stdout: lines written while a write is in flight go out together, so the access
  // log at info costs the request path no synchronous write (pino flushes it when the process exits).
  const log = opts.log ?? createLogger({ svc: 'api', level: config.logLevel }, pino.destination({ dest: 1, sync: false }));
  const stores = await openStores(config, { poolMax: config.dbPoolMax.api, role: 'api', onConnectionError: (err) => log.warn({ err: err.message }, 'database connection lost') });
  const apiKeys = new ApiKeyCache(stores.pool, () => listener.live);
  const listener = listen({
    databaseUrl: config.databaseUrl,
    channel: AUTH_CHANGED_CHANNEL,
    onNotify: (payload) => apiKeys.invalidate(payload),
    onReset: () => apiKeys.clear(),
    onError: (err) => log.warn({ err: err.message }, 'auth change listener lost its connection; keys are looked up per request until it is back'),
  });
  const replicas = startReplicaHeartbeat(stores.pool, { intervalMs: config.apiReplicaHeartbeatMs, log });
  const deps: AppDeps = { config, log, ...stores, apiKeys, readContact: createContactReader(stores.pool), readBalance: createBalanceReader(stores.pool), replicas };
  let metrics: OperatorServer | undefined;
  let codec: OperatorServer | undefined;
  let server: Server | undefined;
  try {
    await stores.storage.ensureBucket();
    // The first requests are counted against the share of the replicas running now.
    await replicas.ready;
    // Said once at start (and by /readyz until fixed): requests needing what the schema lacks fail.
    const pending = await pendingMigrations(stores.orm);
    if (pending.length) log.error({ pending }, 'the database lacks migrations of this build; run npm run start:migrate (npm start migrates when it starts; /readyz answers 503 until then)');
    if (config.metrics.port !== null) metrics = await startMetricsServer({ ...config.metrics, port: config.metrics.port });
    if (config.codec.port !== null) codec = await startCodecServer(config, createPayloadCodec(config));
    server = createApp(deps).listen(opts.port ?? config.port, config.host);
    await new Promise<void>((resolve, reject) => {
      server!.once('listening', resolve);
      server!.once('error', reject);
    });
  } catch (e) {
    // Nothing half-started stays behind (an operator port taken, a codec without its token …).
    server?.close();
    await replicas.stop();
    await Promise.allSettled([listener.close(), stores.close(), metrics?.close(), codec?.close()]);
    throw e;
  }
  const api = server;
  api.keepAliveTimeout = 65_000;
  // Deliberately Node's defaults, spelled out: a request must be received whole (headers and body)
  // within 300 s, or Node answers 408 and closes the connection; its headers within 60 s. The
  // largest body is a 50 MiB upload (MAX_UPLOAD_BYTES), which takes 300 s at ~1.4 Mbit/s: a
  // shorter limit would refuse real uploads on slow links. The cost is that a client whose body
  // stalls mid-upload holds its connection (no response) until then. A per-read idle timeout in
  // the body readers (co-body, formidable) would end stalls sooner; it is not done here.
  api.requestTimeout = 300_000;
  api.headersTimeout = 60_000;
  api.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(err, socket, log));
  const addr = api.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  return {
    deps,
    server: api,
    url: `http://${config.host}:${port}`,
    metricsUrl: metrics && `${metrics.url}/metrics`,
    codecUrl: codec?.url,
    async close() {
      // Readiness first: the load balancer (a Kubernetes Service, whose endpoints follow the
      // readiness probe) stops routing here while this process still accepts and serves; only
      // then does it refuse new connections. Without it a rolling update sent requests for a
      // few seconds to a process that refused them (502s).
      deps.shuttingDown = true;
      if (config.shutdownDelayMs > 0) {
        log.info({ delayMs: config.shutdownDelayMs }, 'shutting down: /readyz fails, still serving until the delay ends, then draining');
        await delay(config.shutdownDelayMs);
      }
      // A drain, for rolling deploys: new connections are refused at once (safe for a client to
      // retry elsewhere), while open keep-alive connections answer what their clients send next
      // with `Connection: close`. Node's `server.close()` would close the idle ones at once,
      // resetting the requests clients are sending on them that instant (ECONNRESET: served or
      // not, the client cannot tell). Connections still idle after DRAIN_MS are closed; requests
      // in flight are answered before the process goes on.
      api.prependListener('request', (_req, res) => res.setHeader('connection', 'close'));
      const closed = new Promise<void>((r) => NetServer.prototype.close.call(api, () => r()));
      await Promise.race([closed, delay(DRAIN_MS)]);
      api.close();
      await closed;
      await replicas.stop();
      await listener.close();
      await Promise.allSettled([stores.close(), metrics?.close(), codec?.close()]);
    },
  };
}

/**
 * What Node's HTTP parser refuses before any route runs (malformed framing, a request line that is
 * not HTTP, headers over the limit, a request not received in time), answered as every other
 * error is: the error envelope with a stable code and a request id, then the connection closes.
 * Node's own answer is a bare status line. Nothing is written when a response of the connection
 * has already begun (it would corrupt it) or the peer is gone.
 */
/**
 * Whether a header overflow is the request line's (a long URL, 414) rather than the header
 * fields' (431): the bytes the parser was reading when it gave up (`rawPacket`, the last read of
 * the socket) begin with a request line longer than MAX_URL_BYTES, or with one not ended at all.
 */
function requestLineTooLong(err: NodeJS.ErrnoException): boolean {
  const packet = (err as { rawPacket?: Buffer }).rawPacket;
  if (!packet) return false;
  const end = packet.indexOf('\n');
  const line = packet.subarray(0, end < 0 ? Math.min(packet.length, MAX_URL_BYTES + 64) : end).toString('latin1');
  return /^[A-Z]+ \S/.test(line) && (end < 0 || line.length > MAX_URL_BYTES);
}

function answerClientError(err: NodeJS.ErrnoException, socket: Socket, log: Logger): void {
  // Node's own rule (socketOnError): answer only if no response of this connection has begun.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
    const [status, reason, code, message] =
      err.code === 'HPE_HEADER_OVERFLOW' && requestLineTooLong(err)
        ? [414, 'URI Too Long', 'uri_too_long', uriTooLong().message]
        : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request line or header fields are too large']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'request_timeout', 'The request was not received in time']
          : [400, 'Bad Request', 'malformed_request', `The request is not valid HTTP/1.1: ${err.message.replace(/^Parse Error: /, '')}`];
    const requestId = uuidv7Pooled();
    const body = JSON.stringify(errorBody(status, code, message, requestId));
    log.info({ requestId, status, code: err.code }, 'request refused by the HTTP parser');
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`, () => socket.destroy());
    return;
  }
  socket.destroy();
}
