/**
 * Contacts-file records (domain/contactFile.ts): the byte offset after each record is exact
 * whatever the stream's chunking, so a reader resumed at any record end reads the same rest;
 * malformed records are items, never the end of the file; the type sniffing.
 */
import { describe, expect, it } from 'vitest';
import { csvRecords, csvRow, headerProblems, jsonLineRecords, MAX_RECORD_BYTES, sniffContactFile, type RawRecord } from '../../domain/contactFile.js';

async function* chunked(b: Buffer, size: number) {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}
async function all(gen: AsyncGenerator<RawRecord>): Promise<RawRecord[]> {
  const out: RawRecord[] = [];
  for await (const r of gen) out.push(r);
  return out;
}
const CSV = Buffer.from('\uFEFFa,b\r\n1,"é, y"\r\n2,"multi\r\nline ""q"""\n3,4,5\n"bad"x,9\n\n6,7\n8,"open\n9,10\n11,12');

describe('csvRecords', () => {
  it('gives cells and exact end offsets whatever the chunking; a refused record ends with its first line', async () => {
    const expected = [
      { cells: ['a', 'b'], end: 8 },
      { cells: ['1', 'é, y'], end: 19 },
      { cells: ['2', 'multi\r\nline "q"'], end: 41 },
      { cells: ['3', '4', '5'], end: 47 },
      { error: expect.stringMatching(/a quoted field is followed by/), end: 56 },
      { cells: ['6', '7'], end: 61 },
      { error: expect.stringMatching(/^is not a well-formed CSV record/), end: 69 },
      { cells: ['9', '10'], end: 74 },
      { cells: ['11', '12'], end: 79 },
    ];
    for (const size of [1, 2, 7, 1000]) expect(await all(csvRecords(chunked(CSV, size), 0))).toEqual(expected);
    // Resumed at any record end, the rest is the same.
    for (const r of expected) {
      const rest = await all(csvRecords(chunked(CSV.subarray(r.end), 5), r.end));
      expect(rest).toEqual(expected.filter((x) => x.end > r.end));
    }
  });

  it('refuses a record over the size limit and goes on', async () => {
    const long = Buffer.concat([Buffer.from('a,b\n"'), Buffer.alloc(MAX_RECORD_BYTES + 10, 'x'), Buffer.from('"\n1,2\n')]);
    const rs = await all(csvRecords(chunked(long, 64 * 1024), 0));
    expect(rs.map((r) => r.cells ?? r.error)).toEqual([['a', 'b'], expect.stringMatching(/longer than/), ['1', '2']]);
    expect(rs.at(-1)!.end).toBe(long.length);
  });

  it('turns cells into rows under the header; wrong counts and NUL are row errors', () => {
    expect(csvRow(['a', 'b'], ['1', ''])).toEqual({ row: { a: '1' } });
    expect(csvRow(['a', 'b'], ['1'])).toEqual({ error: 'has 1 fields; the header has 2' });
    expect(csvRow(['a', 'b'], ['1', 'x\u0000'])).toEqual({ error: 'column b must not contain NUL (U+0000) characters' });
    expect(headerProblems(['a', 'a', '', '__proto__'])).toEqual(['column a is named twice', 'column 3 has no name', 'column __proto__ is not allowed']);
  });
});

