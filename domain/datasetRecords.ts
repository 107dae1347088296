/**
 * Validation and normalisation of dataset import records (JSONL objects or CSV rows whose keys
 * are the catalog names without prefix), and their encoding as PostgreSQL `COPY` text lines.
 * Pure functions: the importer in db/datasetImport.ts streams files through them.
 */
import { numberInput } from './conditions.js';
import { parseIsoDate } from './dates.js';
import { normalizeDomain, normalizeProfileUrl } from './identity.js';

export type DatasetKind = 'companies' | 'people' | 'posts';

/** Thrown for a record that cannot be loaded; the importer reports it with its line number. */
export class RecordError extends Error {}

type Raw = Record<string, unknown>;
type Cell = string | number | boolean | null | string[] | unknown[] | Raw;

interface ColumnSpec {
  /** Key in the import record (and column name in the ds_* table). */
  key: string;
  kind: 'url' | 'text' | 'int' | 'bigint' | 'bool' | 'textArray' | 'emails' | 'phones' | 'timestamp';
  required?: boolean;
}

const COMPANY_COLUMNS: ColumnSpec[] = [
  { key: 'company_pronet_url', kind: 'url', required: true },
  { key: 'company_name', kind: 'text' },
  { key: 'company_website', kind: 'text' },
  { key: 'industry', kind: 'text' },
  { key: 'size_range', kind: 'text' },
  { key: 'employee_count', kind: 'int' },
  { key: 'revenue_min', kind: 'bigint' },
  { key: 'revenue_max', kind: 'bigint' },
  { key: 'founded_year', kind: 'int' },
  { key: 'hq_city', kind: 'text' },
  { key: 'hq_state', kind: 'text' },
  { key: 'hq_country', kind: 'text' },
  { key: 'technologies', kind: 'textArray' },
  { key: 'verified', kind: 'bool' },
];

const PERSON_COLUMNS: ColumnSpec[] = [
  { key: 'member_pronet_url', kind: 'url', required: true },
  { key: 'member_full_name', kind: 'text' },
  { key: 'member_first_name', kind: 'text' },
  { key: 'member_last_name', kind: 'text' },
  { key: 'member_job_title', kind: 'text' },
  { key: 'member_seniority', kind: 'text' },
  { key: 'member_headline', kind: 'text' },
  { key: 'member_location_city', kind: 'text' },
  { key: 'member_location_country', kind: 'text' },
  { key: 'member_skills', kind: 'textArray' },
  { key: 'member_years_experience', kind: 'int' },
  { key: 'member_emails', kind: 'emails' },
  { key: 'member_phones', kind: 'phones' },
  { key: 'company_pronet_url', kind: 'url' },
  { key: 'verified', kind: 'bool' },
];

const POST_COLUMNS: ColumnSpec[] = [
  { key: 'member_pronet_url', kind: 'url', required: true },
  { key: 'post_url', kind: 'url', required: true },
  { key: 'text', kind: 'text' },
  { key: 'posted_at', kind: 'timestamp' },
  { key: 'likes', kind: 'int' },
  { key: 'comments', kind: 'int' },
  { key: 'interaction_type', kind: 'text' },
  { key: 'author_pronet_url', kind: 'url' },
];

export const RECORD_COLUMNS: Record<DatasetKind, ColumnSpec[]> = {
  companies: COMPANY_COLUMNS,
  people: PERSON_COLUMNS,
  posts: POST_COLUMNS,
};

const KNOWN_KEYS = Object.fromEntries(Object.entries(RECORD_COLUMNS).map(([k, cols]) => [k, new Set(cols.map((c) => c.key))])) as Record<DatasetKind, Set<string>>;
const KEY_INDEX = Object.fromEntries(Object.entries(RECORD_COLUMNS).map(([k, cols]) => [k, new Map(cols.map((c, i) => [c.key, i]))])) as Record<DatasetKind, Map<string, number>>;

/**
 * Columns of the staging row, in COPY order: the record's columns, plus `company_domain` for
 * companies (derived from the website).
 */
export function stagingColumns(kind: DatasetKind): string[] {
  const cols = RECORD_COLUMNS[kind].map((c) => c.key);
  return kind === 'companies' ? [...cols, 'company_domain'] : cols;
}

