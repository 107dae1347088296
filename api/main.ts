/** The API process: `npm run api`. Stateless; run as many as the load needs. */
import { startTracing, stopTracing } from '../telemetry/tracing.js';

// First, when OTEL_* names a collector: the instrumentations patch pg and http as they load.
await startTracing('api');
const { loadConfig, refuseUnsafeProductionSecrets } = await import('../domain/config.js');
const { startApiServer } = await import('./server.js');

refuseUnsafeProductionSecrets();
const api = await startApiServer(loadConfig());
// Last resorts, as in the worker: a stray rejection is logged; an uncaught exception is logged
// and ends the process, which `npm start` (or the orchestrator) restarts.
process.on('unhandledRejection', (reason) => api.deps.log.error({ err: reason }, 'unhandled rejection'));
process.on('uncaughtException', (err) => {
  api.deps.log.fatal({ err }, 'uncaught exception; exiting');
  process.exit(1);
});
api.deps.log.info({ url: api.url, metricsUrl: api.metricsUrl, codecUrl: api.codecUrl }, 'api listening');
process.send?.('ready');
const stop = async () => {
  await api.close();
  await stopTracing();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
process.once('disconnect', stop);
