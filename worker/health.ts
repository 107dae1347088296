/**
 * The worker's health probe: with `WORKER_HEALTH_PORT` set, a small HTTP server answers
 * `GET /healthz` 200 `{"status":"ok"}` while every Temporal worker of the process is RUNNING and
 * 503 with each worker's state otherwise (a worker that failed or is shutting down). The image's
 * HEALTHCHECK and an orchestrator's liveness probe call it; it is never published.
 */
import { createServer, type Server } from 'node:http';
import type { WorkerSet } from './worker.js';

export function workerHealth(set: WorkerSet): { ok: boolean; workers: Record<string, string> } {
  const workers = Object.fromEntries(set.workers.map((w) => [w.options.taskQueue, w.getState()]));
  return { ok: Object.values(workers).every((s) => s === 'RUNNING'), workers };
}

export async function startHealthServer(set: WorkerSet, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/healthz') {
      res.writeHead(404).end();
      return;
    }
    const h = workerHealth(set);
    res.writeHead(h.ok ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: h.ok ? 'ok' : 'unhealthy', workers: h.workers }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}
