/**
 * Issue 11 input rules as pure functions: the LIKE helpers, calendar-checked dates, the condition
 * compiler's caps and numeric bounds, and the empty-post rule.
 */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../domain/errors.js';
import { LIMITS, scalarValue, type CatalogField } from '../../domain/conditions.js';
import { compileWhere, sqlCatalogOf, type SqlField } from '../../db/conditionSql.js';
import { compileSql } from '../../db/sqlFragments.js';
import { parseIsoDate } from '../../domain/dates.js';
import { escapeLike, likeContains, likeHasWildcard, likePatternProblem, likePrefix } from '../../domain/like.js';
import { emptyContentProblem } from '../../domain/publishing.js';

const f = (path: string, type: CatalogField['type'], sql: string, extra: Partial<SqlField> = {}): SqlField => ({
  path, type, sql, output: [path], filteringSupported: true, ...extra,
});
const catalog = sqlCatalogOf(
  [f('name', 'string', 'c.name'), f('n', 'number', 'c.n'), f('i', 'number', 'c.i', { cast: 'int' }), f('at', 'date', 'c.at'), f('id2', 'uuid', 'c.id2')],
  'c.id',
);

function err(fn: () => unknown): InvalidRequestError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidRequestError);
    return e as InvalidRequestError;
  }
  throw new Error('expected an InvalidRequestError');
}
const pathOf = (fn: () => unknown) => err(fn).details![0]!.path;

describe('LIKE helpers', () => {
  it('escape text so it matches itself', () => {
    expect(escapeLike('50%_off\\')).toBe('50\\%\\_off\\\\');
    expect(likeContains('a\\')).toBe('%a\\\\%');
    expect(likePrefix('x_')).toBe('x\\_%');
  });
  it('refuse patterns ending in a single escape character only', () => {
    expect(likePatternProblem('abc\\')).toMatch(/backslash/);
    expect(likePatternProblem('\\\\\\')).toMatch(/backslash/);
    expect(likePatternProblem('abc\\\\')).toBeNull();
    expect(likePatternProblem('%a\\%')).toBeNull();
  });
  it('tell wildcards from escaped ones', () => {
    expect(likeHasWildcard('a%')).toBe(true);
    expect(likeHasWildcard('a\\%')).toBe(false);
    expect(likeHasWildcard('a\\\\%')).toBe(true);
    expect(likeHasWildcard('_')).toBe(true);
  });
});

