/**
 * Bulk import of the discovery dataset (JSONL or CSV) into the global ds_* tables.
 *
 * Path of a record: file line → parse + validate (domain/datasetRecords.ts; a bad record is
 * reported with its line number and skipped) → COPY text line into a session temp table, in
 * batches → `INSERT … SELECT DISTINCT ON (key) … ON CONFLICT (key) DO UPDATE` (re-import
 * upserts; within one batch the last occurrence of a key wins). Parsing of the next batch
 * overlaps with the database work of the previous one. When a table is empty at the start, its
 * secondary indexes are dropped for the load and rebuilt once at the end (much faster than
 * maintaining trigram/GIN indexes row by row); a failed load still rebuilds them.
 *
 * Raw SQL throughout: this is a COPY pipeline and a bulk loader. Its statements are the COPY
 * stream, the session temp stage tables (no entity) and the upserts from them, session settings,
 * transaction control, and DDL replayed from the catalog's own text (`pg_get_indexdef`,
 * `pg_get_constraintdef`). Each function says which.
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { uuidv7Pooled } from '../domain/ids.js';
import {
  CsvRecordReader,
  RECORD_COLUMNS,
  RecordError,
  copyLine,
  parseRecord,
  stagingColumns,
  type DatasetKind,
} from '../domain/datasetRecords.js';
import { sql } from 'kysely';
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { sideTableTriggerNames, type DsCompany, type DsPeopleTitle, type DsPerson, type DsPost } from './dataset.js';
import { runQuery, typedQueries } from './sqlFragments.js';
import type { Pool, PoolClient } from './pool.js';
import { datasetOptOutHash, datasetOptOutHashes } from './datasetOptOuts.js';

export interface ImportFiles {
  companies?: string;
  people?: string;
  posts?: string;
}

export interface ImportProgress {
  kind: DatasetKind;
  file: string;
  bytesRead: number;
  totalBytes: number;
  rows: number;
}

export interface RecordFailure {
  kind: DatasetKind;
  file: string;
  line: number;
  message: string;
}

export interface ImportReport {
  /** `indexSeconds`: rebuilding the indexes and foreign keys dropped for a load into an empty table. */
  /** `optedOut`: records skipped because they name a person on the dataset opt-out list (db/datasetOptOuts.ts). */
  results: { kind: DatasetKind; file: string; loaded: number; rejected: number; optedOut: number; seconds: number; indexSeconds: number }[];
  /** Final VACUUM ANALYZE of the loaded tables. */
  vacuumSeconds: number;
  /** Up to `maxReportedErrors` failures, in file order. */
  errors: RecordFailure[];
  errorCount: number;
  rowsLoaded: number;
  seconds: number;
}

export interface ImportOptions {
  onProgress?: (p: ImportProgress) => void;
  /** Records per COPY + upsert round trip. */
  batchSize?: number;
  maxReportedErrors?: number;
  /** Force a format instead of guessing from the extension (`.csv` → CSV, else JSONL). */
  format?: 'jsonl' | 'csv';
  /**
   * The dataset opt-out key (`datasetOptOutKey(SERVER_SECRET)`): records of people on the opt-out
   * list are skipped. Required once the list has entries (the import refuses to run without it).
   */
  optOutKey?: Buffer;
}

const TABLE = { companies: 'ds_companies', people: 'ds_people', posts: 'ds_posts' } as const satisfies Record<DatasetKind, string>;
const KEY: Record<DatasetKind, string> = { companies: 'company_pronet_url', people: 'member_pronet_url', posts: 'post_url' };
const STAGE_TYPES: Record<string, string> = {
  url: 'text', text: 'text', int: 'int', bigint: 'bigint', bool: 'boolean', textArray: 'text[]', emails: 'jsonb', phones: 'jsonb', timestamp: 'timestamptz',
};

function stageTable(kind: DatasetKind): string {
  return `ds_import_${kind}`;
}

function createStageSql(kind: DatasetKind): string {
  const cols = RECORD_COLUMNS[kind].map((c) => `${c.key} ${STAGE_TYPES[c.kind]}`);
  if (kind === 'companies') cols.push('company_domain text');
  return `create temp table if not exists ${stageTable(kind)} (seq bigint not null, id uuid not null, ${cols.join(', ')})`;
}

