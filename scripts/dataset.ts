/**
 * Dataset tools for the discovery search (DESIGN §6).
 *
 *   npm run dataset -- generate --people 100000 --companies 10000 --seed 42 --out .data/dataset
 *       writes companies.jsonl, people.jsonl and posts.jsonl (deterministic for a seed)
 *   npm run dataset -- import --companies FILE --people FILE [--posts FILE] [--format jsonl|csv]
 *       upserts JSONL or CSV records into the ds_* tables of DATABASE_URL (migrating it first);
 *       bad records are reported with their line number, the rest still load; records of people
 *       on the dataset opt-out list (`npm run admin -- dataset:opt-out`) are skipped and counted.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { loadConfig } from '../domain/config.js';
import { generateDataset } from '../domain/datasetGenerator.js';
import { importDataset, type ImportReport } from '../db/datasetImport.js';
import { reindexDiscovery } from '../db/discoveryOpenSearch.js';
import { datasetOptOutKey } from '../db/datasetOptOuts.js';
import { openDatabase, migrate, ormOptions } from '../db/orm.js';

const USAGE = `usage:
  npm run dataset -- generate --people N --companies M [--seed S] [--out DIR]
  npm run dataset -- import [--companies FILE] [--people FILE] [--posts FILE] [--format jsonl|csv]
  npm run dataset -- reindex   (DISCOVERY_ENGINE=opensearch: rebuild the OpenSearch indexes from the ds_* tables, alias swap)`;

function positiveInt(name: string, v: string | undefined, fallback?: number): number {
  if (v === undefined && fallback !== undefined) return fallback;
  const n = Number(v);
  if (v === undefined || !Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number >= 0`);
  return n;
}

/** Writes lines with backpressure, in chunks. */
class LineWriter {
  private buf: string[] = [];
  private size = 0;
  constructor(private readonly out: WriteStream) {}
  async write(line: string): Promise<void> {
    this.buf.push(line);
    this.size += line.length;
    if (this.size > 1 << 20) await this.flush();
  }
  async flush(): Promise<void> {
    if (!this.buf.length) return;
    const ok = this.out.write(this.buf.join(''));
    this.buf = [];
    this.size = 0;
    if (!ok) await once(this.out, 'drain');
  }
  async close(): Promise<void> {
    await this.flush();
    this.out.end();
    await once(this.out, 'finish');
  }
}

export async function generateFiles(opts: { people: number; companies: number; seed: number; out: string; progress?: boolean }) {
  mkdirSync(opts.out, { recursive: true });
  const files = { companies: join(opts.out, 'companies.jsonl'), people: join(opts.out, 'people.jsonl'), posts: join(opts.out, 'posts.jsonl') };
  const w = {
    companies: new LineWriter(createWriteStream(files.companies)),
    people: new LineWriter(createWriteStream(files.people)),
    posts: new LineWriter(createWriteStream(files.posts)),
  };
  const bar = opts.progress === false ? null : new cliProgress.SingleBar({ format: 'generate [{bar}] {percentage}% {value}/{total} records | ETA {eta}s' }, cliProgress.Presets.shades_classic);
  bar?.start(opts.people + opts.companies, 0);
  let n = 0;
  let posts = 0;
  for (const item of generateDataset(opts)) {
    if (item.kind === 'company') await w.companies.write(`${JSON.stringify(item.record)}\n`);
    else {
      await w.people.write(`${JSON.stringify(item.record)}\n`);
      for (const p of item.posts) {
        posts++;
        await w.posts.write(`${JSON.stringify(p)}\n`);
      }
    }
    if (++n % 5000 === 0) bar?.update(n);
  }
  bar?.update(n);
  bar?.stop();
  await Promise.all([w.companies.close(), w.people.close(), w.posts.close()]);
  return { files, counts: { companies: opts.companies, people: opts.people, posts } };
}

