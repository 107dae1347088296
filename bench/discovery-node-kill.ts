/**
 * Node-kill run of the OpenSearch discovery engine (issue 33, docs/DISCOVERY.md "Losing a node"):
 * an OpenSearch cluster on loopback of `--nodes` nodes (default 3, every one cluster-manager-eligible;
 * scripts/stack.ts `startOpenSearch` with a cluster), the dataset indexed with 2 shards and 1
 * replica (green before the run), the API pointed at every node (OPENSEARCH_URL listing them). It records the answers of a query mix (the 20 searches of
 * bench/discoveryQueries.ts, first and second page), then drives a steady load through the API
 * (`--clients` concurrent clients, each request the next of the mix) while it `kill -9`s one node,
 * later starts it again and waits for green. Every answer must be 200 with the recorded ids and
 * total; it prints the counts, latencies per phase (before / node down / rejoining / green again)
 * and the cluster health transitions seen from the surviving node. Exits 1 when a request failed
 * or answered differently.
 *
 *   npx tsx bench/discovery-node-kill.ts [--people 100000] [--companies 10000] [--clients 4]
 *     [--before 10] [--down 20] [--after 5] [--kill data|manager] [--nodes 3]
 *     [--database bench_node_kill] [--port 9490] [--tsx] [--keep]
 *
 * `--kill data` (default) kills a node that is not the elected cluster manager: the manager
 * promotes the replicas of the lost primaries and the cluster goes yellow. `--kill manager` kills
 * the elected cluster manager: with 3 manager-eligible nodes the other two hold a majority of the
 * voting configuration and elect a new manager; with `--nodes 2` the survivor alone is no majority
 * and stays without a manager until the node is back (then the cluster state is recovered again,
 * red for minutes: docs/DISCOVERY.md "Losing a node").
 * Nodes: HTTP `--port` … `--port`+nodes-1, transport +100, data under a temporary directory; the
 * database (`--database`, on the stack's PostgreSQL) is dropped after unless `--keep`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    people: { type: 'string', default: '100000' },
    companies: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '4' },
    before: { type: 'string', default: '10' },
    down: { type: 'string', default: '20' },
    after: { type: 'string', default: '5' },
    kill: { type: 'string', default: 'data' },
    nodes: { type: 'string', default: '3' },
    seed: { type: 'string', default: '42' },
    database: { type: 'string', default: 'bench_node_kill' },
    port: { type: 'string', default: '9490' },
    tsx: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
if (args.kill !== 'data' && args.kill !== 'manager') throw new Error('--kill must be data or manager');
const DB = args.database;
if (!/^[a-z_][a-z0-9_]*$/.test(DB)) throw new Error(`--database must be a plain lower-case identifier, got ${DB}`);
const NODES = Number(args.nodes);
if (!Number.isInteger(NODES) || NODES < 2) throw new Error('--nodes must be a whole number ≥ 2');
const PORTS = Array.from({ length: NODES }, (_, i) => Number(args.port) + i);
const CLIENTS = Number(args.clients);
// the index settings are read when db/opensearchIndex.ts loads: set before the project's modules are imported
process.env.OPENSEARCH_SHARDS = '2';
process.env.OPENSEARCH_REPLICAS = '1';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

async function main() {
  const { loadConfig, ROOT_DIR } = await import('../domain/config.js');
  const { startOpenSearch, stopOpenSearch, stackLayout } = await import('../scripts/stack.js');
  const { openDatabase, migrate, ormOptions } = await import('../db/orm.js');
  const { importDataset } = await import('../db/datasetImport.js');
  const { reindexDiscovery } = await import('../db/discoveryOpenSearch.js');
  const { createWorkspace } = await import('../db/workspaces.js');
  const { generateFiles } = await import('../scripts/dataset.js');
  const { QUERIES } = await import('./discoveryQueries.js');
  const { compiledBuild, freshDatabase, dropDatabase, startService, stopService, say } = await import('./lib.js');
  const compiled = compiledBuild(args.tsx);

  // ---- the cluster
  const home = mkdtempSync(join(tmpdir(), 'node-kill-'));
  spawnSync('chmod', ['755', home]); // the unprivileged opensearch user writes below it
  const names = PORTS.map((_, i) => `node-${i + 1}`);
  const nodeEnv = (i: number) => ({ ...process.env, OPENSEARCH_PORT: String(PORTS[i]), OPENSEARCH_DATA_DIR: join(home, names[i]!) });
  const cluster = (i: number) => ({ cluster: 'node-kill', name: names[i]!, nodes: PORTS.map((p, j) => ({ name: names[j]!, transportPort: p + 100 })) });
  const pidOf = (i: number) => Number(readFileSync(join(stackLayout(nodeEnv(i)).data, `opensearch-${PORTS[i]}.pid`), 'utf8'));
  const urls = PORTS.map((p) => `http://127.0.0.1:${p}`);
  let t = performance.now();
  await Promise.all(PORTS.map((_, i) => startOpenSearch(stackLayout(nodeEnv(i)), { cluster: cluster(i), readyTimeoutMs: 420_000 })));
  say(`${NODES}-node cluster up in ${((performance.now() - t) / 1000).toFixed(1)} s (${urls.join(', ')})`);

  const db = await (async () => {
    const url = await freshDatabase(DB);
    const config = loadConfig({ ...process.env, DATABASE_URL: url });
    const d = await openDatabase(config.databaseUrl, { max: 2 }, { logger: () => {}, migrations: { ...ormOptions(config.databaseUrl).migrations, snapshotOnMigrate: false } });
    await migrate(d.orm);
    return { ...d, config };
  })();
  let api: Awaited<ReturnType<typeof startService>> | undefined;
  let killed: number | undefined;
  let failed = true;
  try {
    // ---- the dataset, in PostgreSQL and then in the cluster (2 shards, 1 replica, green)
    const dir = join(ROOT_DIR, '.data', `dataset-${args.people}-${args.companies}-${args.seed}`);
    if (!existsSync(join(dir, 'people.jsonl'))) await generateFiles({ people: Number(args.people), companies: Number(args.companies), seed: Number(args.seed), out: dir });
    const imported = await importDataset(db.pool, { companies: join(dir, 'companies.jsonl'), people: join(dir, 'people.jsonl') });
    say(`imported ${imported.rowsLoaded} rows in ${imported.seconds.toFixed(1)} s`);
    const discovery = { ...db.config.discovery, engine: 'opensearch' as const, opensearchUrl: urls.join(','), indexPrefix: 'node-kill' };
    const re = await reindexDiscovery(db.pool, discovery);
    for (const [name, r] of Object.entries(re.index)) say(`indexed ${name}: ${r.documents} documents in ${(r.ms / 1000).toFixed(1)} s (replicated, green)`);
    const shards = await json<{ index: string; shard: string; prirep: string; node: string }[]>(`${urls[0]}/_cat/shards/node-kill-*?format=json&h=index,shard,prirep,node`);
    for (const s of shards) say(`  shard ${s.index} #${s.shard} ${s.prirep === 'p' ? 'primary' : 'replica'} on ${s.node}`);

    // ---- the API on both nodes
    const ws = await createWorkspace(db.orm.em, { name: 'node-kill', credits: 1_000_000_000 });
    const port = 20000 + Math.floor(Math.random() * 20000);
    api = await startService('api', { ...process.env, DATABASE_URL: db.config.databaseUrl, PORT: String(port), HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: 'warn', DISCOVERY_ENGINE: 'opensearch', OPENSEARCH_URL: urls.join(','), OPENSEARCH_INDEX_PREFIX: 'node-kill' }, { compiled, stdout: 'inherit' });
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    const post = (path: string, body: unknown) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const text = JSON.stringify(body);
        const req = request({ host: '127.0.0.1', port, method: 'POST', path, agent, timeout: 30_000, headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } }, (res) => {
          let out = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (out += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: out }));
        });
        req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
        req.on('error', reject);
        req.end(text);
      });
    type Answer = { data: { id: string }[]; meta: { totalRecords: number; nextToken: string } };
    const fingerprint = (a: Answer) => `${a.meta.totalRecords}:${a.data.map((d) => d.id).join(',')}`;

    // ---- the mix and its answers before any failure: each query's first page, and its second
    const mix: { name: string; path: string; body: unknown; expected: string }[] = [];
    for (const q of QUERIES) {
      const path = `/discovery-search/find-${q.entity}-v2`;
      const first = await post(path, { ...q.body, limit: 25 });
      if (first.status !== 200) throw new Error(`${q.name}: ${first.status} ${first.text}`);
      const a = JSON.parse(first.text) as Answer;
      mix.push({ name: q.name, path, body: { ...q.body, limit: 25 }, expected: fingerprint(a) });
      if (a.meta.nextToken) {
        const body = { ...q.body, limit: 25, paginationToken: a.meta.nextToken };
        const second = await post(path, body);
        if (second.status !== 200) throw new Error(`${q.name} page 2: ${second.status} ${second.text}`);
        mix.push({ name: `${q.name} (page 2)`, path, body, expected: fingerprint(JSON.parse(second.text) as Answer) });
      }
    }
    say(`recorded ${mix.length} answers (${QUERIES.length} queries, first and second pages)`);

    // ---- which node goes
    const state = await json<{ master_node: string; nodes: Record<string, { name: string }> }>(`${urls[0]}/_cluster/state/master_node,nodes`);
    const managerName = state.nodes[state.master_node]!.name;
    const victim = args.kill === 'manager' ? names.indexOf(managerName) : names.findIndex((n) => n !== managerName);
    const survivor = names.findIndex((_, i) => i !== victim);
    say(`cluster manager ${managerName}; killing ${names[victim]} (pid ${pidOf(victim)}, --kill ${args.kill}), survivor ${names[survivor]}`);

    // ---- health, as a survivor sees it, every 200 ms
    const epoch = performance.now();
    const clock = () => ((performance.now() - epoch) / 1000).toFixed(1).padStart(6);
    const transitions: string[] = [];
    let lastHealth = '';
    let polling = true;
    const poller = (async () => {
      while (polling) {
        let h: string;
        try {
          const x = await json<{ status: string; number_of_nodes: number; active_shards: number; relocating_shards: number; initializing_shards: number; unassigned_shards: number }>(`${urls[survivor]}/_cluster/health?timeout=1s`);
          h = `${x.status}, ${x.number_of_nodes} nodes, shards ${x.active_shards} active / ${x.initializing_shards} initializing / ${x.unassigned_shards} unassigned`;
        } catch (e) {
          h = `no health (${(e as Error).message.replace(/\s+/g, ' ').slice(0, 120)})`;
        }
        if (h !== lastHealth) transitions.push(`${clock()} s  ${h}`);
        lastHealth = h;
        await sleep(200);
      }
    })();

    // ---- the load
    type Phase = 'before' | 'node down' | 'rejoining' | 'green again';
    let phase: Phase = 'before';
    const results: { phase: Phase; ms: number; ok: boolean; kind: string }[] = [];
    const failures: string[] = [];
    let next = 0;
    let running = true;
    const client = async () => {
      while (running) {
        const m = mix[next++ % mix.length]!;
        const p = phase;
        const t0 = performance.now();
        let ok = false;
        let why = '';
        let kind = '200, same ids and total';
        try {
          const r = await post(m.path, m.body);
          if (r.status !== 200) {
            why = `${r.status} ${r.text.slice(0, 200)}`;
            kind = `${r.status} ${(/"code":"([a-z_]+)"/.exec(r.text) ?? [])[1] ?? ''}`.trim();
          } else if (fingerprint(JSON.parse(r.text) as Answer) !== m.expected) why = kind = '200 with other ids or another total';
          else ok = true;
        } catch (e) {
          why = (e as Error).message;
          kind = 'no answer';
        }
        results.push({ phase: p, ms: performance.now() - t0, ok, kind });
        if (!ok && failures.length < 20) failures.push(`${clock()} s [${p}] ${m.name}: ${why}`);
      }
    };
    const table = () => {
      console.log(`\n${'phase'.padEnd(12)} ${'requests'.padStart(8)} ${'same 200'.padStart(8)} ${'failed'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'max ms'.padStart(7)}`);
      for (const ph of ['before', 'node down', 'rejoining', 'green again'] as Phase[]) {
        const r = results.filter((x) => x.phase === ph);
        if (!r.length) continue;
        const ms = r.map((x) => x.ms);
        const good = r.filter((x) => x.ok).length;
        console.log(`${ph.padEnd(12)} ${String(r.length).padStart(8)} ${String(good).padStart(8)} ${String(r.length - good).padStart(7)} ${pct(ms, 50).toFixed(1).padStart(7)} ${pct(ms, 95).toFixed(1).padStart(7)} ${Math.max(...ms).toFixed(1).padStart(7)}`);
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);
    await sleep(Number(args.before) * 1000);
    phase = 'node down';
    killed = pidOf(victim);
    process.kill(killed, 'SIGKILL');
    transitions.push(`${clock()} s  kill -9 ${names[victim]}`);
    await sleep(Number(args.down) * 1000);
    phase = 'rejoining';
    transitions.push(`${clock()} s  starting ${names[victim]} again`);
    table(); // the figures so far, should the node not come back
    t = performance.now();
    try {
      await startOpenSearch(stackLayout(nodeEnv(victim)), { cluster: cluster(victim), readyTimeoutMs: 420_000 });
      killed = undefined;
      transitions.push(`${clock()} s  ${names[victim]} answers HTTP (${((performance.now() - t) / 1000).toFixed(1)} s after its start)`);
      // polled (json() gives a request 2 s): green once the node's copies are recovered
      const greenBy = Date.now() + 300_000;
      while (Date.now() < greenBy && !(await json<{ status: string }>(`${urls[survivor]}/_cluster/health`).then((h) => h.status === 'green', () => false))) await sleep(500);
      phase = 'green again';
      await sleep(Number(args.after) * 1000);
    } catch (e) {
      transitions.push(`${clock()} s  ${names[victim]} did not come back: ${(e as Error).message.split('\n')[0]}`);
    }
    running = false;
    await Promise.all(clients);
    polling = false;
    await poller;
    agent.destroy();

    // ---- the report
    console.log(`\nnode-kill run: ${args.people} people, ${args.companies} companies; ${NODES} nodes (all manager-eligible), 2 shards, 1 replica; ${CLIENTS} clients; killed ${names[victim]} (${args.kill === 'manager' ? 'the cluster manager' : 'not the cluster manager'})`);
    table();
    console.log(`\ncluster health seen from ${names[survivor]}:`);
    for (const x of transitions.sort((a, b) => Number(a.slice(0, 6)) - Number(b.slice(0, 6)))) console.log(`  ${x}`);
    const kinds = new Map<string, number>();
    for (const r of results) kinds.set(r.kind, (kinds.get(r.kind) ?? 0) + 1);
    console.log(`\nanswers: ${[...kinds].map(([k, n]) => `${n} ${k}`).join('; ')}`);
    const bad = results.filter((x) => !x.ok).length;
    console.log(`\n${bad === 0 ? 'PASS' : 'FAIL'}: ${results.length - bad}/${results.length} requests answered 200 with the recorded ids and total; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores`);
    for (const f of failures) console.log(`  ${f}`);
    failed = bad > 0;
  } finally {
    await stopService(api);
    if (killed !== undefined) spawnSync('kill', ['-9', String(killed)]);
    for (let i = 0; i < PORTS.length; i++) await stopOpenSearch(nodeEnv(i));
    await db.close();
    if (!args.keep) {
      await dropDatabase(DB);
      rmSync(home, { recursive: true, force: true });
    }
  }
  process.exitCode = failed ? 1 : 0;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