/** The upsert from the stage table into the ds_* table; re-import replaces every imported column. */
function upsertSql(kind: DatasetKind): string {
  const stage = stageTable(kind);
  const cols = stagingColumns(kind);
  const key = KEY[kind];
  const table = TABLE[kind];
  if (kind === 'people') {
    const insertCols = ['id', ...cols, 'company_id', ...DENORMALIZED.map((d) => d.person), 'updated_at'];
    const selectCols = ['s.id', ...cols.map((c) => `s.${c}`), 'c.id', ...DENORMALIZED.map((d) => `c.${d.company}`), 'now()'];
    return `insert into ${table} (${insertCols.join(', ')})
      select distinct on (s.${key}) ${selectCols.join(', ')}
      from ${stage} s left join ds_companies c on c.company_pronet_url = s.company_pronet_url
      order by s.${key}, s.seq desc
      on conflict (${key}) do update set ${[...cols.filter((c) => c !== key), 'company_id', ...DENORMALIZED.map((d) => d.person), 'updated_at'].map((c) => `${c} = excluded.${c}`).join(', ')}`;
  }
  const insertCols = ['id', ...cols, ...(kind === 'companies' ? ['updated_at'] : [])];
  const selectCols = ['s.id', ...cols.map((c) => `s.${c}`), ...(kind === 'companies' ? ['now()'] : [])];
  const updates = [...cols.filter((c) => c !== key), ...(kind === 'companies' ? ['updated_at'] : [])];
  return `insert into ${table} (${insertCols.join(', ')})
    select distinct on (s.${key}) ${selectCols.join(', ')} from ${stage} s order by s.${key}, s.seq desc
    on conflict (${key}) do update set ${updates.map((c) => `${c} = excluded.${c}`).join(', ')}`;
}

/**
 * Company attributes copied onto ds_people (Migration20261121020100_dataset_search), so that
 * contact searches filter on them without joining the companies.
 */
export const DENORMALIZED = [
  { person: 'company_industry', company: 'industry' },
  { person: 'company_size_range', company: 'size_range' },
  { person: 'company_employee_count', company: 'employee_count' },
  { person: 'company_hq_country', company: 'hq_country' },
  { person: 'company_technologies', company: 'technologies' },
] as const;

/** People imported before their company get linked (and their copies refreshed) when it arrives. */
const LINK_PEOPLE_SQL = `update ds_people p set company_id = c.id, ${DENORMALIZED.map((d) => `${d.person} = c.${d.company}`).join(', ')}
  from ds_companies c
  where c.company_pronet_url = any($1::text[]) and p.company_pronet_url = c.company_pronet_url
    and (p.company_id is distinct from c.id or ${DENORMALIZED.map((d) => `p.${d.person} is distinct from c.${d.company}`).join(' or ')})`;

// Raw SQL: the COPY stream into a stage table.
async function copyLines(client: PoolClient, table: string, cols: string[], lines: string[]): Promise<void> {
  const stream = client.query(copyFrom(`copy ${table} (${cols.join(', ')}) from stdin`));
  await pipeline(Readable.from(chunked(lines)), stream);
}

function* chunked(lines: string[]): Generator<string> {
  for (let i = 0; i < lines.length; i += 2000) yield lines.slice(i, i + 2000).join('');
}

interface StagedRecord {
  seq: number;
  id: string;
  values: ReturnType<typeof parseRecord>['values'];
  line: number;
  /** First occurrence of its key in a load into an empty table: COPYed straight in. */
  direct: boolean;
}

/** 52-bit FNV-1a-style hash of a key (two 32-bit lanes), exact as a JS number. */
function keyHash(s: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0) * 0x100000 + ((b >>> 0) & 0xfffff);
}

/** Secondary (non-constraint) indexes of a table, with their definitions. */
// Raw SQL: a catalog read (pg_indexes) returning each index's DDL text to replay later.
async function secondaryIndexes(client: PoolClient, table: string): Promise<{ name: string; def: string }[]> {
  const r = await client.query<{ indexname: string; indexdef: string }>(
    `select i.indexname, i.indexdef from pg_indexes i
     where i.schemaname = current_schema() and i.tablename = $1
       and not exists (select 1 from pg_constraint c where c.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)`,
    [table],
  );
  return r.rows.map((x) => ({ name: x.indexname, def: x.indexdef }));
}

interface ConstraintDef {
  conname: string;
  def: string;
}

