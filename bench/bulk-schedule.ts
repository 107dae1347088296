/**
 * Bulk-schedule benchmark on the local stack: 10,000 drafts scheduled in one
 * `POST /v1/posts/bulk-schedule`, published through a fake X server. Prints the response time
 * of the request and, for a sample due within a minute, the publish lateness (time the fake
 * network received the tweet − `scheduledTime`) p50/p95/p99/max. The rest is due tomorrow, so
 * its workflows are started (earliest first) while the sample publishes. Targets: response
 * ≤ 10 s, lateness p99 ≤ 2 s.
 *
 *   npx tsx bench/bulk-schedule.ts [--rows 10000] [--sample 100] [--due-in 40]
 *
 * Uses a database of its own (`bench_publishing`, dropped at the end) and its own task queue;
 * at the end the worker stops and every workflow of the benchmark's workspace is terminated.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { v7 as uuidv7 } from 'uuid';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ROOT_DIR, loadConfig } from '../domain/config.js';
import { openStores } from '../db/connect.js';
import { createWorkspace } from '../db/workspaces.js';
import { startApiServer } from '../api/server.js';
import { WORKFLOWS_PATH, createWorkers } from '../worker/worker.js';
import { FakeX } from '../test/fakes/x.js';
import { dropDatabase, freshDatabase, percentile, say } from './lib.js';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    sample: { type: 'string', default: '100' },
    'due-in': { type: 'string', default: '40' },
  },
});
const ROWS = Number(args.rows);
const SAMPLE = Math.min(Number(args.sample), ROWS);
const DUE_IN_S = Number(args['due-in']);
const DB = 'bench_publishing';
const log = pino({ level: 'silent' });

const dbUrl = new URL(await freshDatabase(DB));

const taskQueue = `bench-publishing-${Date.now()}`;
const config = loadConfig({
  ...process.env,
  DATABASE_URL: dbUrl.toString(),
  TEMPORAL_TASK_QUEUE: taskQueue,
  RATE_LIMIT_PER_MINUTE: '1000000',
  // The fake X server listens on loopback.
  OUTBOUND_ALLOW_LIST: '127.0.0.1',
  PROVIDER_BASE_URL_ALLOW_LIST: '127.0.0.1',
  BODY_LIMIT_BYTES: String(50 * 1024 * 1024),
});

const x = new FakeX();
await x.listen();
x.addUser('4242', 'bench-token');

say('bundling workflows');
const bundleDir = mkdtempSync(join(tmpdir(), 'bench-publishing-'));
const bundlePath = join(bundleDir, 'workflows.js');
writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: undefined })).code);
const api = await startApiServer(config, { log, port: 0 });
const stores = await openStores(config, { poolMax: 20 });
const workers = await createWorkers({ config, log, ...stores }, { workflowBundlePath: bundlePath });
void workers.run();

const ws = await createWorkspace(api.deps.orm.em, { name: 'bench', plan: 'enterprise' });
const http = async (path: string, body: unknown) => {
  const res = await fetch(api.url + path, { method: 'POST', headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
const integ = await http('/integrations', { provider: 'microblog', name: 'bench', externalAccountId: '4242', credentials: { accessToken: 'bench-token' }, apiBaseUrl: x.url });
if (integ.status !== 200) throw new Error(`connecting the integration answered ${integ.status}: ${JSON.stringify(integ.body)}`);
const providerId: string = integ.body.data.id;

say(`creating ${ROWS} drafts`);
const postIds = Array.from({ length: ROWS }, () => uuidv7());
await api.deps.pool.query(
  `insert into posts (id, workspace_id, provider_id, status, content, media, articles, thread_items, automation, external_post, thread_external_ids, created_at, updated_at)
   select u.id, $1, $2, 'draft', 'bench post ' || u.i, '[]', '[]', '[]', '{}', false, '[]', now(), now()
     from unnest($3::uuid[]) with ordinality as u(id, i)`,
  [ws.workspaceId, providerId, postIds],
);

const due = new Date(Date.now() + DUE_IN_S * 1000);
const later = new Date(Date.now() + 86_400_000);
// The sample is spread over one second so the publishes are not one burst.
const timeOf = (i: number) => (i < SAMPLE ? new Date(due.getTime() + Math.floor((i * 1000) / SAMPLE)) : later).toISOString();
const body = { posts: postIds.map((postId, i) => ({ postId, schedules: [{ providerId, scheduledTime: timeOf(i) }] })) };

say(`POST /v1/posts/bulk-schedule with ${ROWS} rows (${SAMPLE} due in ~${DUE_IN_S} s)`);
const t0 = performance.now();
const res = await http('/v1/posts/bulk-schedule', body);
const responseMs = performance.now() - t0;
if (res.status !== 200) throw new Error(`bulk-schedule answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
say(`response ${res.status} in ${responseMs.toFixed(0)} ms: ${res.body.message}`);

const sampleTexts = new Map(postIds.slice(0, SAMPLE).map((_, i) => [`bench post ${i + 1}`, i]));
const deadline = due.getTime() + 60_000;
while (Date.now() < deadline && x.tweets.filter((t) => sampleTexts.has(t.text)).length < SAMPLE) await new Promise((r) => setTimeout(r, 250));
const started = await api.deps.pool.query<{ n: number }>(`select count(*)::int as n from post_schedules where workspace_id = $1`, [ws.workspaceId]);

const lateness = x.tweets
  .filter((t) => sampleTexts.has(t.text))
  .map((t) => Date.parse(t.createdAt) - Date.parse(timeOf(sampleTexts.get(t.text)!)))
  .sort((a, b) => a - b);
const dupes = x.tweets.length - new Set(x.tweets.map((t) => t.text)).size;
console.log('');
console.log(`bulk-schedule rows           ${ROWS}`);
console.log(`bulk-schedule response       ${(responseMs / 1000).toFixed(2)} s   (target ≤ 10 s)`);
console.log(`schedule rows written        ${started.rows[0]!.n}`);
console.log(`sample published             ${lateness.length} / ${SAMPLE}   duplicates ${dupes}`);
if (lateness.length) {
  console.log(`publish lateness p50         ${percentile(lateness, 50)} ms`);
  console.log(`publish lateness p95         ${percentile(lateness, 95)} ms`);
  console.log(`publish lateness p99         ${percentile(lateness, 99)} ms   (target ≤ 2000 ms)`);
  console.log(`publish lateness max         ${lateness.at(-1)} ms`);
}
console.log('');

say('stopping the worker and terminating the benchmark workflows');
await workers.shutdown();
try {
  execFileSync(join(ROOT_DIR, '.tools', 'bin', 'temporal'), [
    'workflow', 'terminate', '--address', config.temporal.address, '--namespace', config.temporal.namespace,
    '--query', `WorkspaceId = "${ws.workspaceId}" AND ExecutionStatus = "Running"`, '--reason', 'benchmark finished', '--yes',
  ], { stdio: 'ignore' });
} catch (e) {
  say(`batch terminate failed: ${(e as Error).message}`);
}
await api.close();
await stores.close();
await x.close();
await dropDatabase(DB);
process.exit(0);
