/** The worker process: `npm run worker`. Stateless; run as many as the load needs. */
import { startTracing, stopTracing } from '../telemetry/tracing.js';

// First, when OTEL_* names a collector: the instrumentations patch pg and http as they load.
await startTracing('worker');
const { loadConfig, refuseUnsafeProductionSecrets } = await import('../domain/config.js');
const { openStores } = await import('../db/connect.js');
const { existsSync } = await import('node:fs');
const { createLogger } = await import('../telemetry/log.js');
const { scrapeText, startMetricsServer } = await import('../telemetry/metricsServer.js');
const { BUILT_WORKFLOW_BUNDLE, RUNNING_COMPILED, createWorkers } = await import('./worker.js');
const { startHealthServer } = await import('./health.js');
const { ensureMediaRetentionSchedule, ensureRetentionSchedule, ensureTokenRefreshSchedule, ensureWorkspaceEventsSchedule } = await import('./schedules.js');
const { installRuntime } = await import('./telemetry.js');

refuseUnsafeProductionSecrets();
const config = loadConfig();
const log = createLogger({ svc: 'worker', level: config.logLevel });
// The SDK's own logs (bundler output, state changes) at TEMPORAL_LOG_LEVEL (warnings by default).
const { sdkMetricsUrl } = await installRuntime(config, log);
// Last resorts. A stray rejection is logged, not fatal: whatever awaited it has failed or will
// time out, and Temporal retries it. An uncaught exception leaves the process in an unknown
// state: logged with its cause, the process exits and `npm start` (or the orchestrator) restarts it.
process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled rejection'));
process.on('uncaughtException', (err) => {
  log.fatal({ err }, 'uncaught exception; exiting');
  process.exit(1);
});
const stores = await openStores(config, {
  poolMax: config.dbPoolMax.worker,
  role: 'worker',
  // The activity using the connection fails and Temporal retries it; the worker stays up.
  onConnectionError: (err) => log.warn({ err: err.message }, 'database connection lost'),
});
// One scrape per process: this registry, then the SDK's worker metrics.
const metrics = config.metrics.port === null ? undefined : await startMetricsServer({ ...config.metrics, port: config.metrics.port, extra: sdkMetricsUrl ? () => scrapeText(sdkMetricsUrl) : undefined });
// The compiled worker loads the bundle `npm run build` wrote; from sources (tsx) it bundles at start.
const builtBundle = RUNNING_COMPILED && existsSync(BUILT_WORKFLOW_BUNDLE) ? BUILT_WORKFLOW_BUNDLE : undefined;
const set = await createWorkers({ config, log, ...stores }, { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH || builtBundle });
if (config.media.retentionSchedule) {
  // Not fatal: the worker serves without it, and the next start tries again.
  await ensureMediaRetentionSchedule(stores.temporal, config).catch((err) => log.warn({ err }, 'media retention schedule not created'));
  await ensureWorkspaceEventsSchedule(stores.temporal, config).catch((err) => log.warn({ err }, 'workspace events schedule not created'));
}
if (config.tokenRefreshSchedule) {
  await ensureTokenRefreshSchedule(stores.temporal, config).catch((err) => log.warn({ err }, 'OAuth token refresh schedule not created'));
}
if (config.retention.schedule) {
  await ensureRetentionSchedule(stores.temporal, config).catch((err) => log.warn({ err }, 'retention schedule not created'));
}
const health = config.workerHealthPort ? await startHealthServer(set, config.workerHealthPort, config.host) : undefined;
const stop = async () => {
  log.info('worker shutting down');
  health?.close();
  await set.shutdown();
  await Promise.allSettled([stores.close(), metrics?.close(), stopTracing()]);
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
// Started by `npm start` or a test: go when the parent goes, never linger as an orphan.
process.once('disconnect', stop);
log.info({ taskQueues: set.workers.map((w) => w.options.taskQueue), healthPort: config.workerHealthPort || undefined, metricsUrl: metrics ? `${metrics.url}/metrics` : undefined }, 'worker running');
process.send?.('ready');
await set.run();