/** One kind's import: the state its phases share. */
interface KindImport {
  kind: DatasetKind;
  file: string;
  table: string;
  opts: ImportOptions;
  report: ImportReport;
  batchSize: number;
  maxErrors: number;
  format: 'jsonl' | 'csv';
  totalBytes: number;
  client: PoolClient;
  /** Second connection of a load into an empty table. */
  helper: PoolClient | null;
  loaded: number;
  rejected: number;
  /** The opt-out list to test records against (null: the list is empty), and the records it kept out. */
  optOuts: { key: Buffer; hashes: Set<string> } | null;
  optedOut: number;
  /** What a load into an empty table dropped and must put back (also after a failure). */
  dropped: { indexes: { name: string; def: string }[]; fks: ConstraintDef[]; keys: ConstraintDef[]; keysRestored: boolean; sideKeys: ConstraintDef[] | null };
}

/**
 * Search-side tables kept by triggers on a dataset table: ds_people_by_skill
 * (Migration20261125230000_people_by_skill) and ds_companies_by_technology
 * (Migration20261126020000_companies_by_technology). A load into an empty table switches its
 * triggers off and writes the side rows in one pass at the end (the triggers cost a third more
 * time per people batch).
 */
interface SideTable {
  table: string;
  triggers: string[];
  /** Fills the side table from the whole loaded table. */
  fill: string;
}
const SIDE_TABLES: Partial<Record<DatasetKind, SideTable>> = {
  people: {
    table: 'ds_people_by_skill',
    triggers: sideTableTriggerNames('ds_people_by_skill'),
    // a skill listed twice by one person counts once (its first place): no sort of every row before the key's own
    fill: `insert into ds_people_by_skill (skill, country, person_id)
  select k, p.member_location_country, p.id from ds_people p, unnest(p.member_skills) with ordinality u(k, i)
  where p.member_location_country is not null and k is not null and array_position(p.member_skills, k) = i`,
  },
  companies: {
    table: 'ds_companies_by_technology',
    triggers: sideTableTriggerNames('ds_companies_by_technology'),
    fill: `insert into ds_companies_by_technology (technology, company_id)
  select k, c.id from ds_companies c, unnest(c.technologies) with ordinality u(k, i) where k is not null and array_position(c.technologies, k) = i`,
  },
};

function reject(run: KindImport, line: number, message: string): void {
  run.rejected++;
  run.report.errorCount++;
  if (run.report.errors.length < run.maxErrors) run.report.errors.push({ kind: run.kind, file: run.file, line, message });
}

// Raw SQL: session settings and the session's temp stage table.
async function setupSession(c: PoolClient, kind: DatasetKind): Promise<void> {
  // bulk-load session: in-memory sorts/hashes of a batch, an in-memory stage table (temp_buffers
  // must be set before the first temp table use); one index probe per staged row beats hashing
  // the whole company table for every batch. Commits stay synchronous (durable by default,
  // DESIGN §9): a batch is a few thousand rows, so its one WAL flush costs nothing measurable.
  await c.query(`set work_mem = '256MB'`);
  await c.query(`set temp_buffers = '256MB'`);
  await c.query(`set maintenance_work_mem = '256MB'`);
  await c.query(`set enable_hashjoin = off`);
  await c.query(createStageSql(kind));
  await c.query(`truncate ${stageTable(kind)}`);
}

/** The table's constraints of the given types (`f`: foreign keys; `p`, `u`: primary and unique keys, primary first). */
// Raw SQL: a catalog read (pg_constraint) returning each constraint's DDL text.
async function constraintsOf(client: PoolClient, table: string, types: 'f' | 'pu'): Promise<ConstraintDef[]> {
  const r = await client.query<ConstraintDef>(
    `select conname, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = $1::regclass and contype = any($2::"char"[]) order by contype`,
    [table, types.split('')],
  );
  return r.rows;
}