describe('jsonLineRecords', () => {
  it('gives one object per line with exact ends; malformed lines are errors; blank lines are no records', async () => {
    const file = Buffer.from('\uFEFF{"a":1}\n\n{"b":"x\\u0000"}\n[1]\nnot json\n{"c":"é"}\r\n{"d":2}');
    const expected = [
      { row: { a: 1 }, end: 11 },
      { error: '/b must not contain NUL (U+0000) characters', end: 28 },
      { error: 'is not a JSON object', end: 32 },
      { error: expect.stringMatching(/^is not valid JSON/), end: 41 },
      { row: { c: 'é' }, end: 53 },
      { row: { d: 2 }, end: 60 },
    ];
    for (const size of [1, 3, 1000]) expect(await all(jsonLineRecords(chunked(file, size), 0))).toEqual(expected);
    expect(await all(jsonLineRecords(chunked(file.subarray(32), 4), 32))).toEqual(expected.slice(3));
  });

  it('refuses a line over the size limit and goes on', async () => {
    const file = Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(MAX_RECORD_BYTES, 'x'), Buffer.from('"}\n{"b":1}\n')]);
    const rs = await all(jsonLineRecords(chunked(file, 64 * 1024), 0));
    expect(rs).toEqual([{ error: `is longer than ${MAX_RECORD_BYTES} bytes`, end: file.length - 8 }, { row: { b: 1 }, end: file.length }]);
  });
});

describe('bytes that are not UTF-8', () => {
  // Found by an outside client's report: the upload checks the first 4,100 bytes only, and the
  // records after were decoded leniently, storing U+FFFD in place of the bad bytes.
  const latin1 = Buffer.from([0x52, 0x65, 0x6e, 0xe9]); // "René" in ISO-8859-1

  it('make that JSON Lines record a row error; the others are read', async () => {
    const file = Buffer.concat([Buffer.from('{"a":"x"}\n{"a":"'), latin1, Buffer.from('"}\n{"a":"\uFFFD ok"}\n')]);
    const rs = await all(jsonLineRecords(chunked(file, 3), 0));
    expect(rs.map((r) => r.row ?? r.error)).toEqual([{ a: 'x' }, 'is not valid UTF-8 (bytes in another encoding)', { a: '\uFFFD ok' }]);
    expect(rs.at(-1)!.end).toBe(file.length);
  });

  it('make that CSV record a row error; the others are read', async () => {
    const file = Buffer.concat([Buffer.from('a,b\n1,x\n2,'), latin1, Buffer.from('\n3,"\uFFFD ok"\n')]);
    for (const size of [1, 4, 1000]) {
      const rs = await all(csvRecords(chunked(file, size), 0));
      expect(rs.map((r) => r.cells ?? r.error)).toEqual([['a', 'b'], ['1', 'x'], 'is not valid UTF-8 (bytes in another encoding)', ['3', '\uFFFD ok']]);
      expect(rs.map((r) => r.end)).toEqual([4, 8, 15, file.length]);
    }
  });
});

describe('sniffContactFile', () => {
  const sniff = (s: string | Buffer, complete = true) => sniffContactFile(typeof s === 'string' ? Buffer.from(s) : s, complete);
  it('knows CSV and JSON Lines by content, and refuses binary, markup, JSON documents and lone text', () => {
    expect(sniff('\uFEFFFirst Name,Email\r\nA,a@x.com\r\n')).toBe('text/csv');
    expect(sniff('a,b\n1,"x\ny"\n')).toBe('text/csv');
    expect(sniff('{"a":1}\n{"a":2}\n')).toBe('application/x-ndjson');
    expect(sniff('{"a":' + ' '.repeat(5000), false)).toBe('application/x-ndjson'); // first line longer than the head
    expect(sniff('a,b\n1,2,3\n')).toBeUndefined();
    expect(sniff('just some text, not a table')).toBeUndefined();
    expect(sniff('{\n "a": 1\n}')).toBeUndefined();
    expect(sniff('[{"a":1}]')).toBeUndefined();
    expect(sniff('<html><body>a,b\n1,2</body></html>')).toBeUndefined();
    expect(sniff(Buffer.from([0x61, 0x2c, 0x62, 0x0a, 0x00, 0x2c, 0x01, 0x0a]))).toBeUndefined();
    expect(sniff(Buffer.from([0x61, 0x2c, 0x62, 0x0a, 0xff, 0x2c, 0x31, 0x0a]))).toBeUndefined(); // not UTF-8
    // A character cut at the end of an incomplete head is fine.
    expect(sniff(Buffer.from('a,b\n1,é\n2,é').subarray(0, 14), false)).toBe('text/csv');
  });
});
