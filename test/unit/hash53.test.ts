import { describe, expect, it } from 'vitest';
import { hash53, packHashes, unpackHashes } from '../../domain/hash53.js';

describe('hash53', () => {
  it('is a deterministic safe integer that differs across 200,000 distinct keys', () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => [`person${i}@company${i % 5000}.example.com`, `p:pronet.com/in/person-${i.toString(36)}`]).flat();
    const seen = new Set<number>();
    for (const k of keys) {
      const h = hash53(k);
      expect(Number.isSafeInteger(h) && h >= 0).toBe(true);
      seen.add(h);
    }
    expect(seen.size).toBe(keys.length);
    expect(hash53('a@b.com')).toBe(hash53('a@b.com'));
    expect(hash53('a@b.com')).not.toBe(hash53('a@b.con'));
    expect(hash53('Zoë 東京 🚀')).not.toBe(hash53('Zoe 東京 🚀'));
  });

  it('packs and unpacks exactly, from unaligned buffers too', () => {
    const keys = ['x', 'y', 'k:with\nnewline', ''];
    const packed = packHashes(keys);
    expect(packed.length).toBe(32);
    const unaligned = Buffer.concat([Buffer.from([1]), packed]).subarray(1);
    expect([...unpackHashes(unaligned)]).toEqual(keys.map((k) => hash53(k)));
  });
});