/** Load into an empty table: drops its secondary indexes and foreign keys (and, but for companies, its keys). */
// Raw SQL: DDL (drop index / constraint) named from the catalog.
async function dropForEmptyLoad(run: KindImport): Promise<void> {
  const { client, table } = run;
  run.dropped.indexes = await secondaryIndexes(client, table);
  for (const ix of run.dropped.indexes) await client.query(`drop index if exists "${ix.name}"`);
  // foreign keys are checked row by row by triggers; one validation at the end is far cheaper
  run.dropped.fks = await constraintsOf(client, table, 'f');
  for (const fk of run.dropped.fks) await client.query(`alter table ${table} drop constraint "${fk.conname}"`);
  // People and posts are referenced by nothing: their primary and unique keys go too, and a
  // key repeated in the file waits until the keys are back (it is then upserted, in order).
  if (run.kind !== 'companies') {
    run.dropped.keys = await constraintsOf(client, table, 'pu');
    for (const k of run.dropped.keys) await client.query(`alter table ${table} drop constraint "${k.conname}"`);
  }
  const side = SIDE_TABLES[run.kind];
  if (side) {
    for (const t of side.triggers) await client.query(`alter table ${table} disable trigger ${t}`);
    run.dropped.sideKeys = await constraintsOf(client, side.table, 'pu');
    await client.query(`truncate ${side.table}`);
    for (const k of run.dropped.sideKeys) await client.query(`alter table ${side.table} drop constraint "${k.conname}"`);
  }
}

// Raw SQL: DDL replayed from the catalog's text.
async function restoreKeys(run: KindImport): Promise<void> {
  if (run.dropped.keysRestored) return;
  run.dropped.keysRestored = true;
  for (const k of run.dropped.keys) await run.client.query(`alter table ${run.table} add constraint "${k.conname}" ${k.def}`);
}

/** Puts back what `dropForEmptyLoad` dropped: keys, then indexes (two connections, largest GIN first), then foreign keys. */
// Raw SQL: DDL replayed from the catalog's text.
async function restoreAfterLoad(run: KindImport): Promise<void> {
  await restoreKeys(run);
  const queue = [...run.dropped.indexes].sort((a, b) => Number(/using gin/i.test(b.def)) - Number(/using gin/i.test(a.def)));
  const sideKeys = run.dropped.sideKeys;
  const side = SIDE_TABLES[run.kind];
  if (sideKeys && side) {
    // one job beside the index builds: the side rows of the loaded table, their key, the triggers back on
    queue.unshift({
      name: side.table,
      def: [
        side.fill,
        ...sideKeys.map((k) => `alter table ${side.table} add constraint "${k.conname}" ${k.def}`),
        ...side.triggers.map((t) => `alter table ${run.table} enable trigger ${t}`),
      ].join(';\n'),
    });
  }
  const builders = [run.client, ...(run.helper ? [run.helper] : [])].map(async (c) => {
    for (let ix = queue.shift(); ix; ix = queue.shift()) await c.query(ix.def);
  });
  await Promise.all(builders);
  // raw SQL: DDL replayed from the catalog's text.
  for (const fk of run.dropped.fks) await run.client.query(`alter table ${run.table} add constraint "${fk.conname}" ${fk.def}`);
}

/**
 * Writes batches of staged records. Direct mode (the table was empty): first occurrences of a
 * key are COPYed straight into the table; a key seen again goes through the stage + upsert path
 * after it, so the last occurrence still wins. Batches whose records are all first occurrences
 * may run on either connection at once; a batch with a repeated key waits until every earlier
 * batch is in. While the keys are dropped, repeated keys wait in `later` until they are back.
 */
