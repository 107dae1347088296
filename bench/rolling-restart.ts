/**
 * Rolling restart under load (issue 31): two API processes behind a balancer that routes only to
 * backends whose `/readyz` answered 200 at its last probe (every 250 ms, as a Kubernetes Service
 * follows its readiness probe), steady load through it, and each API restarted in turn as a
 * rolling update does: SIGTERM (readiness fails at once, the process keeps serving for
 * `SHUTDOWN_DELAY_MS`, then drains and exits), a new process on the same port, the next one once
 * that is ready. Printed beside the anchor, the same load for the same time without restarts:
 * requests, answers other than 200, connection errors. The claim is 0 lost: every request answered 200.
 *
 *   npx tsx bench/rolling-restart.ts [--seconds 60] [--connections 16] [--tsx]
 *
 * API and balancer ports: BENCH_API_PORTS (default `3126,3136`), BENCH_LB_PORT (default 3146).
 */
import type { ChildProcess } from 'node:child_process';
import { Agent, createServer, request, type Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createWorkspace } from '../db/workspaces.js';
import { openDatabase } from '../db/orm.js';
import { compiledBuild, dropDatabase, freshDatabase, say, startService, stopService } from './lib.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    connections: { type: 'string', default: '16' },
    tsx: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(args.seconds);
const API_PORTS = (process.env.BENCH_API_PORTS ?? '3126,3136').split(',').map(Number);
const LB_PORT = Number(process.env.BENCH_LB_PORT ?? 3146);
const SHUTDOWN_DELAY_MS = 3000;
const PROBE_MS = 250;
const DB = 'bench_rolling_restart';

/**
 * A round-robin HTTP balancer over the backends that are ready: a probe every 250 ms; an answer
 * other than 200 takes a backend out at once, a probe that times out (1 s) or fails to connect
 * only after 3 in a row (Kubernetes' default failureThreshold), as a slow answer under load is
 * not a backend going away.
 */
function startBalancer(ports: number[]): { server: Server; close(): void } {
  const ready = new Map(ports.map((p) => [p, false]));
  const failures = new Map(ports.map((p) => [p, 0]));
  const failed = (port: number) => {
    failures.set(port, failures.get(port)! + 1);
    if (failures.get(port)! >= 3) ready.set(port, false);
  };
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const probe = setInterval(() => {
    for (const port of ports) {
      const req = request({ host: '127.0.0.1', port, path: '/readyz', timeout: 1000 }, (res) => {
        failures.set(port, 0);
        ready.set(port, res.statusCode === 200);
        res.resume();
      });
      req.on('error', () => failed(port));
      req.on('timeout', () => req.destroy());
      req.end();
    }
  }, PROBE_MS);
  let next = 0;
  const server = createServer((req, res) => {
    const live = ports.filter((p) => ready.get(p));
    if (!live.length) {
      // A lost request as much as a backend's failure would be.
      res.writeHead(599).end('no ready backend');
      return;
    }
    const port = live[next++ % live.length]!;
    const upstream = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers, agent }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end('backend connection failed');
      else res.destroy();
    });
    req.pipe(upstream);
  });
  server.listen(LB_PORT, '127.0.0.1');
  return {
    server,
    close() {
      clearInterval(probe);
      server.close();
      agent.destroy();
    },
  };
}

interface LoadResult {
  requests: number;
  non200: number;
  errors: number;
  rps: number;
  /** Answers by status (autocannon's statusCodeStats). */
  statuses: string;
}

async function load(apiKey: string, during?: () => Promise<void>): Promise<LoadResult> {
  const run = autocannon({
    url: `http://127.0.0.1:${LB_PORT}/credits/balance`,
    headers: { 'x-api-key': apiKey },
    connections: Number(args.connections),
    duration: SECONDS,
  });
  await during?.();
  const r = await run;
  const statuses = Object.entries((r as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {})
    .map(([status, { count }]) => `${status}: ${count}`)
    .join(', ');
  return { requests: r.requests.total, non200: r.non2xx, errors: r.errors + r.timeouts, rps: Math.round(r.requests.average), statuses };
}

const compiled = compiledBuild(args.tsx);
const databaseUrl = await freshDatabase(DB);
const apis: ChildProcess[] = [];
let balancer: ReturnType<typeof startBalancer> | undefined;
try {
  const setup = await openDatabase(databaseUrl, { max: 1 });
  const ws = await createWorkspace(setup.orm.em, { name: 'bench', plan: 'enterprise', credits: 10 });
  await setup.close();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
    API_REPLICA_HEARTBEAT_MS: '1000',
    LOG_LEVEL: 'warn',
  };
  const start = (i: number) => startService('api', { ...env, PORT: String(API_PORTS[i]) }, { compiled });
  for (let i = 0; i < 2; i++) apis.push(await start(i));
  balancer = startBalancer(API_PORTS.slice(0, 2));
  await delay(4 * PROBE_MS);

  say(`anchor: ${SECONDS} s of GET /credits/balance through the balancer, no restart`);
  const anchor = await load(ws.apiKey);
  say(`rolling: the same load while each API is restarted in turn (SIGTERM, ${SHUTDOWN_DELAY_MS} ms readiness-first delay, drain)`);
  const restarts: string[] = [];
  const loadStarted = Date.now();
  const rolling = await load(ws.apiKey, async () => {
    await delay(2000);
    for (let i = 0; i < 2; i++) {
      const t0 = Date.now();
      await stopService(apis[i]);
      apis[i] = await start(i);
      restarts.push(`api ${i}: SIGTERM at ${((t0 - loadStarted) / 1000).toFixed(1)} s of the load, its successor ready ${((Date.now() - t0) / 1000).toFixed(1)} s later`);
      await delay(4 * PROBE_MS);
    }
  });
  for (const r of restarts) say(r);
  // Both replacements must have happened under load, or the figure says nothing.
  if (Date.now() - loadStarted > SECONDS * 1000 + 2000) say(`warning: the restarts outlasted the load (${SECONDS} s): run with a larger --seconds`);
  console.table({ anchor, rolling });
  say(`lost requests during the rolling restart: ${rolling.non200 + rolling.errors} of ${rolling.requests} (anchor: ${anchor.non200 + anchor.errors} of ${anchor.requests})`);
  if (rolling.non200 + rolling.errors > 0) process.exitCode = 1;
} finally {
  balancer?.close();
  for (const a of apis) await stopService(a);
  await dropDatabase(DB);
}
