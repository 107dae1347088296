/**
 * filter-posts latency on a large workspace: seeds N posts (default 200,000) into a scratch
 * database, then times typical list queries through HTTP (median and p95 of 30 runs each).
 *
 *   npx tsx bench/posts-filter.ts [N]
 */
import { rmSync } from 'node:fs';
import pg from 'pg';
import { pino } from 'pino';
import { v7 as uuidv7 } from 'uuid';
import { loadConfig } from '../domain/config.js';
import { openOrm, migrate } from '../db/orm.js';
import { startApiServer } from '../api/server.js';
import { createWorkspace } from '../db/workspaces.js';

const N = Number(process.argv[2] ?? 200_000);
const RUNS = 30;
const base = loadConfig();
const dbName = `bench_posts_${process.pid}`;
const dbUrl = (name: string) => Object.assign(new URL(base.databaseUrl), { pathname: `/${name}` }).toString();

const admin = new pg.Client({ connectionString: dbUrl('postgres') });
await admin.connect();
await admin.query(`create database ${dbName}`);
try {
  const orm = await openOrm(dbUrl(dbName));
  await migrate(orm);
  await orm.close(true);
  const config = loadConfig({ ...process.env, DATABASE_URL: dbUrl(dbName), PORT: '0', RATE_LIMIT_PER_MINUTE: '100000000' });
  const api = await startApiServer(config, { log: pino({ level: 'silent' }), port: 0 });
  try {
    const ws = await createWorkspace(api.deps.orm.em, { name: 'bench', plan: 'enterprise' });
    const other = await createWorkspace(api.deps.orm.em, { name: 'noise' });
    const accounts: string[] = [];
    for (const [i, provider] of ['microblog', 'pronet', 'pronetPage', 'microblog'].entries()) {
      const r = await fetch(`${api.url}/integrations`, {
        method: 'POST',
        headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ provider, name: `acct ${i}`, externalAccountId: `e${i}`, credentials: { accessToken: 't' } }),
      });
      accounts.push(((await r.json()) as any).data.id);
    }
    // Seeding runs on a connection of its own: the API pool's statement_timeout is for requests, not a 300k-row load.
    const seed = new pg.Client({ connectionString: dbUrl(dbName) });
    await seed.connect();
    await seed.query(`insert into integrations (id, workspace_id, provider, name, external_account_id, credentials_encrypted, status) values ($1, $2, 'pronet', 'n', 'n', 'x', 'connected')`, [uuidv7(), other.workspaceId]);
    const t0 = performance.now();
    // The bench workspace gets N posts; another workspace N/2, so every query must scope.
    for (const [wsId, count, accts] of [
      [ws.workspaceId, N, accounts],
      [other.workspaceId, Math.floor(N / 2), null],
    ] as const) {
      await seed.query(
        `insert into posts (id, workspace_id, provider_id, status, content, created_at, updated_at, scheduled_time)
         select gen_random_uuid(), $1,
                coalesce(($3::uuid[])[1 + (g % 4)], (select id from integrations where workspace_id = $1 limit 1)),
                (array['draft','scheduled','published','failed','cancelled'])[1 + (g % 5)],
                'post ' || g,
                now() - make_interval(secs => g),
                now() - make_interval(secs => g),
                case when g % 5 in (1, 2) then timestamptz '2031-01-01' + make_interval(mins => (g * 7919) % 525600) end
           from generate_series(1, $2::int) g`,
        [wsId, count, accts],
      );
    }
    // As autovacuum would after a bulk load: statistics and the visibility map (index-only counts).
    await seed.query('vacuum analyze posts');
    await seed.end();
    console.log(`seeded ${N} + ${Math.floor(N / 2)} posts in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const q = async (body: unknown) => {
      const started = performance.now();
      const r = await fetch(`${api.url}/v1/posts/filter-posts`, { method: 'POST', headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await r.json()) as any;
      if (r.status !== 200) throw new Error(JSON.stringify(json));
      return { ms: performance.now() - started, json };
    };
    const cases: [string, unknown][] = [
      ['newest 50 (default sort)', { limit: 50 }],
      ['status == scheduled, scheduledTime asc', { conditions: [{ field: 'status', operator: '==', value: 'scheduled' }], sort: [{ field: 'scheduledTime', direction: 'asc' }], limit: 50 }],
      ['scheduledTime BETWEEN one week', { conditions: [{ field: 'scheduledTime', operator: 'BETWEEN', value: ['2031-03-01T00:00:00Z', '2031-03-08T00:00:00Z'] }], sort: [{ field: 'scheduledTime', direction: 'asc' }], limit: 50 }],
      ['providerId IN 2 + status IN 2', { conditions: [{ field: 'providerId', operator: 'IN', value: accounts.slice(0, 2) }, { field: 'status', operator: 'IN', value: ['draft', 'failed'] }], limit: 50 }],
    ];
    console.log(`filter-posts over ${N} posts of one workspace, ${RUNS} runs each (ms):`);
    for (const [name, body] of cases) {
      const first = await q(body);
      const second = first.json.meta.nextToken ? { ...(body as object), paginationToken: first.json.meta.nextToken } : body;
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) times.push((await q(i % 2 ? second : body)).ms);
      times.sort((a, b) => a - b);
      const pct = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(1);
      console.log(`  ${name.padEnd(42)} p50 ${pct(0.5).padStart(6)}  p95 ${pct(0.95).padStart(6)}  (totalRecords ${first.json.meta.totalRecords})`);
    }
  } finally {
    await api.close();
  }
} finally {
  if (process.env.BENCH_KEEP_DB === '1') console.log(`kept database ${dbName}`);
  else await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  // The migrator leaves a schema snapshot named after the database in the working directory.
  rmSync(`.snapshot-${dbName}.json`, { force: true });
}