// Raw SQL: upserts from the temp stage table (no entity), transaction control and savepoints, truncates of the stage.
async function createBatchWriter(run: KindImport, o: { direct: boolean; peopleExist: boolean }) {
  const { kind, table } = run;
  const companies = new Map<string, (string | number | null)[]>();
  if (o.direct && kind === 'people') {
    // raw SQL: the company columns copied onto people are listed from DENORMALIZED.
    const r = await run.client.query(`select company_pronet_url as u, id, ${DENORMALIZED.map((d) => d.company).join(', ')} from ds_companies`);
    for (const row of r.rows) companies.set(row.u, [row.id, ...DENORMALIZED.map((d) => row[d.company] ?? null)]);
  }
  const noCompany = [null, ...DENORMALIZED.map(() => null)];
  const companyUrlIndex = RECORD_COLUMNS.people.findIndex((c) => c.key === 'company_pronet_url');
  const directColumns = ['id', ...stagingColumns(kind), ...(kind === 'people' ? ['company_id', ...DENORMALIZED.map((d) => d.person)] : [])];
  const directLine = (r: StagedRecord) =>
    copyLine([r.id], kind === 'people' ? [...r.values, ...(companies.get(r.values[companyUrlIndex] as string) ?? noCompany)] : r.values);
  const stageLine = (r: StagedRecord) => copyLine([r.seq, r.id], r.values);
  const upsert = upsertSql(kind);

  // raw SQL: the upsert reads the session's temp stage table, which has no entity.
  const upsertStaged = async (client: PoolClient, records: StagedRecord[]) => {
    await copyLines(client, stageTable(kind), ['seq', 'id', ...stagingColumns(kind)], records.map(stageLine));
    await client.query(upsert);
    await client.query(`truncate ${stageTable(kind)}`);
  };

  /** A record the validator let through but the database refused: find it, load the rest. */
  const loadOneByOne = async (client: PoolClient, batch: StagedRecord[]) => {
    // raw SQL: transaction control and savepoints on the loader's own connection (one record at a time).
    await client.query(`truncate ${stageTable(kind)}`);
    await client.query('begin');
    for (const r of batch) {
      try {
        await client.query('savepoint one');
        await upsertStaged(client, [r]);
        if (o.peopleExist) await client.query(LINK_PEOPLE_SQL, [[r.values[0]]]);
        await client.query('release savepoint one');
        run.loaded++;
      } catch (e) {
        await client.query('rollback to savepoint one').catch(() => {});
        await client.query(`truncate ${stageTable(kind)}`);
        reject(run, r.line, `rejected by the database: ${(e as Error).message}`);
      }
    }
    await client.query('commit');
  };

  // raw SQL: one transaction per batch on the loader's own connection; COPY and the stage upsert.
  const flush = async (client: PoolClient, batch: StagedRecord[]) => {
    if (!batch.length) return;
    try {
      await client.query('begin');
      const first = batch.filter((r) => r.direct);
      if (first.length) await copyLines(client, table, directColumns, first.map(directLine));
      const again = batch.filter((r) => !r.direct);
      if (again.length) await upsertStaged(client, again);
      if (o.peopleExist) await client.query(LINK_PEOPLE_SQL, [batch.map((r) => r.values[0])]);
      await client.query('commit');
      run.loaded += batch.length;
    } catch {
      await client.query('rollback').catch(() => {});
      await loadOneByOne(client, batch);
    }
  };

  const lanes = [run.client, ...(run.helper ? [run.helper] : [])].map((c) => ({ c, busy: Promise.resolve() as Promise<void> }));
  let next = 0;
  const later: StagedRecord[] = [];
  return {
    async schedule(b: StagedRecord[]): Promise<void> {
      if (run.dropped.keys.length) {
        for (const r of b) if (!r.direct) later.push(r);
        b = b.filter((r) => r.direct);
      }
      if (lanes.length > 1 && b.every((r) => r.direct)) {
        const lane = lanes[next++ % lanes.length]!;
        await lane.busy;
        lane.busy = flush(lane.c, b);
      } else {
        await Promise.all(lanes.map((l) => l.busy));
        lanes[0]!.busy = flush(lanes[0]!.c, b);
      }
      for (const l of lanes) l.busy.catch(() => {});
    },
    /** Waits for every batch; then, once the keys are back, upserts the repeated keys in file order (the last one wins). */
    async finish(): Promise<void> {
      await Promise.all(lanes.map((l) => l.busy));
      if (run.dropped.keys.length) {
        await restoreKeys(run);
        for (let i = 0; i < later.length; i += run.batchSize) await flush(run.client, later.slice(i, i + run.batchSize));
      }
    },
  };
}

/**
 * Reads the file's records (JSONL, or CSV with a header naming known columns), reporting lines
 * that are no record; `onRecord` gets each raw record with its (first) line number, then
 * `afterRecord` the line count and bytes read so far.
 */
async function readRecords(
  run: KindImport,
  onRecord: (raw: unknown, line: number, fromCsv: boolean) => void,
  afterRecord: (lineNo: number, bytesRead: number) => Promise<void>,
): Promise<void> {
  const { kind, file, format } = run;
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  let bytesRead = 0;
  input.on('data', (chunk) => (bytesRead += chunk.length));
  const rl = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  let header: string[] | null = null;
  const csv = new CsvRecordReader();
  let recordStart = 0;
  for await (const line of rl) {
    lineNo++;
    if (format === 'jsonl') {
      if (!line.trim()) continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        reject(run, lineNo, 'not valid JSON');
        continue;
      }
      onRecord(raw, lineNo, false);
    } else {
      if (recordStart === 0) recordStart = lineNo;
      const fields = csv.push(line);
      if (fields === null) continue;
      const start = recordStart;
      recordStart = 0;
      if (header === null) {
        header = fields.map((f) => f.trim().replace(/^\uFEFF/, ''));
        const known = new Set(RECORD_COLUMNS[kind].map((c) => c.key));
        const unknown = header.filter((h) => !known.has(h));
        if (unknown.length) throw new Error(`${file}: unknown CSV column(s) ${unknown.join(', ')} (expected ${[...known].join(', ')})`);
        continue;
      }
      if (fields.length === 1 && fields[0] === '') continue;
      if (fields.length !== header.length) {
        reject(run, start, `has ${fields.length} fields, the header has ${header.length}`);
        continue;
      }
      const raw: Record<string, string> = {};
      header.forEach((h, i) => (raw[h] = fields[i]!));
      onRecord(raw, start, true);
    }
    await afterRecord(lineNo, bytesRead);
  }
  if (csv.unterminated) reject(run, recordStart, 'unterminated quoted field at end of file');
}

