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
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { v7 as uuidv7 } from 'uuid';
import {
  CsvRecordReader,
  RECORD_COLUMNS,
  RecordError,
  copyLine,
  parseRecord,
  stagingColumns,
  type DatasetKind,
} from '../domain/datasetRecords.js';
import type { Pool, PoolClient } from './pool.js';

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
  results: { kind: DatasetKind; file: string; loaded: number; rejected: number; seconds: number }[];
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
}

const TABLE: Record<DatasetKind, string> = { companies: 'ds_companies', people: 'ds_people', posts: 'ds_posts' };
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
    const insertCols = ['id', ...cols, 'company_id', 'updated_at'];
    const selectCols = ['s.id', ...cols.map((c) => `s.${c}`), 'c.id', 'now()'];
    return `insert into ${table} (${insertCols.join(', ')})
      select distinct on (s.${key}) ${selectCols.join(', ')}
      from ${stage} s left join ds_companies c on c.company_pronet_url = s.company_pronet_url
      order by s.${key}, s.seq desc
      on conflict (${key}) do update set ${[...cols.filter((c) => c !== key), 'company_id', 'updated_at'].map((c) => `${c} = excluded.${c}`).join(', ')}`;
  }
  const insertCols = ['id', ...cols, ...(kind === 'companies' ? ['updated_at'] : [])];
  const selectCols = ['s.id', ...cols.map((c) => `s.${c}`), ...(kind === 'companies' ? ['now()'] : [])];
  const updates = [...cols.filter((c) => c !== key), ...(kind === 'companies' ? ['updated_at'] : [])];
  return `insert into ${table} (${insertCols.join(', ')})
    select distinct on (s.${key}) ${selectCols.join(', ')} from ${stage} s order by s.${key}, s.seq desc
    on conflict (${key}) do update set ${updates.map((c) => `${c} = excluded.${c}`).join(', ')}`;
}

/** People imported before their company get linked when the company arrives. */
const LINK_PEOPLE_SQL = `update ds_people p set company_id = c.id
  from ${stageTable('companies')} s join ds_companies c on c.company_pronet_url = s.company_pronet_url
  where p.company_pronet_url = s.company_pronet_url and p.company_id is distinct from c.id`;

async function copyLines(client: PoolClient, kind: DatasetKind, lines: string[]): Promise<void> {
  const cols = ['seq', 'id', ...stagingColumns(kind)];
  const stream = client.query(copyFrom(`copy ${stageTable(kind)} (${cols.join(', ')}) from stdin`));
  await pipeline(Readable.from(chunked(lines)), stream);
}

function* chunked(lines: string[]): Generator<string> {
  for (let i = 0; i < lines.length; i += 2000) yield lines.slice(i, i + 2000).join('');
}

interface Batch {
  lines: string[];
  lineNumbers: number[];
}

/** Secondary (non-constraint) indexes of a table, with their definitions. */
async function secondaryIndexes(client: PoolClient, table: string): Promise<{ name: string; def: string }[]> {
  const r = await client.query<{ indexname: string; indexdef: string }>(
    `select i.indexname, i.indexdef from pg_indexes i
     where i.schemaname = current_schema() and i.tablename = $1
       and not exists (select 1 from pg_constraint c where c.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)`,
    [table],
  );
  return r.rows.map((x) => ({ name: x.indexname, def: x.indexdef }));
}