/** Values arrive typed from JSONL and as strings from CSV; both are accepted. */
function convert(spec: ColumnSpec, v: unknown, fromCsv: boolean): Cell {
  const k = spec.key;
  if (v === undefined || v === null || (fromCsv && v === '')) {
    if (spec.required) throw new RecordError(`${k} is required`);
    if (spec.kind === 'textArray') return [];
    if (spec.kind === 'emails' || spec.kind === 'phones') return '[]';
    if (spec.kind === 'bool') return false;
    return null;
  }
  switch (spec.kind) {
    case 'url': {
      if (typeof v !== 'string') throw new RecordError(`${k} must be a string`);
      const n = normalizeProfileUrl(v);
      if (!n || !n.includes('/')) throw new RecordError(`${k} must be a profile URL`);
      return n;
    }
    case 'text': {
      if (typeof v === 'number' && fromCsv === false) return String(v);
      if (typeof v !== 'string') throw new RecordError(`${k} must be a string`);
      const t = v.trim();
      if (spec.required && !t) throw new RecordError(`${k} is required`);
      return t || null;
    }
    case 'int':
    case 'bigint': {
      // decimal notation only, as the API reads numeric strings (`Number` reads 0x10 as 16)
      const n = numberInput(v);
      const max = spec.kind === 'int' ? 2147483647 : Number.MAX_SAFE_INTEGER;
      if (!Number.isInteger(n) || n < 0 || n > max) throw new RecordError(`${k} must be a whole number between 0 and ${max}`);
      return n;
    }
    case 'bool': {
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string') {
        const s = v.trim().toLowerCase();
        if (['true', '1', 'yes', 't', 'y'].includes(s)) return true;
        if (['false', '0', 'no', 'f', 'n'].includes(s)) return false;
      }
      throw new RecordError(`${k} must be a boolean`);
    }
    case 'timestamp': {
      // a moment that exists on the calendar, as the API reads dates (`Date.parse` rolls 30 February over)
      const t = parseIsoDate(v);
      if (!t) throw new RecordError(`${k} must be an ISO 8601 timestamp`);
      return t.toISOString();
    }
    case 'textArray': {
      const arr = typeof v === 'string' ? csvList(v, k) : v;
      if (!Array.isArray(arr) || arr.some((x) => typeof x !== 'string')) throw new RecordError(`${k} must be an array of strings`);
      return [...new Set((arr as string[]).map((x) => x.trim()).filter(Boolean))];
    }
    case 'emails':
    case 'phones': {
      const arr = typeof v === 'string' ? jsonValue(v, k) : v;
      const [field, other] = spec.kind === 'emails' ? ['email', 'status'] : ['number', 'type'];
      if (!Array.isArray(arr)) throw new RecordError(`${k} must be an array of {${field}, ${other}}`);
      // jsonb columns take the JSON text
      return JSON.stringify(arr.map((item, i) => {
        if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new RecordError(`${k}[${i}] must be an object {${field}, ${other}}`);
        const o = item as Raw;
        const main = o[field];
        const extra = o[other] ?? null;
        if (typeof main !== 'string' || !main.trim()) throw new RecordError(`${k}[${i}].${field} must be a non-empty string`);
        if (spec.kind === 'emails' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(main.trim())) throw new RecordError(`${k}[${i}].email is not an email address`);
        if (extra !== null && typeof extra !== 'string') throw new RecordError(`${k}[${i}].${other} must be a string`);
        for (const key of Object.keys(o)) if (key !== field && key !== other) throw new RecordError(`${k}[${i}] has an unknown property ${key}`);
        return { [field]: spec.kind === 'emails' ? main.trim().toLowerCase() : main.trim(), [other]: extra };
      }));
    }
  }
}

/** CSV list cells: a JSON array (`["a","b"]`) or values separated by `;` or `|`. */
function csvList(s: string, key: string): unknown {
  const t = s.trim();
  if (t.startsWith('[')) return jsonValue(t, key);
  return t ? t.split(/[;|]/) : [];
}
function jsonValue(s: string, key: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    throw new RecordError(`${key} is not valid JSON`);
  }
}

export interface ParsedRecord {
  /** Unique key of the record (normalised URL). */
  key: string;
  /** Values in `stagingColumns(kind)` order. */
  values: Cell[];
}

