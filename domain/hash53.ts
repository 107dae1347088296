/**
 * A fast 53-bit string hash (cyrb53, public domain): two 32-bit multiply-xorshift lanes combined
 * into one safe integer. Not cryptographic; for set membership where equal strings must hash
 * equal and a collision (one pair in about 9·10^15) may only cost a redundant retry.
 */
export function hash53(s: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The hashes of `keys`, packed as float64 (8 bytes each, exact for 53-bit integers). */
export function packHashes(keys: string[]): Buffer {
  const out = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) out[i] = hash53(keys[i]!);
  return Buffer.from(out.buffer);
}

/** The hashes packed by packHashes. */
export function unpackHashes(packed: Uint8Array): Float64Array {
  // Copied: a Buffer's bytes need not be 8-byte aligned.
  return new Float64Array(packed.buffer.slice(packed.byteOffset, packed.byteOffset + packed.byteLength));
}
