/**
 * Contacts files (CSV or JSON Lines) for bulk upserts: what counts as one, and their records read
 * from a byte stream with the byte offset where each ends, so a reader can stop after any record
 * and a later one resume exactly there (the workflow imports a file in segments).
 *
 * A malformed record is an item of its own (`error`), never the end of the file: a CSV record that
 * csv-parse refuses (a stray quote, a quote never closed, over MAX_RECORD_BYTES) is taken to end
 * with its first line, and parsing resumes on the next line; a JSON line that does not parse, is
 * not an object or carries what no request may carry (NUL, lone surrogates, `__proto__`, deep
 * nesting) is that line. Blank lines are no records.
 */
import { isUtf8 } from 'node:buffer';
import { parse, type CsvError, type InfoRecord, type Options } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { unsafeInputDetails, unsafeString } from './inputSafety.js';

export const CSV_TYPE = 'text/csv';
export const JSONL_TYPE = 'application/x-ndjson';
/** Upload types that hold contacts for `bulk-upsert-contacts` (`contactsFile`), and their extensions. */
export const CONTACT_FILE_TYPES: Readonly<Record<string, string>> = { [CSV_TYPE]: 'csv', [JSONL_TYPE]: 'jsonl' };
export type ContactFileFormat = 'csv' | 'jsonl';
export const formatOf = (contentType: string): ContactFileFormat | undefined =>
  contentType === CSV_TYPE ? 'csv' : contentType === JSONL_TYPE ? 'jsonl' : undefined;

/** Longest record (CSV, possibly over several lines) or JSON line; a longer one is a row error. */
export const MAX_RECORD_BYTES = 1024 * 1024;
/** A record whose bytes are not UTF-8 is a row error (decoded leniently, it would be stored with U+FFFD in their place). */
const NOT_UTF8 = 'is not valid UTF-8 (bytes in another encoding)';
/** Most columns a CSV header may name (as `contactsData` rows: 500 keys). */
export const MAX_CSV_COLUMNS = 500;

/**
 * The contacts-file type of these leading bytes, or undefined: UTF-8 text (a BOM allowed; a
 * character cut at the end of an incomplete head is fine) without control characters other than
 * tab, CR and LF, and either JSON Lines (the first line is a JSON object) or CSV (a header line
 * and a first record with as many fields; not markup or a JSON document). Plain text of lines
 * without commas still passes as a one-column CSV: the header check of `bulk-upsert-contacts` is
 * what refuses a text file that is no contacts table.
 */
export function sniffContactFile(head: Uint8Array, complete: boolean): string | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !complete });
  } catch {
    return undefined;
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/.test(text)) return undefined;
  const first = text.trimStart();
  if (!first) return undefined;
  if (first.startsWith('{')) {
    const nl = first.indexOf('\n');
    if (nl < 0 && !complete) return JSONL_TYPE; // a first line longer than the head
    try {
      const v: unknown = JSON.parse(nl < 0 ? first : first.slice(0, nl));
      return v && typeof v === 'object' && !Array.isArray(v) ? JSONL_TYPE : undefined;
    } catch {
      return undefined; // e.g. a pretty-printed JSON document
    }
  }
  if (first.startsWith('[') || first.startsWith('<')) return undefined; // a JSON array, markup
  return looksLikeCsv(complete ? first : first.slice(0, first.lastIndexOf('\n') + 1)) ? CSV_TYPE : undefined;
}

/** A header line and a first record with as many fields, in the complete lines of the head. */
function looksLikeCsv(lines: string): boolean {
  try {
    const records = parseSync(lines, { relax_column_count: true, skip_empty_lines: true, record_delimiter: ['\r\n', '\n'], to: 2 }) as string[][];
    return records.length === 2 && records[1]!.length === records[0]!.length;
  } catch {
    return false;
  }
}

/** One record: its cells (CSV), its row object (JSON Lines) or why it is malformed; `end` is the byte offset just past it. */
export interface RawRecord {
  cells?: string[];
  row?: Record<string, unknown>;
  error?: string;
  end: number;
}

const CSV_PROBLEMS: Record<string, string> = {
  CSV_INVALID_CLOSING_QUOTE: 'a quoted field is followed by something other than a comma or the end of the line',
  CSV_QUOTE_NOT_CLOSED: 'a quoted field is never closed',
  CSV_MAX_RECORD_SIZE: `is longer than ${MAX_RECORD_BYTES} bytes`,
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'a quoted field is followed by something other than a comma or the end of the line',
};

