import { describe, expect, it } from 'vitest';
import { ApiError } from '../../domain/errors.js';
import { compilePostConditions, keyset, operatorsFor } from '../../domain/postFilters.js';

function binder() {
  const params: unknown[] = [];
  const bind = (v: unknown, cast?: string) => {
    params.push(v);
    return `$${params.length}${cast ? `::${cast}` : ''}`;
  };
  return { params, bind };
}

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('expected an error');
}

describe('post filter conditions', () => {
  it('compiles equality, lists, ranges and emptiness', () => {
    const { params, bind } = binder();
    const id = '0193f1b2-0000-7000-8000-000000000001';
    const sql = compilePostConditions(
      [
        { field: 'status', operator: '==', value: 'draft' },
        { field: 'providerId', operator: 'IN', value: [id] },
        { field: 'scheduledTime', operator: 'BETWEEN', value: ['2026-11-21T00:00:00Z', '2026-11-22T00:00:00.000Z'] },
        { field: 'scheduledTime', operator: '>=', value: '2026-11-21' },
        { field: 'parentPostId', operator: 'IS EMPTY' },
        { field: 'status', operator: 'NOT IN', value: ['cancelled'] },
        { field: 'parentPostId', operator: '!=', value: id },
      ],
      bind,
    );
    expect(sql).toEqual([
      'status = $1::text',
      'provider_id = any($2::uuid[])',
      "coalesce(scheduled_time, 'infinity'::timestamptz) between $3::timestamptz and $4::timestamptz",
      "coalesce(scheduled_time, 'infinity'::timestamptz) >= $5::timestamptz and scheduled_time is not null",
      'parent_post_id is null',
      'not (status = any($6::text[]))',
      '(parent_post_id is null or parent_post_id <> $7::uuid)',
    ]);
    expect(params).toEqual(['draft', [id], '2026-11-21T00:00:00.000Z', '2026-11-22T00:00:00.000Z', '2026-11-21T00:00:00.000Z', ['cancelled'], id]);
  });

  it('names the bad entry', () => {
    const { bind } = binder();
    expect(errorOf(() => compilePostConditions([{ field: 'content', operator: '==', value: 'x' }], bind)).details?.[0]?.path).toBe('/conditions/0/field');
    expect(errorOf(() => compilePostConditions([{ field: 'status', operator: '>', value: 'draft' }], bind)).details?.[0]?.path).toBe('/conditions/0/operator');
    expect(errorOf(() => compilePostConditions([{ field: 'status', operator: '==', value: 'x' }], bind)).details?.[0]?.path).toBe('/conditions/0/value');
    expect(
      errorOf(() => compilePostConditions([{ field: 'status', operator: '==', value: 'draft' }, { field: 'providerId', operator: 'IN', value: ['nope'] }], bind)).details?.[0]?.path,
    ).toBe('/conditions/1/value/0');
    expect(errorOf(() => compilePostConditions([{ field: 'scheduledTime', operator: 'BETWEEN', value: ['2026-01-01'] }], bind)).details?.[0]?.path).toBe('/conditions/0/value');
    expect(errorOf(() => compilePostConditions([{ field: 'createdAt', operator: '<', value: 'yesterday' }], bind)).status).toBe(400);
  });

  it('lists operators per field type', () => {
    expect(operatorsFor('scheduledTime')).toContain('BETWEEN');
    expect(operatorsFor('scheduledTime')).toContain('IS EMPTY');
    expect(operatorsFor('status')).not.toContain('>');
    expect(operatorsFor('createdAt')).not.toContain('IS EMPTY');
  });
});

describe('post keyset', () => {
  it('orders by the sort keys then id, with a boundary after the given row', () => {
    const { params, bind } = binder();
    const k = keyset([{ field: 'scheduledTime', direction: 'desc' }], ['2026-11-21 10:00:00+00', 'id-1'], false, bind);
    expect(k.orderBy).toBe("coalesce(scheduled_time, 'infinity'::timestamptz) desc, id desc");
    expect(k.boundary).toBe(
      "((coalesce(scheduled_time, 'infinity'::timestamptz) < $1::timestamptz) or (coalesce(scheduled_time, 'infinity'::timestamptz) = $1::timestamptz and id < $2::uuid))",
    );
    expect(params).toEqual(['2026-11-21 10:00:00+00', 'id-1']);
  });

  it('reverses for the previous page and defaults to id order', () => {
    const { bind } = binder();
    expect(keyset([], undefined, false, bind).orderBy).toBe('id asc');
    expect(keyset([{ field: 'createdAt', direction: 'asc' }], ['t', 'i'], true, bind).boundary).toBe('((created_at < $1::timestamptz) or (created_at = $1::timestamptz and id < $2::uuid))');
  });

  it('refuses a token of another shape', () => {
    const { bind } = binder();
    expect(errorOf(() => keyset([{ field: 'createdAt', direction: 'asc' }], ['only-one'], false, bind)).details?.[0]?.path).toBe('/paginationToken');
  });
});
