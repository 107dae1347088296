import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../domain/errors.js';
import type { CatalogField } from '../../domain/conditions.js';
import { compileFields, compileGroupBy, compileSort, compileWhere, keysetPredicate, sqlCatalogOf, type SqlField } from '../../db/conditionSql.js';
import { compileSql } from '../../db/sqlFragments.js';

const f = (path: string, type: CatalogField['type'], sql: string, output: string[], extra: Partial<SqlField> = {}): SqlField => ({
  path, type, sql, output, filteringSupported: true, ...extra,
});
const catalog = sqlCatalogOf(
  [
    f('contact.firstName', 'string', 'c.first_name', ['firstName']),
    f('contact.emails', 'multi', 'c.emails', ['emails']),
    f('contact.createdAt', 'date', 'c.created_at', ['createdAt']),
    f('contact.customFields.n1', 'number', `(c.custom_fields->>'n1')::numeric`, ['customFields', 'n1'], { selectSql: `c.custom_fields->'n1'` }),
    f('contact.customFields.b1', 'boolean', `(c.custom_fields->>'b1')::boolean`, ['customFields', 'b1']),
    f('company.companyName', 'string', 'co.company_name', ['company', 'companyName'], { joins: ['company'] }),
    f('contact.notes', 'string', 'c.notes', ['notes'], { filteringSupported: false }),
  ],
  'c.id',
);

const where = (input: Parameters<typeof compileWhere>[1]) => compileSql(compileWhere(catalog, input).sql);

function err(fn: () => unknown): InvalidRequestError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidRequestError);
    return e as InvalidRequestError;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('compileWhere', () => {
  it('is true without conditions', () => {
    const w = compileWhere(catalog, {});
    expect(compileSql(w.sql)).toEqual({ text: 'true', values: [] });
    expect(w.joins).toEqual(new Set());
  });

  it('compiles root conditions AND-ed with a nested group into a fragment that numbers its parameters where it is placed', () => {
    const out = compileWhere(
      catalog,
      {
        conditions: [{ field: 'contact.firstName', operator: 'LIKE', value: 'jo%' }],
        groupedCondition: {
          operator: 'OR',
          conditions: [
            { field: 'company.companyName', operator: 'IN', value: ['Acme', 'Globex'] },
            { operator: 'NOT', conditions: [{ field: 'contact.customFields.n1', operator: 'BETWEEN', value: [1, '5'] }] },
          ],
        },
      },
    );
    expect(compileSql(sql`c.workspace_id = ${'w'} and c.status = ${'active'} and (${out.sql})`)).toEqual({
      text: `c.workspace_id = $1 and c.status = $2 and ((c.first_name ilike $3::text) and ((co.company_name = any($4::text[])) or (not coalesce((c.custom_fields->>'n1')::numeric between $5::numeric and $6::numeric, false))))`,
      values: ['w', 'active', 'jo%', ['Acme', 'Globex'], 1, 5],
    });
    expect([...out.joins]).toEqual(['company']);
  });

  it('compiles negative operators as NOT of the positive, so missing values match them', () => {
    expect(where({ conditions: [{ field: 'contact.firstName', operator: '!=', value: 'x' }] })).toEqual({
      text: 'not coalesce(c.first_name = $1::text, false)',
      values: ['x'],
    });
    expect(where({ conditions: [{ field: 'contact.emails', operator: 'all', value: ['a', 'b'] }] })).toEqual({ text: 'c.emails @> $1::text[]', values: [['a', 'b']] });
    expect(where({ conditions: [{ field: 'contact.firstName', operator: 'IS EMPTY' }] }).text).toBe(`(c.first_name is null or c.first_name = '')`);
    expect(where({ conditions: [{ field: 'contact.createdAt', operator: '>=', value: '2026-01-02' }] }).values).toEqual(['2026-01-02T00:00:00.000Z']);
  });

  it('binds every client value as a parameter; SQL text comes from the catalog only', () => {
    const evil = "x' or true --";
    expect(
      where({
        conditions: [
          { field: 'contact.firstName', operator: 'LIKE', value: evil },
          { field: 'contact.emails', operator: 'NOT IN', value: [evil] },
          { field: 'contact.customFields.n1', operator: 'IN', value: ['1', 2] },
        ],
      }),
    ).toEqual({
      text: `(c.first_name ilike $1::text) and (not coalesce(c.emails && $2::text[], false)) and ((c.custom_fields->>'n1')::numeric = any($3::numeric[]))`,
      values: [evil, [evil], [1, 2]],
    });
  });

  it.each([
    [{ conditions: [{ field: 'contact.nope', operator: '==', value: 'x' }] }, '/conditions/0/field'],
    [{ conditions: [{ field: 'contact.emails', operator: 'LIKE', value: 'x' }] }, '/conditions/0/operator'],
    [{ conditions: [{ field: 'contact.customFields.n1', operator: '>', value: 'abc' }] }, '/conditions/0/value'],
    [{ conditions: [{ field: 'contact.createdAt', operator: 'BETWEEN', value: ['2026-01-01', 'soon'] }] }, '/conditions/0/value/1'],
    [{ conditions: [{ field: 'contact.notes', operator: '==', value: 'x' }] }, '/conditions/0/field'],
    [{ conditions: [{ field: 'contact.firstName', operator: 'IN', value: [] }] }, '/conditions/0/value'],
    [{ conditions: [{ field: 'contact.firstName', operator: '==', value: 'x', extra: 1 }] }, '/conditions/0/extra'],
    [{ groupedCondition: { operator: 'XOR', conditions: [] } }, '/groupedCondition/operator'],
    [{ groupedCondition: { operator: 'AND', conditions: [{ field: 'contact.firstName', operator: '==', value: 'a' }, { field: 'contact.customFields.b1', operator: '>', value: true }] } }, '/groupedCondition/conditions/1/operator'],
    [{ groupedCondition: { operator: 'AND', conditions: [] } }, '/groupedCondition/conditions'],
    [{ conditions: 'x' }, '/conditions'],
  ])('rejects %j naming %s', (input, path) => {
    const e = err(() => compileWhere(catalog, input as never));
    expect(e.code).toBe('validation_failed');
    expect(e.details?.[0]?.path).toBe(path);
  });

  it('pushes NOT down to the leaves (De Morgan), keeping un-negated positive leaves bare', () => {
    const w = compileWhere(catalog, {
      groupedCondition: {
        operator: 'NOT',
        conditions: [
          { field: 'contact.firstName', operator: '==', value: 'a' },
          { operator: 'OR', conditions: [{ field: 'contact.firstName', operator: '!=', value: 'b' }, { field: 'contact.firstName', operator: 'IS EMPTY' }] },
          { operator: 'NOT', conditions: [{ field: 'contact.emails', operator: 'IN', value: ['x'] }] },
        ],
      },
    });
    // NOT(A AND (B OR C) AND NOT D) = ¬A OR (¬B AND ¬C) OR D
    expect(compileSql(w.sql).text).toBe(
      `(not coalesce(c.first_name = $1::text, false)) or ((c.first_name = $2::text) and (not (c.first_name is null or c.first_name = ''))) or (c.emails && $3::text[])`,
    );
  });

  it('turns NOT(NOT(a, b)) back into a AND b', () => {
    const a = { field: 'contact.firstName', operator: '==', value: 'a' };
    const b = { field: 'contact.emails', operator: 'IN', value: ['x'] };
    expect(where({ groupedCondition: { operator: 'NOT', conditions: [{ operator: 'NOT', conditions: [a, b] }] } }).text).toBe(
      '(c.first_name = $1::text) and (c.emails && $2::text[])',
    );
  });

  it('limits nesting depth only where the catalog states one (its schema does too)', () => {
    let g: any = { field: 'contact.firstName', operator: '==', value: 'a' };
    for (let i = 0; i < 10; i++) g = { operator: 'AND', conditions: [g] };
    // a PostgreSQL catalog: each list bounded, the depth by MAX_JSON_DEPTH and the statement timeout
    expect(() => compileWhere(catalog, { groupedCondition: g })).not.toThrow();
    const levelled = { ...catalog, treeLimits: { groupItems: [2, 2, 2] } };
    expect(err(() => compileWhere(levelled, { groupedCondition: g })).details![0]!.path).toBe('/groupedCondition/conditions/0/conditions/0/conditions/0');
  });
});

