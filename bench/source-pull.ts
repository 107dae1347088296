/**
 * Source-pull benchmark on the local stack: `POST /sources/pull-contacts-from-source/{id}` →
 * job completed → contacts queryable, for an audience of N people, once through the `dataset`
 * provider (N interactions with one profile's posts in `ds_posts` / `ds_people`) and once through
 * the `http` provider (the fake listening server of test/fakes). Prints people/s end to end,
 * pages and the contacts written.
 *
 *   npx tsx bench/source-pull.ts [--people 20000]
 *
 * Uses a database of its own (`bench_source_pull`, dropped at the end) and its own task queues.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { bundleWorkflowCode } from '@temporalio/worker';
import { loadConfig } from '../domain/config.js';
import { openStores } from '../db/connect.js';
import { createWorkspace } from '../db/workspaces.js';
import { startApiServer } from '../api/server.js';
import { WORKFLOWS_PATH, createWorkers } from '../worker/worker.js';
import type { ListeningPerson } from '../activities/providers/listening.js';
import { startFakeListeningProvider } from '../test/fakes/listeningProvider.js';
import { dropDatabase, freshDatabase, say } from './lib.js';

const { values: args } = parseArgs({ options: { people: { type: 'string', default: '20000' } } });
const N = Number(args.people);
const DB = 'bench_source_pull';
const log = pino({ level: 'silent' });

const dbUrl = new URL(await freshDatabase(DB));

const fake = await startFakeListeningProvider();
say('bundling workflows');
const bundleDir = mkdtempSync(join(tmpdir(), 'bench-source-pull-'));
const bundlePath = join(bundleDir, 'workflows.js');
writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: undefined })).code);

const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000).toISOString();
const OWNER = 'pronet.com/in/bench-owner';

say(`seeding ${N} people and interactions in the dataset`);
const seed = new pg.Client({ connectionString: dbUrl.toString() });
await seed.connect();
await seed.query(
  `insert into ds_people (id, member_pronet_url, member_full_name, member_first_name, member_last_name, member_job_title, member_location_city, member_location_country)
   select gen_random_uuid(), 'pronet.com/in/bench-' || i, 'Bench ' || i, 'Bench', 'Person ' || i, 'Engineer', 'Berlin', 'Germany'
     from generate_series(1, $1) i`,
  [N],
);
await seed.query(
  `insert into ds_posts (id, member_pronet_url, post_url, text, posted_at, likes, comments, interaction_type, author_pronet_url)
   select gen_random_uuid(), 'pronet.com/in/bench-' || i, 'pronet.com/posts/bench-owner-1/reactions/' || i, 'Liked a post',
          now() - (i % 20) * interval '1 hour', 0, 0, 'like', $2
     from generate_series(1, $1) i`,
  [N, OWNER],
);
await seed.end();

const httpIdentifier = 'https://www.pronet.com/in/bench-http-owner';
fake.setAudience(
  httpIdentifier,
  Array.from({ length: N }, (_, i): ListeningPerson => ({
    pronet: `https://www.pronet.com/in/bench-http-${i}`,
    firstName: 'Http',
    lastName: `Person ${i}`,
    jobTitle: 'Engineer',
    company: { companyName: `Company ${i % 500}`, companyWebsite: `https://company-${i % 500}.example` },
    interaction: { type: 'comment', postUrl: 'https://www.pronet.com/posts/x', occurredAt: hoursAgo(1 + (i % 20)) },
  })),
);

async function run(provider: 'dataset' | 'http', sourceIdentifier: string) {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: dbUrl.toString(),
    TEMPORAL_TASK_QUEUE: `bench-source-pull-${provider}-${Date.now()}`,
    RATE_LIMIT_PER_MINUTE: '1000000',
    LISTENING_PROVIDER: provider,
    LISTENING_BASE_URL: fake.baseUrl,
    LISTENING_API_KEY: fake.apiKey,
    // The fake listening server is on loopback; production refuses private addresses.
    OUTBOUND_ALLOW_LIST: '127.0.0.1',
  });
  const api = await startApiServer(config, { log, port: 0 });
  const stores = await openStores(config, { poolMax: 10 });
  const workers = await createWorkers({ config, log, ...stores }, { workflowBundlePath: bundlePath });
  void workers.run();
  const ws = await createWorkspace(api.deps.orm.em, { name: `bench-${provider}`, plan: 'pro' });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(api.url + path, {
      method,
      headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const src = await call('POST', '/sources', { sourceType: 'pronetInbound', sourceIdentifier });
  const t0 = performance.now();
  const accepted = await call('POST', `/sources/pull-contacts-from-source/${src.body.data.id}`, {});
  if (accepted.status !== 202) throw new Error(`pull answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
  let job: any;
  for (;;) {
    job = (await call('GET', `/jobs/${accepted.body.jobId}`)).body.data;
    if (job.jobStatus !== 'queued' && job.jobStatus !== 'running') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - t0) / 1000;
  const count = await api.deps.pool.query<{ n: number }>(`select count(*)::int as n from contacts where workspace_id = $1`, [ws.workspaceId]);
  await workers.shutdown();
  await api.close();
  await stores.close();
  if (job.jobStatus !== 'completed') throw new Error(`${provider} pull ${job.jobStatus}: ${JSON.stringify(job.error)}`);
  const p = job.jobResponsePayload;
  return { provider, seconds, fetched: p.fetched, created: p.created, pages: p.pages, contacts: count.rows[0]!.n };
}

const results = [];
for (const [provider, id] of [['dataset', `https://${OWNER}`], ['http', httpIdentifier]] as const) {
  say(`pulling ${N} people through the ${provider} provider`);
  results.push(await run(provider, id));
}

console.log('');
for (const r of results) {
  console.log(
    `${r.provider.padEnd(8)} people ${String(r.fetched).padStart(7)}  pages ${String(r.pages).padStart(4)}  contacts ${String(r.contacts).padStart(7)}  ` +
      `${r.seconds.toFixed(2)} s  ${Math.round(r.fetched / r.seconds)} people/s (202 → completed → queryable)`,
  );
}
console.log('');

await fake.close();
await dropDatabase(DB);
