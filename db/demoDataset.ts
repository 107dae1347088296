/**
 * The demo dataset a first `npm start` loads so that discovery search, enrichment (the `dataset`
 * provider) and source pulls answer with something on a fresh clone. It is the deterministic
 * generator's output (domain/datasetGenerator.ts) for a fixed seed and a size that imports in a
 * few seconds; `npm run dataset` generates and imports larger ones.
 *
 * The records are the same on every load, except that post dates count back from the time of the
 * load (source pulls look back from now).
 *
 * It loads only into an empty dataset (no company, person or post yet), so a dataset someone
 * imported is never mixed with demo records, and a second start does nothing. Concurrent starts
 * against one database serialise on an advisory lock and the second one then finds the tables
 * filled.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset, type GenerateOptions } from '../domain/datasetGenerator.js';
import { importDataset, type ImportReport } from './datasetImport.js';
import type { DatasetDB } from './dataset.js';
import type { Pool } from './pool.js';
import { runQuery, typedQueries } from './sqlFragments.js';

export const DEMO_DATASET = { people: 2_000, companies: 200, seed: 42 } as const;

/** Key of the advisory lock held while the demo dataset loads (any fixed 64-bit number). */
const DEMO_LOCK_KEY = 7_318_240_115;

export type DemoDatasetOutcome = { loaded: false; reason: 'dataset_not_empty' } | { loaded: true; report: ImportReport };

async function datasetEmpty(pool: Pool): Promise<boolean> {
  const [row] = await runQuery(
    pool,
    typedQueries<DatasetDB>().selectNoFrom((eb) =>
      eb.and((['ds_companies', 'ds_people', 'ds_posts'] as const).map((table) => eb.not(eb.exists(eb.selectFrom(table).select(eb.lit(1).as('one'))))))
        .$castTo<boolean>()
        .as('empty'),
    ),
  );
  return row!.empty;
}

/** Loads the demo dataset when the ds_* tables are empty; otherwise leaves them alone. Raw SQL: a session advisory lock held on one pg connection across the load. */
export async function ensureDemoDataset(pool: Pool, size: Omit<GenerateOptions, 'referenceTime'> = DEMO_DATASET, optOutKey?: Buffer): Promise<DemoDatasetOutcome> {
  const lock = await pool.connect();
  const dir = mkdtempSync(join(tmpdir(), 'demo-dataset-'));
  try {
    await lock.query('select pg_advisory_lock($1)', [DEMO_LOCK_KEY]);
    if (!(await datasetEmpty(pool))) return { loaded: false, reason: 'dataset_not_empty' };
    const lines = { companies: [] as string[], people: [] as string[], posts: [] as string[] };
    // Posts are dated in the 90 days before now: source pulls look back from the current time.
    for (const item of generateDataset({ ...size, referenceTime: Date.now() })) {
      if (item.kind === 'company') lines.companies.push(JSON.stringify(item.record));
      else {
        lines.people.push(JSON.stringify(item.record));
        for (const p of item.posts) lines.posts.push(JSON.stringify(p));
      }
    }
    const files = { companies: join(dir, 'companies.jsonl'), people: join(dir, 'people.jsonl'), posts: join(dir, 'posts.jsonl') };
    for (const kind of ['companies', 'people', 'posts'] as const) writeFileSync(files[kind], lines[kind].join('\n') + '\n');
    return { loaded: true, report: await importDataset(pool, files, { optOutKey }) };
  } finally {
    await lock.query('select pg_advisory_unlock($1)', [DEMO_LOCK_KEY]).catch(() => {});
    lock.release();
    rmSync(dir, { recursive: true, force: true });
  }
}