async function importKind(
  pool: Pool,
  kind: DatasetKind,
  file: string,
  opts: ImportOptions,
  report: ImportReport,
): Promise<void> {
  const started = Date.now();
  const batchSize = opts.batchSize ?? 25_000;
  const maxErrors = opts.maxReportedErrors ?? 1000;
  const format = opts.format ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'jsonl');
  const totalBytes = statSync(file).size;
  const client = await pool.connect();
  let loaded = 0;
  let rejected = 0;
  let dropped: { name: string; def: string }[] = [];
  const fail = (line: number, message: string) => {
    rejected++;
    report.errorCount++;
    if (report.errors.length < maxErrors) report.errors.push({ kind, file, line, message });
  };
  try {
    await client.query(`set synchronous_commit = off`);
    await client.query(createStageSql(kind));
    await client.query(`truncate ${stageTable(kind)}`);
    const table = TABLE[kind];
    const empty = (await client.query(`select not exists (select 1 from ${table}) as empty`)).rows[0].empty as boolean;
    const peopleExist = kind === 'companies' && !(await client.query(`select not exists (select 1 from ds_people) as e`)).rows[0].e;
    if (empty) {
      dropped = await secondaryIndexes(client, table);
      for (const ix of dropped) await client.query(`drop index if exists "${ix.name}"`);
    }
    const upsert = upsertSql(kind);

    const flush = async (batch: Batch) => {
      if (!batch.lines.length) return;
      try {
        await copyLines(client, kind, batch.lines);
        await client.query(upsert);
        if (peopleExist) await client.query(LINK_PEOPLE_SQL);
        loaded += batch.lines.length;
      } catch {
        // A record the validator let through but the database refused: find it, load the rest.
        await client.query(`truncate ${stageTable(kind)}`);
        await client.query('begin');
        for (let i = 0; i < batch.lines.length; i++) {
          try {
            await client.query('savepoint one');
            await copyLines(client, kind, [batch.lines[i]!]);
            await client.query(upsert);
            if (peopleExist) await client.query(LINK_PEOPLE_SQL);
            await client.query('release savepoint one');
            loaded++;
          } catch (e) {
            await client.query('rollback to savepoint one').catch(() => {});
            fail(batch.lineNumbers[i]!, `rejected by the database: ${(e as Error).message}`);
          }
          await client.query(`truncate ${stageTable(kind)}`);
        }
        await client.query('commit');
      }
      await client.query(`truncate ${stageTable(kind)}`);
    };

    const input = createReadStream(file, { highWaterMark: 1 << 20 });
    let bytesRead = 0;
    input.on('data', (chunk) => (bytesRead += chunk.length));
    const rl = createInterface({ input, crlfDelay: Infinity });
    let lineNo = 0;
    let seq = 0;
    let header: string[] | null = null;
    const csv = new CsvRecordReader();
    let recordStart = 0;
    let batch: Batch = { lines: [], lineNumbers: [] };
    let inFlight: Promise<void> = Promise.resolve();
    let lastReport = 0;

    const accept = (raw: unknown, line: number, fromCsv: boolean) => {
      try {
        const rec = parseRecord(kind, raw, fromCsv);
        batch.lines.push(copyLine([seq++, uuidv7()], rec.values));
        batch.lineNumbers.push(line);
      } catch (e) {
        if (e instanceof RecordError) fail(line, e.message);
        else throw e;
      }
    };

    for await (const line of rl) {
      lineNo++;
      if (format === 'jsonl') {
        if (!line.trim()) continue;
        let raw: unknown;
        try {
          raw = JSON.parse(line);
        } catch {
          fail(lineNo, 'not valid JSON');
          continue;
        }
        accept(raw, lineNo, false);
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
          fail(start, `has ${fields.length} fields, the header has ${header.length}`);
          continue;
        }
        const raw: Record<string, string> = {};
        header.forEach((h, i) => (raw[h] = fields[i]!));
        accept(raw, start, true);
      }
      if (batch.lines.length >= batchSize) {
        await inFlight;
        const b = batch;
        batch = { lines: [], lineNumbers: [] };
        inFlight = flush(b);
        inFlight.catch(() => {});
      }
      if (opts.onProgress && lineNo - lastReport >= 5000) {
        lastReport = lineNo;
        opts.onProgress({ kind, file, bytesRead, totalBytes, rows: loaded + batch.lines.length });
      }
    }
    if (csv.unterminated) fail(recordStart, 'unterminated quoted field at end of file');
    await inFlight;
    await flush(batch);
    opts.onProgress?.({ kind, file, bytesRead: totalBytes, totalBytes, rows: loaded });
  } finally {
    try {
      if (dropped.length) {
        await client.query(`set maintenance_work_mem = '256MB'`);
        for (const ix of dropped) await client.query(ix.def);
      }
    } finally {
      client.release();
    }
  }
  report.results.push({ kind, file, loaded, rejected, seconds: (Date.now() - started) / 1000 });
  report.rowsLoaded += loaded;
}

/** Imports companies, then people (linked to their companies), then posts. */
export async function importDataset(pool: Pool, files: ImportFiles, opts: ImportOptions = {}): Promise<ImportReport> {
  const started = Date.now();
  const report: ImportReport = { results: [], errors: [], errorCount: 0, rowsLoaded: 0, seconds: 0 };
  const order: DatasetKind[] = ['companies', 'people', 'posts'];
  for (const kind of order) {
    const file = files[kind];
    if (file) await importKind(pool, kind, file, opts, report);
  }
  // Fresh statistics (and a visibility map for index-only counts) for the planner.
  for (const kind of order) if (files[kind]) await pool.query(`vacuum (analyze) ${TABLE[kind]}`);
  report.seconds = (Date.now() - started) / 1000;
  return report;
}