export function printReport(report: ImportReport): void {
  for (const r of report.results) {
    console.log(`${r.kind}: ${r.loaded} loaded, ${r.rejected} rejected, ${r.optedOut} opted out (skipped) in ${r.seconds.toFixed(1)} s (${Math.round(r.loaded / Math.max(r.seconds, 0.001))} rows/s) from ${r.file}`);
  }
  for (const e of report.errors) console.log(`  ${e.file}:${e.line}: ${e.message}`);
  if (report.errorCount > report.errors.length) console.log(`  … and ${report.errorCount - report.errors.length} more rejected records`);
  console.log(`total: ${report.rowsLoaded} rows in ${report.seconds.toFixed(1)} s (${Math.round(report.rowsLoaded / Math.max(report.seconds, 0.001))} rows/s)`);
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      people: { type: 'string' },
      companies: { type: 'string' },
      posts: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
      format: { type: 'string' },
    },
  });
  if (command === 'generate') {
    const started = Date.now();
    const out = resolve(values.out ?? '.data/dataset');
    const r = await generateFiles({
      people: positiveInt('people', values.people),
      companies: positiveInt('companies', values.companies),
      seed: positiveInt('seed', values.seed, 1),
      out,
    });
    console.log(`wrote ${r.counts.companies} companies, ${r.counts.people} people, ${r.counts.posts} posts to ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(`import with: npm run dataset -- import --companies ${r.files.companies} --people ${r.files.people} --posts ${r.files.posts}`);
    return;
  }
  if (command === 'reindex') {
    const config = loadConfig();
    if (config.discovery.engine !== 'opensearch') throw new Error('reindex rebuilds the OpenSearch indexes: set DISCOVERY_ENGINE=opensearch (and OPENSEARCH_URL for an external cluster)');
    const db = await openDatabase(config.databaseUrl, { max: 2 }, { logger: () => {}, migrations: { ...ormOptions(config.databaseUrl).migrations, snapshotOnMigrate: false } });
    try {
      const re = await reindexDiscovery(db.pool, config.discovery);
      for (const [name, r] of Object.entries(re.index)) console.log(`OpenSearch ${name}: ${r.documents} documents into ${r.name} in ${(r.ms / 1000).toFixed(1)} s (${Math.round(r.documents / Math.max(r.ms / 1000, 0.001))}/s)`);
    } finally {
      await db.close();
    }
    return;
  }
  if (command === 'import') {
    if (!values.people && !values.companies && !values.posts) throw new Error('name at least one of --companies, --people, --posts');
    if (values.format && values.format !== 'jsonl' && values.format !== 'csv') throw new Error('--format must be jsonl or csv');
    const config = loadConfig();
    const db = await openDatabase(config.databaseUrl, { max: 2 }, { logger: () => {}, migrations: { ...ormOptions(config.databaseUrl).migrations, snapshotOnMigrate: false } });
    await migrate(db.orm);
    const pool = db.pool;
    const bars = new cliProgress.MultiBar(
      { format: '[{bar}] {percentage}% | {rows} rows | ETA {eta}s', hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    const byKind = new Map<string, cliProgress.SingleBar>();
    try {
      const report = await importDataset(
        pool,
        { companies: values.companies, people: values.people, posts: values.posts },
        {
          format: values.format as 'jsonl' | 'csv' | undefined,
          optOutKey: datasetOptOutKey(config.serverSecret),
          onProgress: (p) => {
            let bar = byKind.get(p.kind);
            if (!bar) byKind.set(p.kind, (bar = bars.create(p.totalBytes, 0, { rows: 0 }, { format: `${p.kind.padEnd(9)} [{bar}] {percentage}% | {rows} rows | ETA {eta}s` })));
            bar.update(p.bytesRead, { rows: p.rows });
          },
        },
      );
      bars.stop();
      printReport(report);
      if (config.discovery.engine === 'opensearch') {
        // A new index per import, swapped in whole under the alias (searches never see a half-built one).
        const re = await reindexDiscovery(pool, config.discovery);
        for (const [name, r] of Object.entries(re.index)) console.log(`OpenSearch ${name}: ${r.documents} documents into ${r.name} in ${(r.ms / 1000).toFixed(1)} s (${Math.round(r.documents / Math.max(r.ms / 1000, 0.001))}/s)`);
      }
      if (report.errorCount) process.exitCode = 2;
    } finally {
      bars.stop();
      await db.close();
    }
    return;
  }
  console.error(USAGE);
  process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('scripts/dataset.ts')) {
  main().catch((e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