/**
 * Parses and validates the file's records into batches for the writer, reporting progress.
 * In direct mode seen keys are kept as 52-bit hashes: a collision only sends a record the
 * slower (still correct) way. Returns the distinct job titles of people.
 */
async function loadRecords(run: KindImport, writer: Awaited<ReturnType<typeof createBatchWriter>>, direct: boolean): Promise<Set<string>> {
  const { kind, file, opts, totalBytes } = run;
  const seen = new Set<number>();
  const titleIndex = RECORD_COLUMNS.people.findIndex((c) => c.key === 'member_job_title');
  const titles = new Set<string>();
  let seq = 0;
  let batch: StagedRecord[] = [];
  let lastReport = 0;
  const optedOut = optOutTest(run);
  const accept = (raw: unknown, line: number, fromCsv: boolean) => {
    try {
      const rec = parseRecord(kind, raw, fromCsv);
      if (optedOut?.(rec.values)) {
        run.optedOut++;
        return;
      }
      let first = false;
      if (direct) {
        const h = keyHash(rec.key);
        first = !seen.has(h);
        seen.add(h);
      }
      batch.push({ seq: seq++, id: uuidv7Pooled(), values: rec.values, line, direct: first });
      if (kind === 'people') {
        const title = rec.values[titleIndex];
        if (typeof title === 'string') titles.add(title);
      }
    } catch (e) {
      if (e instanceof RecordError) reject(run, line, e.message);
      else throw e;
    }
  };
  await readRecords(run, accept, async (lineNo, bytesRead) => {
    if (batch.length >= run.batchSize) {
      const b = batch;
      batch = [];
      await writer.schedule(b);
    }
    if (opts.onProgress && lineNo - lastReport >= 5000) {
      lastReport = lineNo;
      opts.onProgress({ kind, file, bytesRead, totalBytes, rows: run.loaded + batch.length });
    }
  });
  await writer.schedule(batch);
  await writer.finish();
  opts.onProgress?.({ kind, file, bytesRead: totalBytes, totalBytes, rows: run.loaded });
  return titles;
}

/**
 * A test of a record's values against the opt-out list: a person by profile URL or any email, a
 * post by its member's or author's profile URL; companies are no person (null: nothing to test).
 */
function optOutTest(run: KindImport): ((values: unknown[]) => boolean) | null {
  const optOuts = run.optOuts;
  if (!optOuts || run.kind === 'companies') return null;
  const at = (key: string) => RECORD_COLUMNS[run.kind].findIndex((c) => c.key === key);
  const listed = (kind: 'email' | 'profileUrl', v: unknown) => typeof v === 'string' && optOuts.hashes.has(datasetOptOutHash(optOuts.key, kind, v));
  if (run.kind === 'people') {
    const url = at('member_pronet_url');
    const emails = at('member_emails');
    return (values) => listed('profileUrl', values[url]) || (JSON.parse(String(values[emails] ?? '[]')) as { email: string }[]).some((e) => listed('email', e.email));
  }
  const member = at('member_pronet_url');
  const author = at('author_pronet_url');
  return (values) => listed('profileUrl', values[member]) || listed('profileUrl', values[author]);
}

/** The loader's typed statements, run on its own connections (`runQuery`). */
const loaderQueries = typedQueries<InferKyselyDB<typeof DsCompany | typeof DsPerson | typeof DsPost | typeof DsPeopleTitle>>();

