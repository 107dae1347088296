import { describe, expect, it } from 'vitest';
import { isUuid, uuidv7Pooled, uuidv7Source } from '../../domain/ids.js';

describe('uuidv7Source', () => {
  it('hands out distinct version-7 ids that sort in the order they were handed out', () => {
    const next = uuidv7Source(5000);
    const ids = Array.from({ length: 5000 }, () => next());
    expect(ids.every(isUuid)).toBe(true);
    expect(ids.every((id) => id[14] === '7' && '89ab'.includes(id[19]!))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // The first 48 bits are the time they were made.
    expect(Math.abs(parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16) - Date.now())).toBeLessThan(5000);
  });

  it('refuses to hand out more ids than it was made for', () => {
    const next = uuidv7Source(1);
    next();
    expect(() => next()).toThrow(RangeError);
  });
});

describe('uuidv7Pooled', () => {
  it('hands out distinct version-7 ids of the current time, past the end of its random pool', () => {
    const ids = Array.from({ length: 1000 }, () => uuidv7Pooled());
    expect(ids.every((id) => isUuid(id) && id[14] === '7' && '89ab'.includes(id[19]!))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(19))).size).toBe(ids.length);
    expect(Math.abs(parseInt(ids.at(-1)!.replace(/-/g, '').slice(0, 12), 16) - Date.now())).toBeLessThan(5000);
  });

  it('hands out ids that sort in the order they were made (the dataset import uses them as row ids)', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7Pooled());
    expect([...ids].sort()).toEqual(ids);
  });
});
