/** Creates the API's dependencies and an HTTP server; used by `api/main.ts`, `npm start` and tests. */
import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import type { Config } from '../domain/config.js';
import { openStores } from '../db/connect.js';
import { listen } from '../db/notifications.js';
import { createApp } from './app.js';
import { AUTH_CHANGED_CHANNEL, ApiKeyCache } from './middleware/auth.js';
import type { AppDeps } from './deps.js';

export interface ApiServer {
  deps: AppDeps;
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startApiServer(config: Config, opts: { log?: Logger; port?: number } = {}): Promise<ApiServer> {
  // Asynchronous stdout: lines written while a write is in flight go out together, so the access
  // log at info costs the request path no synchronous write (pino flushes it when the process exits).
  const log = opts.log ?? pino({ level: config.logLevel, base: { svc: 'api' } }, pino.destination({ dest: 1, sync: false }));
  const stores = await openStores(config, { poolMax: 20, role: 'api', onConnectionError: (err) => log.warn({ err: err.message }, 'database connection lost') });
  const apiKeys = new ApiKeyCache(stores.pool, () => listener.live);
  const listener = listen({
    databaseUrl: config.databaseUrl,
    channel: AUTH_CHANGED_CHANNEL,
    onNotify: (payload) => apiKeys.invalidate(payload),
    onReset: () => apiKeys.clear(),
    onError: (err) => log.warn({ err: err.message }, 'auth change listener lost its connection; keys are looked up per request until it is back'),
  });
  const deps: AppDeps = { config, log, ...stores, apiKeys };
  await stores.storage.ensureBucket();
  const app = createApp(deps);
  const server = app.listen(opts.port ?? config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  return {
    deps,
    server,
    url: `http://${config.host}:${port}`,
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections?.();
      await listener.close();
      await stores.close();
    },
  };
}