describe('parseIsoDate', () => {
  it('refuses moments that do not exist instead of rolling them over', () => {
    for (const s of ['2026-02-30', '2026-02-29T00:00:00Z', '2026-04-31', '2026-00-10', '2026-13-01', '2026-01-01T24:00:00Z', '2026-01-01T10:60:00Z', '2026-01-01T10:00:60Z', '2026-01-01T10:00:00+24:00'])
      expect(parseIsoDate(s), s).toBeNull();
  });
  it('accepts real dates, leap days and offsets', () => {
    expect(parseIsoDate('2028-02-29')?.toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(parseIsoDate('2026-11-21T17:45:00.312Z')?.toISOString()).toBe('2026-11-21T17:45:00.312Z');
    expect(parseIsoDate('2026-11-21T19:45:00+02:00')?.toISOString()).toBe('2026-11-21T17:45:00.000Z');
  });
  it('requireZone demands a time with a zone', () => {
    expect(parseIsoDate('2026-11-21', { requireZone: true })).toBeNull();
    expect(parseIsoDate('2026-11-21T10:00', { requireZone: true })).toBeNull();
    expect(parseIsoDate('2026-11-21T10:00Z', { requireZone: true })).not.toBeNull();
  });
  it('refuses non-strings and garbage', () => {
    for (const v of [null, 1, '', 'tomorrow', '2026-1-1', `2026-01-01T10:00:00.${'1'.repeat(50)}Z`]) expect(parseIsoDate(v)).toBeNull();
  });
  it('keeps to the years 0001 to 9999 (UTC): PostgreSQL has no year 0 and reads none of the extended years', () => {
    // year 0000 used to pass, be stored as "0000-01-01T00:00:00.000Z" and break every query on it
    for (const s of ['0000-01-01', '0000-12-31T23:59:59Z', '0000-02-29', '0001-01-01T00:30:00+01:00', '9999-12-31T23:00:00-05:00', '-000001-01-01', '+010000-01-01'])
      expect(parseIsoDate(s), s).toBeNull();
    expect(parseIsoDate('0001-01-01')?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    // the range is of the instant: an offset may carry a written year 0000 into 0001 (UTC)
    expect(parseIsoDate('0000-12-31T23:30:00-01:00')?.toISOString()).toBe('0001-01-01T00:30:00.000Z');
    expect(parseIsoDate('9999-12-31T23:59:59.999Z')?.toISOString()).toBe('9999-12-31T23:59:59.999Z');
  });
});

describe('condition compiler limits', () => {
  const leaf = (i: number) => ({ field: 'name', operator: '==', value: `v${i}` });
  it(`caps leaves at ${LIMITS.maxLeaves}, naming the first leaf over`, () => {
    expect(() => compileWhere(catalog, { conditions: Array.from({ length: LIMITS.maxLeaves }, (_, i) => leaf(i)) })).not.toThrow();
    expect(pathOf(() => compileWhere(catalog, { conditions: Array.from({ length: LIMITS.maxLeaves + 1 }, (_, i) => leaf(i)) }))).toBe(`/conditions/${LIMITS.maxLeaves}`);
  });
  it('bounds each list, as its schema\'s maxItems, not the query\'s totals, LIKEs or depth', () => {
    // issue 27 item 21: one root condition beside a group of 100 was refused although every list
    // held ≤ 100, and so were 11 LIKEs and groups 9 deep: totals no schema states
    const like = (i: number) => ({ field: 'name', operator: i % 2 ? 'LIKE' : 'NOT LIKE', value: `%${i}%` });
    const full = Array.from({ length: LIMITS.maxLeaves }, (_, i) => like(i));
    let deep: object = { operator: 'AND', conditions: [leaf(0), leaf(1)] };
    for (let d = 0; d < 10; d++) deep = { operator: d % 2 ? 'AND' : 'OR', conditions: [leaf(d), deep] };
    const input = { conditions: [leaf(0)], groupedCondition: { operator: 'AND', conditions: [{ operator: 'OR', conditions: full }, deep] } };
    expect(() => compileWhere(catalog, input)).not.toThrow();
    expect(pathOf(() => compileWhere(catalog, { groupedCondition: { operator: 'OR', conditions: [...full, leaf(0)] } }))).toBe(`/groupedCondition/conditions/${LIMITS.maxLeaves}`);
    expect(pathOf(() => compileWhere(catalog, { conditions: [...full, leaf(0)] }))).toBe(`/conditions/${LIMITS.maxLeaves}`);
  });
  it('refuses a LIKE pattern ending in a single backslash', () => {
    expect(pathOf(() => compileWhere(catalog, { conditions: [{ field: 'name', operator: 'LIKE', value: 'x\\' }] }))).toBe('/conditions/0/value');
    expect(compileSql(compileWhere(catalog, { conditions: [{ field: 'name', operator: 'LIKE', value: 'x\\\\' }] }).sql).values).toEqual(['x\\\\']);
  });
  it('bounds numbers by the operand type', () => {
    expect(() => scalarValue('number', 1e300, '/v')).toThrow(InvalidRequestError);
    expect(() => scalarValue('number', '1e400', '/v')).toThrow(InvalidRequestError);
    expect(() => scalarValue('number', 'NaN', '/v')).toThrow(InvalidRequestError);
    expect(scalarValue('number', '12.5', '/v')).toBe(12.5);
    // numeric strings are decimal notation: JavaScript's Number() also reads hex, binary and octal
    for (const v of ['0x10', '0X10', '0b11', '0o7', '-0x10', '', ' ', 'Infinity', '-Infinity', '1e400', '1_000', '12px'])
      expect(() => scalarValue('number', v, '/v'), JSON.stringify(v)).toThrow(InvalidRequestError);
    expect(scalarValue('number', ' 16 ', '/v')).toBe(16);
    expect(scalarValue('number', '-3.5', '/v')).toBe(-3.5);
    expect(scalarValue('number', '+.5', '/v')).toBe(0.5);
    expect(scalarValue('number', '1e3', '/v')).toBe(1000);
    expect(scalarValue('number', '010', '/v')).toBe(10);
    expect(pathOf(() => compileWhere(catalog, { conditions: [{ field: 'n', operator: 'IN', value: ['1', '0x10'] }] }))).toBe('/conditions/0/value/1');
    expect(pathOf(() => compileWhere(catalog, { conditions: [{ field: 'i', operator: '>', value: 2147483648 }] }))).toBe('/conditions/0/value');
    expect(pathOf(() => compileWhere(catalog, { conditions: [{ field: 'i', operator: 'IN', value: [1, 1.5] }] }))).toBe('/conditions/0/value/1');
    expect(compileSql(compileWhere(catalog, { conditions: [{ field: 'i', operator: '>', value: 2147483647 }] }).sql).values).toEqual([2147483647]);
  });
  it('dates must exist; ids must be UUIDs', () => {
    expect(pathOf(() => compileWhere(catalog, { conditions: [{ field: 'at', operator: 'BETWEEN', value: ['2026-01-01', '2026-02-30'] }] }))).toBe('/conditions/0/value/1');
    const year0 = err(() => compileWhere(catalog, { conditions: [{ field: 'at', operator: '>', value: '0000-01-01' }] }));
    expect(year0.details).toEqual([{ path: '/conditions/0/value', message: expect.stringMatching(/0001 to 9999/) }]);
    expect(pathOf(() => compileWhere(catalog, { conditions: [{ field: 'id2', operator: '==', value: '-'.repeat(36) }] }))).toBe('/conditions/0/value');
  });
});

describe('emptyContentProblem', () => {
  it('refuses a post or thread item with neither text nor media', () => {
    expect(emptyContentProblem({ content: '  ', media: [], threadItems: [] })).toMatch(/no content and no media/);
    expect(emptyContentProblem({ content: 'hi', media: [], threadItems: [{ content: ' ' }] })).toMatch(/thread item 0/);
    expect(emptyContentProblem({ content: '', media: [{ fileName: 'a.png' }], threadItems: [] })).toBeNull();
    expect(emptyContentProblem({ content: 'hi', media: [], threadItems: [{ content: '', media: [{ fileName: 'a.png' }] }] })).toBeNull();
  });
});
