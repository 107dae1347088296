/**
 * `npm start`: starts (or reuses) the stack, migrates, loads the demo dataset into an empty one and
 * ensures a demo workspace (scripts/firstStart.ts), starts the API and the worker as child
 * processes (restarted when they die), and prints where everything is and how to call it.
 * Ctrl-C stops API and worker; the stack keeps running (`npm run stack -- stop` stops it) so the
 * next start is warm.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { PROCESS_NODE_FLAGS, ROOT_DIR, WORKER_NODE_FLAGS, loadConfig } from '../domain/config.js';
import { startStack } from './stack.js';
import { ensureTemporalNamespace } from './temporalSetup.js';
import { describeDataset, prepareDatabase } from './firstStart.js';

const t0 = performance.now();
const config = loadConfig();
await startStack();
// The embedded dev server has them already; an external Temporal gets its namespace and search attributes.
if (process.env.TEMPORAL_ADDRESS) await ensureTemporalNamespace(config);

// The demo workspace's key is shown once at creation; keep it in the git-ignored data folder.
const demoFile = join(process.env.DATA_DIR ?? join(ROOT_DIR, '.data'), 'demo-workspace.json');
const { demo, dataset } = await prepareDatabase(config, demoFile);

/**
 * Supervision: a child that dies (a crash, an OOM kill) is logged with its exit code or signal
 * and started again after a backoff that doubles with each death in quick succession (0.5 s up
 * to 30 s; a child that ran a minute starts from 0.5 s again). The service never stops itself
 * because one child died; only Ctrl-C / SIGTERM stop it.
 */
const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 30_000;
const HEALTHY_AFTER_MS = 60_000;

interface Supervised {
  entry: string;
  child?: ChildProcess;
  failures: number;
  timer?: NodeJS.Timeout;
  ready: Promise<void>;
}

const log = (msg: string) => console.error(`[start] ${new Date().toISOString()} ${msg}`);
let stopping = false;
const supervised: Supervised[] = [];

function supervise(entry: string, env: NodeJS.ProcessEnv = process.env): Supervised {
  let firstReady!: () => void;
  const s: Supervised = { entry, failures: 0, ready: new Promise((r) => (firstReady = r)) };
  supervised.push(s);
  const launch = () => {
    s.timer = undefined;
    if (stopping) return;
    const startedAt = Date.now();
    const child = fork(join(ROOT_DIR, entry), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...(entry.startsWith('worker/') ? WORKER_NODE_FLAGS : PROCESS_NODE_FLAGS), '--import', 'tsx'], env });
    s.child = child;
    log(`${entry} started (pid ${child.pid})`);
    child.once('message', () => {
      log(`${entry} ready (pid ${child.pid})`);
      firstReady();
    });
    // A fork that cannot even be spawned reports 'error' (and may never 'exit').
    child.once('error', (err) => log(`${entry} (pid ${child.pid}) error: ${err.message}`));
    child.once('exit', (code, signal) => {
      if (stopping) return;
      if (Date.now() - startedAt >= HEALTHY_AFTER_MS) s.failures = 0;
      const delay = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** s.failures);
      s.failures++;
      const cause = signal ? `killed by ${signal}` : `exit code ${code}`;
      log(`${entry} (pid ${child.pid}) died: ${cause}; restarting in ${(delay / 1000).toFixed(1)} s (death ${s.failures} in a row)`);
      s.timer = setTimeout(launch, delay);
    });
  };
  launch();
  return s;
}

async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const s of supervised) clearTimeout(s.timer);
  const running = supervised.map((s) => s.child).filter((c): c is ChildProcess => !!c && c.exitCode === null && c.signalCode === null);
  const exited = running.map((c) => new Promise((r) => c.once('exit', r)));
  for (const c of running) c.kill('SIGTERM');
  await Promise.all(exited);
  process.exit(code);
}
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());

// API and worker share this host: the worker's metrics port is WORKER_METRICS_PORT, else METRICS_PORT + 1.
const metricsPort = process.env.METRICS_PORT?.trim();
const workerMetricsPort = process.env.WORKER_METRICS_PORT ?? (metricsPort && metricsPort !== '0' ? String(Number(metricsPort) + 1) : metricsPort);
const workerEnv = workerMetricsPort === undefined ? process.env : { ...process.env, METRICS_PORT: workerMetricsPort };
await Promise.all([supervise('worker/main.ts', workerEnv).ready, supervise('api/main.ts').ready]);
const secs = ((performance.now() - t0) / 1000).toFixed(1);
const datasetLine = describeDataset(dataset);
console.log(`
Ready in ${secs}s
  API         ${config.publicBaseUrl}
  API docs    ${config.publicBaseUrl}/docs
  Temporal UI ${config.temporal.uiUrl}
  API key     ${demo.apiKey}   (demo workspace ${demo.workspaceId}, enterprise plan)
${datasetLine ? `  ${datasetLine}\n` : ''}
In another terminal, for the README walkthrough:
  export API=${config.publicBaseUrl}
  export API_KEY=${demo.apiKey}
  curl -s "$API/credits/balance" -H "x-api-key: $API_KEY"
`);
