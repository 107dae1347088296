/**
 * What `npm start` does to the database before API and worker start: migrations, the demo
 * dataset (when `DEMO_DATASET` allows it and the `ds_*` tables are empty) and the demo workspace
 * (its key, shown once at creation, is kept in the git-ignored data folder). The README
 * walkthrough's smoke test (test/integration/readmeWalkthrough.test.ts) prepares its database
 * with this same code.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../domain/config.js';
import { ensureDemoDataset, type DemoDatasetOutcome } from '../db/demoDataset.js';
import { ensureDiscoveryIndex } from '../db/discoveryOpenSearch.js';
import { datasetOptOutKey } from '../db/datasetOptOuts.js';
import { openDatabase, migrate } from '../db/orm.js';
import { createWorkspace, workspaceExists } from '../db/workspaces.js';

export interface DemoWorkspace {
  workspaceId: string;
  apiKey: string;
}

export interface FirstStart {
  demo: DemoWorkspace;
  /** `off`: DEMO_DATASET switched it off. */
  dataset: DemoDatasetOutcome | 'off';
}

export const DEMO_WORKSPACE = { name: 'Demo workspace', plan: 'enterprise', credits: 10_000 } as const;

/** `demoFile`: where the demo workspace's id and key are kept between starts. */
export async function prepareDatabase(config: Config, demoFile: string): Promise<FirstStart> {
  // The dataset import uses two connections beside the one holding its lock.
  const db = await openDatabase(config.databaseUrl, { max: 4 });
  const pool = db.pool;
  try {
    await migrate(db.orm);
    const dataset = config.demoDataset ? await ensureDemoDataset(pool, undefined, datasetOptOutKey(config.serverSecret)) : 'off';
    if (config.discovery.engine === 'opensearch') await ensureDiscoveryIndex(pool, config.discovery, { datasetChanged: dataset !== 'off' && dataset.loaded });
    let demo: DemoWorkspace | undefined;
    if (existsSync(demoFile)) {
      const saved = JSON.parse(readFileSync(demoFile, 'utf8')) as DemoWorkspace;
      if (await workspaceExists(db.orm.em, saved.workspaceId)) demo = saved;
    }
    if (!demo) {
      const created = await createWorkspace(db.orm.em, DEMO_WORKSPACE);
      demo = { workspaceId: created.workspaceId, apiKey: created.apiKey };
      mkdirSync(dirname(demoFile), { recursive: true });
      writeFileSync(demoFile, JSON.stringify(demo, null, 2));
    }
    return { demo, dataset };
  } finally {
    await db.close();
  }
}

/** One line for the start banner about the dataset, or nothing when there is nothing to say. */
export function describeDataset(outcome: DemoDatasetOutcome | 'off'): string | undefined {
  if (outcome === 'off' || !outcome.loaded) return undefined;
  const n = (kind: string) => (outcome.report.results.find((r) => r.kind === kind)?.loaded ?? 0).toLocaleString('en-US');
  return `Demo dataset loaded: ${n('companies')} companies, ${n('people')} people, ${n('posts')} posts in ${outcome.report.seconds.toFixed(1)} s (npm run dataset imports more; DEMO_DATASET=off skips it)`;
}