describe('compileFields', () => {
  it('nests company and custom fields and always carries id', () => {
    const p = compileFields(catalog, ['contact.firstName', 'company.companyName', 'contact.customFields.n1', 'contact.createdAt']);
    expect(compileSql(p.select).text).toBe(`c.id as "id", c.first_name as "f0", co.company_name as "f1", c.custom_fields->'n1' as "f2", c.created_at as "f3"`);
    expect([...p.joins]).toEqual(['company']);
    expect(p.shape({ id: 'x', f0: 'Jo', f1: 'Acme', f2: 4, f3: new Date('2026-11-21T17:45:00.312Z') })).toEqual({
      id: 'x',
      firstName: 'Jo',
      company: { companyName: 'Acme' },
      customFields: { n1: 4 },
      createdAt: '2026-11-21T17:45:00.312Z',
    });
  });
  it('names an unknown path', () => {
    const e = err(() => compileFields(catalog, ['contact.firstName', 'contact.bogus']));
    expect(e.details?.[0]).toEqual({ path: '/fields/1', message: 'unknown field contact.bogus' });
    expect(err(() => compileFields(catalog, [])).details?.[0]?.path).toBe('/fields');
  });
});

describe('sort and keyset', () => {
  it('orders by the keys and the id, NULL-aware', () => {
    const s = compileSort(catalog, [{ field: 'contact.firstName', direction: 'desc' }]);
    expect(compileSql(s.orderBy).text).toBe('c.first_name desc nulls first, c.id desc nulls first');
    expect(compileSql(sql`c.workspace_id = ${'w'} and (${keysetPredicate(s, ['Jo', 'id1'], 'next')})`)).toEqual({
      text: 'c.workspace_id = $1 and ((c.first_name < $2::text) or (c.first_name = $3::text and c.id < $4::uuid))',
      values: ['w', 'Jo', 'Jo', 'id1'],
    });
    expect(compileSql(keysetPredicate(s, [null, 'id1'], 'next'))).toEqual({
      text: '(c.first_name is not null) or (c.first_name is null and c.id < $1::uuid)',
      values: ['id1'],
    });
    expect(err(() => compileSort(catalog, [{ field: 'contact.emails' }])).details?.[0]?.path).toBe('/sort/0/field');
  });
  it('groups multi fields by element', () => {
    expect(compileSql(compileGroupBy(catalog, 'contact.emails').sql).text).toBe('unnest(c.emails)');
    expect(err(() => compileGroupBy(catalog, 'x')).details?.[0]?.path).toBe('/groupByField');
  });
});