/** Byte buffer of what was read and not yet consumed, from absolute offset `start`. */
class Held {
  private parts: Buffer[] = [];
  start: number;
  length = 0;
  constructor(start: number) {
    this.start = start;
  }
  push(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }
  get end(): number {
    return this.start + this.length;
  }
  /** Forgets the bytes before `offset` (whole parts only). */
  dropBefore(offset: number): void {
    while (this.parts.length && this.start + this.parts[0]!.length <= offset) {
      this.start += this.parts[0]!.length;
      this.length -= this.parts.shift()!.length;
    }
  }
  /** The bytes from `offset` to the end. */
  from(offset: number): Buffer {
    const all = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [all];
    return all.subarray(offset - this.start);
  }
  /** The bytes [from, to), which must be held (copied only when they span parts). */
  range(from: number, to: number): Buffer {
    const pieces: Buffer[] = [];
    let pos = this.start;
    for (const part of this.parts) {
      const partEnd = pos + part.length;
      if (partEnd > from && pos < to) pieces.push(part.subarray(Math.max(0, from - pos), Math.min(part.length, to - pos)));
      pos = partEnd;
      if (pos >= to) break;
    }
    return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
  }
  /** Offset just past the first non-blank line at or after `offset`, if the held bytes reach it. */
  lineEndAfter(offset: number): number | undefined {
    const b = this.from(this.start);
    let i = offset - this.start;
    for (;;) {
      const nl = b.indexOf(0x0a, i);
      if (nl < 0) return undefined;
      const blank = b.subarray(i, nl).every((c) => c === 0x0d || c === 0x20 || c === 0x09);
      if (!blank) return this.start + nl + 1;
      i = nl + 1;
    }
  }
}

/**
 * CSV records of `source` (the file's bytes from offset `start`), each with the byte offset just
 * past it. The first record of a file (start 0) is its header. csv-parse works on the bytes and is
 * fed synchronously, so offsets are exact; on its first refusal the record is reported malformed
 * up to the end of its first line and a fresh parser goes on from the next line.
 */
export async function* csvRecords(source: AsyncIterable<Buffer>, start: number): AsyncGenerator<RawRecord> {
  const it = source[Symbol.asyncIterator]();
  try {
    yield* csvFrom(it, start);
  } finally {
    await it.return?.(); // a reader that stops early closes the source
  }
}

async function* csvFrom(it: AsyncIterator<Buffer>, start: number): AsyncGenerator<RawRecord> {
  const held = new Held(start);
  let eof = false;
  for (let base = start; ; ) {
    const out: RawRecord[] = [];
    let refused: { code: string; at: number } | undefined;
    const parserBase = base;
    const parser = parse({
      bom: true,
      relax_column_count: true, // a wrong field count is a row error of ours, not a parser failure
      skip_empty_lines: true,
      skip_records_with_error: true,
      max_record_size: MAX_RECORD_BYTES,
      record_delimiter: ['\r\n', '\n'],
      on_record: (cells: string[], ctx: InfoRecord) => {
        if (!refused) out.push({ cells, end: parserBase + ctx.bytes });
        return null; // collected here; nothing is queued in the stream
      },
      on_skip: (e) => {
        // the error carries the parser's info: `bytes` is where the refused record starts
        const at = (e as (CsvError & { bytes?: number }) | undefined)?.bytes ?? lastEnd - parserBase;
        refused ??= { code: e?.code ?? 'CSV_INVALID', at: parserBase + at };
        return undefined;
      },
    } satisfies Options);
    parser.resume();
    let lastEnd = base;
    const drain = function* () {
      // Records end at line breaks (ASCII), so the batch is well-formed UTF-8 if and only if each
      // record is: one check, and one per record only when it fails.
      const clean = !out.length || isUtf8(held.range(lastEnd, out.at(-1)!.end));
      for (const r of out) {
        const record = clean || isUtf8(held.range(lastEnd, r.end)) ? r : { error: NOT_UTF8, end: r.end };
        lastEnd = r.end;
        yield record;
      }
      out.length = 0;
      held.dropBefore(lastEnd);
    };
    // This parser's input: what is held from `base` on, then the rest of the source.
    if (held.end > base) parser.write(held.from(base));
    while (!refused) {
      yield* drain();
      if (refused) break;
      if (eof) {
        parser.end();
        await new Promise<void>((resolve, reject) => {
          parser.once('end', resolve);
          parser.once('error', reject);
        });
        yield* drain();
        if (!refused) return;
        break;
      }
      const next = await it.next();
      if (next.done) eof = true;
      else {
        const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
        held.push(chunk);
        parser.write(chunk);
      }
    }
    yield* drain(); // records before the refused one
    parser.destroy();
    const failure = refused!;
    // The refused record ends with its first line: read on until that line is complete.
    let restart = held.lineEndAfter(failure.at);
    while (restart === undefined && !eof) {
      const next = await it.next();
      if (next.done) eof = true;
      else {
        held.push(Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value));
        restart = held.lineEndAfter(failure.at);
      }
      // A line longer than a record may be is not kept whole: only its end is looked for.
      if (restart === undefined && held.length > 2 * MAX_RECORD_BYTES) held.dropBefore(held.end - MAX_RECORD_BYTES);
    }
    const end = restart ?? held.end;
    yield { error: `is not a well-formed CSV record: ${CSV_PROBLEMS[failure.code] ?? failure.code}`, end };
    if (restart === undefined) return;
    held.dropBefore(restart);
    base = restart;
  }
}

