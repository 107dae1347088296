/** The compiler's uuid type, NOT NULL columns and exact timestamp keys (used by the post catalog). */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../domain/errors.js';
import { compileSort, compileWhere, keysetPredicate } from '../../db/conditionSql.js';
import { compileSql } from '../../db/sqlFragments.js';
import { postColumns as postCatalog } from '../../db/postColumns.js';

const ID = '0193F1B2-0000-7000-8000-000000000001';

function errorPath(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as InvalidRequestError).details?.[0]?.path;
  }
  throw new Error('expected an error');
}

describe('uuid fields and NOT NULL columns', () => {
  it('compiles id equality and lists with a uuid cast, bare predicates on NOT NULL columns', () => {
    const w = compileWhere(postCatalog, {
      conditions: [
        { field: 'providerId', operator: 'IN', value: [ID] },
        { field: 'status', operator: '!=', value: 'cancelled' },
        { field: 'parentPostId', operator: '==', value: ID },
        { field: 'scheduledTime', operator: '>=', value: '2031-01-01' },
      ],
    });
    expect(compileSql(w.sql)).toEqual({
      text: '(p.provider_id = any($1::uuid[])) and (not (p.status = $2::text)) and (p.parent_post_id = $3::uuid) and (p.scheduled_time >= $4::timestamptz)',
      values: [[ID.toLowerCase()], 'cancelled', ID.toLowerCase(), '2031-01-01T00:00:00.000Z'],
    });
  });

  it('refuses a value that is not an id and operators ids do not have', () => {
    expect(errorPath(() => compileWhere(postCatalog, { conditions: [{ field: 'providerId', operator: '==', value: 'x' }] }))).toBe('/conditions/0/value');
    expect(errorPath(() => compileWhere(postCatalog, { conditions: [{ field: 'providerId', operator: 'LIKE', value: 'x%' }] }))).toBe('/conditions/0/operator');
    expect(compileSql(compileWhere(postCatalog, { conditions: [{ field: 'parentPostId', operator: 'IS EMPTY' }] }).sql).text).toBe('p.parent_post_id is null');
  });
});

describe('timestamp sort keys', () => {
  it('reads date keys as PostgreSQL text and compares them with the original precision', () => {
    const sort = compileSort(postCatalog, [{ field: 'scheduledTime', direction: 'asc' }]);
    expect(compileSql(sort.select).text).toBe('p.scheduled_time::text as "s0", p.id::text as "s1"');
    const key = sort.keyOf({ s0: '2031-01-01 10:00:00.123456+00', s1: 'id-1' });
    expect(key).toEqual(['2031-01-01 10:00:00.123456+00', 'id-1']);
    expect(compileSql(keysetPredicate(sort, key, 'next'))).toEqual({
      text: '((p.scheduled_time > $1::timestamptz or p.scheduled_time is null)) or (p.scheduled_time = $2::timestamptz and (p.id > $3::uuid or p.id is null))',
      values: ['2031-01-01 10:00:00.123456+00', '2031-01-01 10:00:00.123456+00', 'id-1'],
    });
    expect(sort.keyOf({ s0: null, s1: 'id-2' })).toEqual([null, 'id-2']);
  });
});
