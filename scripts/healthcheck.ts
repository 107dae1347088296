/**
 * Container health probe (the image's HEALTHCHECK): `node dist/scripts/healthcheck.js api` asks
 * the API's `GET /readyz` (PostgreSQL, Temporal and the object store answer); `… worker` asks the
 * worker's `GET /healthz` on `WORKER_HEALTH_PORT` (every Temporal worker RUNNING). Exit 0 when
 * healthy, 1 otherwise, with the answer on stdout for `docker inspect`.
 */
import { loadConfig } from '../domain/config.js';

const role = process.argv[2];
const config = loadConfig();
const port = role === 'worker' ? config.workerHealthPort : role === 'api' ? config.port : 0;
if (!port) {
  console.error(role === 'worker' ? 'WORKER_HEALTH_PORT is not set' : 'usage: healthcheck api|worker');
  process.exit(2);
}
const url = `http://127.0.0.1:${port}${role === 'worker' ? '/healthz' : '/readyz'}`;
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4_000) });
  console.log(res.status, await res.text());
  process.exit(res.ok ? 0 : 1);
} catch (e) {
  console.log(`${url}: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