/** Validates one record; throws RecordError naming the field. */
export function parseRecord(kind: DatasetKind, raw: unknown, fromCsv = false): ParsedRecord {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new RecordError('record must be a JSON object');
  const o = raw as Raw;
  const specs = RECORD_COLUMNS[kind];
  const known = KNOWN_KEYS[kind];
  for (const key in o) if (!known.has(key)) throw new RecordError(`unknown field ${key}`);
  const values = specs.map((s) => convert(s, o[s.key], fromCsv));
  const index = KEY_INDEX[kind];
  const get = (key: string) => values[index.get(key)!];
  if (kind === 'companies') {
    const size = get('size_range');
    if (size !== null) {
      const m = /^(\d+)-(\d+)$/.exec(String(size));
      if (!m || Number(m[1]) > Number(m[2])) throw new RecordError('size_range must look like <min>-<max> with min <= max');
    }
    const rmin = get('revenue_min');
    const rmax = get('revenue_max');
    if (typeof rmin === 'number' && typeof rmax === 'number' && rmin > rmax) throw new RecordError('revenue_min must not exceed revenue_max');
    const year = get('founded_year');
    if (typeof year === 'number' && (year < 1600 || year > 2100)) throw new RecordError('founded_year must be between 1600 and 2100');
    values.push(normalizeDomain(get('company_website') as string | null));
  }
  if (kind === 'people') {
    const years = get('member_years_experience');
    if (typeof years === 'number' && years > 100) throw new RecordError('member_years_experience must be at most 100');
  }
  return { key: String(kind === 'posts' ? get('post_url') : values[0]), values };
}

// ---------------------------------------------------------------------------------------------
// COPY text format

const COPY_SPECIAL = /[\\\t\n\r]/;
function copyEscape(s: string): string {
  if (!COPY_SPECIAL.test(s)) return s;
  return s.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

const ARRAY_SPECIAL = /[\\"]/;
function pgArrayLiteral(items: string[]): string {
  let out = '{';
  for (let i = 0; i < items.length; i++) {
    const x = items[i]!;
    out += `${i ? ',' : ''}"${ARRAY_SPECIAL.test(x) ? x.replace(/[\\"]/g, (c) => `\\${c}`) : x}"`;
  }
  return `${out}}`;
}

/** One line of `COPY … FROM STDIN` text format (tab-separated, `\N` for null), newline included. */
export function copyLine(prefix: (string | number)[], values: Cell[]): string {
  let line = '';
  for (let i = 0; i < prefix.length; i++) line += `${i ? '\t' : ''}${copyEscape(String(prefix[i]))}`;
  for (const v of values) {
    line += line ? '\t' : '';
    if (v === null) line += '\\N';
    else if (typeof v === 'string') line += copyEscape(v);
    else if (typeof v === 'number' || typeof v === 'boolean') line += String(v);
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) line += copyEscape(pgArrayLiteral(v as string[]));
    else line += copyEscape(JSON.stringify(v));
  }
  return `${line}\n`;
}

// ---------------------------------------------------------------------------------------------
// CSV (RFC 4180: quoted fields may hold commas, doubled quotes and newlines)

/**
 * Assembles CSV records from physical lines. `push(line)` returns the fields of a completed
 * record, or null while a quoted field continues on the next line.
 */
export class CsvRecordReader {
  private pending: string | null = null;

  push(line: string): string[] | null {
    const text = this.pending === null ? line : `${this.pending}\n${line}`;
    const fields = parseCsvRecord(text);
    if (fields === null) {
      this.pending = text;
      return null;
    }
    this.pending = null;
    return fields;
  }

  /** True when the file ended inside a quoted field. */
  get unterminated(): boolean {
    return this.pending !== null;
  }
}

/** Fields of one complete CSV record, or null if a quoted field is still open. */
export function parseCsvRecord(text: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  const n = text.length;
  for (;;) {
    if (text[i] === '"') {
      let val = '';
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) return null;
        val += text.slice(i, q);
        if (text[q + 1] === '"') {
          val += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      out.push(val);
      // anything between the closing quote and the next comma is kept (lenient)
      const c = text.indexOf(',', i);
      if (c < 0) return out;
      i = c + 1;
    } else {
      const c = text.indexOf(',', i);
      if (c < 0) {
        out.push(text.slice(i).replace(/\r$/, ''));
        return out;
      }
      out.push(text.slice(i, c));
      i = c + 1;
    }
    if (i > n) return out;
  }
}