/**
 * JSON Lines records of `source` (the file's bytes from offset `start`): one JSON object per line.
 * Lines are cut at LF bytes (never part of a multi-byte UTF-8 character nor of a JSON string).
 */
export async function* jsonLineRecords(source: AsyncIterable<Buffer>, start: number): AsyncGenerator<RawRecord> {
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let lineStart = start;
  let tooLong = false;
  let offset = start;
  const finish = (line: Buffer | undefined, end: number): RawRecord | undefined => {
    if (tooLong) return { error: `is longer than ${MAX_RECORD_BYTES} bytes`, end };
    if (!isUtf8(line!)) return { error: NOT_UTF8, end };
    let text = line!.toString('utf8');
    if (lineStart === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (!text.trim()) return undefined;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      return { error: `is not valid JSON: ${(e as Error).message}`, end };
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'is not a JSON object', end };
    const unsafe = unsafeInputDetails(v);
    if (unsafe.length) return { error: `${unsafe[0]!.path} ${unsafe[0]!.message}`, end };
    return { row: v as Record<string, unknown>, end };
  };
  for await (const raw of source) {
    const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array);
    let i = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, i);
      const piece = chunk.subarray(i, nl < 0 ? chunk.length : nl);
      if (!tooLong) {
        if (pendingLength + piece.length > MAX_RECORD_BYTES) {
          tooLong = true;
          pending = [];
          pendingLength = 0;
        } else if (nl < 0 || pendingLength) {
          pending.push(piece);
          pendingLength += piece.length;
        }
      }
      if (nl < 0) break;
      const end = offset + nl + 1;
      const line = tooLong ? undefined : pendingLength ? Buffer.concat(pending) : piece;
      const r = finish(line, end);
      if (r) yield r;
      pending = [];
      pendingLength = 0;
      tooLong = false;
      lineStart = end;
      i = nl + 1;
    }
    offset += chunk.length;
  }
  if (tooLong || pendingLength) {
    const r = finish(Buffer.concat(pending), offset);
    if (r) yield r;
  }
}

/** Problems of a CSV header (the file's first record), as messages; empty when usable. */
export function headerProblems(header: string[]): string[] {
  const problems: string[] = [];
  if (header.length > MAX_CSV_COLUMNS) problems.push(`has ${header.length} columns; at most ${MAX_CSV_COLUMNS}`);
  const seen = new Set<string>();
  header.forEach((h, i) => {
    if (!h.trim()) problems.push(`column ${i + 1} has no name`);
    else if (seen.has(h)) problems.push(`column ${h} is named twice`);
    else if (h === '__proto__') problems.push('column __proto__ is not allowed');
    else if (h.length > 300) problems.push(`column ${i + 1} has a name longer than 300 characters`);
    else if (unsafeString(h)) problems.push(`column ${i + 1} ${unsafeString(h)}`);
    seen.add(h);
  });
  return problems;
}

/**
 * The row object of CSV cells under `header` (empty cells are absent, as an empty value in
 * `contactsData` is), or why the record cannot be one.
 */
export function csvRow(header: string[], cells: string[]): { row?: Record<string, string>; error?: string } {
  if (cells.length !== header.length) return { error: `has ${cells.length} fields; the header has ${header.length}` };
  const row: Record<string, string> = {};
  for (let i = 0; i < cells.length; i++) {
    const v = cells[i]!;
    if (v === '') continue;
    if (v.includes('\u0000')) return { error: `column ${header[i]} must not contain NUL (U+0000) characters` };
    row[header[i]!] = v;
  }
  return { row };
}
