import { describe, expect, it } from 'vitest';
import { isUuid, uuidv7Pooled } from '../../domain/ids.js';

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