/** Whether the dataset table has no row. */
async function isEmpty(client: PoolClient, table: (typeof TABLE)[DatasetKind]): Promise<boolean> {
  const [row] = await runQuery(client, loaderQueries.selectNoFrom((eb) => eb.not(eb.exists(eb.selectFrom(table).select(sql.lit(1).as('one')))).as('empty')));
  return row!.empty === true;
}

/** Imports one file: session set-up, (empty table) drop of indexes and keys, load, restore, report. */
async function importKind(
  pool: Pool,
  kind: DatasetKind,
  file: string,
  opts: ImportOptions,
  report: ImportReport,
  optOuts: KindImport['optOuts'],
): Promise<void> {
  const started = Date.now();
  const run: KindImport = {
    kind,
    file,
    table: TABLE[kind],
    opts,
    report,
    batchSize: opts.batchSize ?? 25_000,
    maxErrors: opts.maxReportedErrors ?? 1000,
    format: opts.format ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'jsonl'),
    totalBytes: statSync(file).size,
    client: await pool.connect(),
    helper: null,
    loaded: 0,
    rejected: 0,
    optOuts,
    optedOut: 0,
    dropped: { indexes: [], fks: [], keys: [], keysRestored: false, sideKeys: null },
  };
  let indexStarted = 0;
  try {
    await setupSession(run.client, kind);
    const empty = await isEmpty(run.client, TABLE[kind]);
    const peopleExist = kind === 'companies' && !(await isEmpty(run.client, 'ds_people'));
    if (empty) {
      await dropForEmptyLoad(run);
      // Loading into an empty table, a second connection COPYs batches in parallel (the
      // database work then spreads over two cores while this process parses).
      run.helper = await pool.connect();
      await setupSession(run.helper, kind);
    }
    const writer = await createBatchWriter(run, { direct: empty, peopleExist });
    const titles = await loadRecords(run, writer, empty);
    if (kind === 'people' && titles.size) {
      // the distinct titles LIKE searches run against (db/discoverySearch.ts)
      await runQuery(
        run.client,
        loaderQueries
          .insertInto('ds_people_titles')
          .columns(['title'])
          .expression(loaderQueries.selectFrom(sql<{ title: string }>`unnest(${[...titles]}::text[])`.as<'u'>(sql`u(title)`)).select('u.title'))
          .onConflict((oc) => oc.doNothing()),
      );
    }
  } finally {
    try {
      indexStarted = Date.now();
      await restoreAfterLoad(run);
    } finally {
      run.client.release();
      run.helper?.release();
    }
  }
  report.results.push({ kind, file, loaded: run.loaded, rejected: run.rejected, optedOut: run.optedOut, seconds: (Date.now() - started) / 1000, indexSeconds: indexStarted ? (Date.now() - indexStarted) / 1000 : 0 });
  report.rowsLoaded += run.loaded;
}

/** Imports companies, then people (linked to their companies), then posts. */
// Raw SQL: `vacuum (analyze)`, a maintenance command.
export async function importDataset(pool: Pool, files: ImportFiles, opts: ImportOptions = {}): Promise<ImportReport> {
  const started = Date.now();
  const report: ImportReport = { results: [], errors: [], errorCount: 0, rowsLoaded: 0, seconds: 0, vacuumSeconds: 0 };
  const order: DatasetKind[] = ['companies', 'people', 'posts'];
  // Opted-out people stay out: without the key their records could not be recognised.
  const hashes = await datasetOptOutHashes(pool);
  if (hashes.size && !opts.optOutKey) throw new Error(`the dataset opt-out list has ${hashes.size} entries: the import needs its key (SERVER_SECRET) to keep those people out`);
  const optOuts = hashes.size ? { key: opts.optOutKey!, hashes } : null;
  for (const kind of order) {
    const file = files[kind];
    if (file) await importKind(pool, kind, file, opts, report, optOuts);
  }
  // Fresh statistics (and a visibility map for index-only counts) for the planner.
  const vacuumStarted = Date.now();
  for (const kind of order) if (files[kind]) await pool.query(`vacuum (analyze) ${TABLE[kind]}`);
  // the side rows the triggers wrote (index-only skill and technology searches)
  for (const kind of order) {
    const side = SIDE_TABLES[kind];
    if (files[kind] && side) await pool.query(`vacuum (analyze) ${side.table}`);
  }
  report.vacuumSeconds = (Date.now() - vacuumStarted) / 1000;
  report.seconds = (Date.now() - started) / 1000;
  return report;
}
