/**
 * What a 400 says when a value fails a union (anyOf) schema: ajv reports every branch, and the
 * first line used to be the first branch's type error whatever the value was.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.js';
import { FilterContactsBody } from '../../api/schemas/contacts.js';
import { FilterIntegrationsBody } from '../../api/schemas/integrations.js';
import { CreateCustomFieldBody } from '../../api/schemas/schema.js';
import { CUSTOM_FIELD_TYPES } from '../../domain/contactCatalog.js';
import { validate } from '../../api/validation.js';
import { Type } from '@sinclair/typebox';

function refusal(body: unknown): ApiError {
  try {
    validate(FilterContactsBody, body, 'body');
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected a 400');
}
const condition = (operator: string, value: unknown) => ({ limit: 1, conditions: [{ field: 'contact.firstName', operator, value }] });

describe('union (anyOf) errors name what is wrong with the value given', () => {
  it('an IN list one past the limit: the limit, not "must be string"', () => {
    // Found by an outside client: 1001 values answered "/conditions/0/value must be string".
    const e = refusal(condition('IN', Array.from({ length: 1001 }, (_, i) => `v${i}`)));
    expect(e.message).toBe('Request body is invalid: /conditions/0/value must NOT have more than 1000 items');
    expect(e.details).toEqual([{ path: '/conditions/0/value', message: 'must NOT have more than 1000 items' }]);
  });

  it('each bad element of a long list is named once, by its own index (value/1 is not value/10)', () => {
    const e = refusal(condition('IN', Array.from({ length: 12 }, () => ({}))));
    expect(e.details).toEqual(Array.from({ length: 12 }, (_, i) => ({ path: `/conditions/0/value/${i}`, message: 'must be string or number' })));
  });

  it('thousands of bad elements are narrowed in time linear in the errors (the fuzzer found 19 s for one request, seed 610260508)', () => {
    // A 273 KB body of objects in an IN list held the API's event loop for 19 s: each union's
    // branch errors were looked up among all errors (3,000 elements: 13.5 s here). The bound is
    // generous; the point is the order of growth.
    const started = performance.now();
    const e = refusal({ fields: [true], groupedCondition: { operator: 'OR', conditions: [{ field: 'contact.firstName', operator: 'IN', value: Array.from({ length: 1000 }, () => ({ k: { a: 1 } })) }] } });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(e.details!.filter((d) => d.path.startsWith('/groupedCondition/conditions/0/value/'))).toHaveLength(1000);
  });

  // contact.firstName is a string field: its values are strings or numbers (api/schemas/conditions.ts)
  it('a value of no allowed type: one line listing the types', () => {
    const e = refusal(condition('==', { a: 1 }));
    expect(e.details).toEqual([{ path: '/conditions/0/value', message: 'must be string or number' }]);
  });

  it('a list with a bad element: the element, with the types an element may have', () => {
    const e = refusal(condition('IN', ['a', {}]));
    expect(e.details).toEqual([{ path: '/conditions/0/value/1', message: 'must be string or number' }]);
  });

  it('a union of literals still reads as one "must be one of" line: the operators of the field, each once', () => {
    const e = refusal(condition('LIKEX', 'a'));
    expect(e.details).toEqual([
      { path: '/conditions/0/operator', message: 'must be one of "==", "!=", "IN", "NOT IN", "LIKE", "NOT LIKE", "IS EMPTY", "IS NOT EMPTY"' },
    ]);
  });

  it('an operator the field does not take names the operator, not the field (the field is known)', () => {
    // With one branch per field type, `contact.emails LIKE` was answered "/conditions/0/field must
    // be one of <the fields that take LIKE>", and `contact.createdAt > "yesterday"` added the
    // custom-field path pattern to the value's error.
    expect(refusal({ conditions: [{ field: 'contact.emails', operator: 'LIKE', value: 'x' }] }).details).toEqual([
      { path: '/conditions/0/operator', message: 'must be one of "IN", "ALL", "NOT IN", "IS EMPTY", "IS NOT EMPTY"' },
    ]);
    expect(refusal({ conditions: [{ field: 'contact.createdAt', operator: '>', value: 'yesterday' }] }).details!.map((d) => d.path)).toEqual(['/conditions/0/value']);
    const custom = 'contact.customFields.0190c0de-0000-7000-8000-000000000001';
    expect(refusal({ conditions: [{ field: custom, operator: 'LIKEX' }] }).details!.map((d) => d.path)).toEqual(['/conditions/0/operator']);
    // a field no branch has: the field, with the fields that take the operator
    expect(refusal({ conditions: [{ field: 'contact.nope', operator: 'LIKE', value: 'x' }] }).details!.map((d) => d.path)).toEqual(['/conditions/0/field', '/conditions/0/field']);
  });
});

describe('numbers in query strings', () => {
  const Query = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000 }) });
  const coerced = (limit: string) => {
    const q: Record<string, unknown> = { limit };
    validate(Query, q, 'query');
    return q.limit;
  };

  it('are read in decimal notation only, as in bodies', () => {
    // Found in review: ajv's coercion read ?limit=0x10 as 16 (it compares with `+x`).
    for (const v of ['0x10', '0b11', '0o7', 'Infinity']) {
      expect(() => coerced(v), v).toThrow(ApiError);
      try {
        coerced(v);
      } catch (e) {
        expect((e as ApiError).details).toEqual([{ path: '/query/limit', message: 'must be a number in decimal notation' }]);
      }
    }
    expect(coerced('16')).toBe(16);
    expect(coerced('1e2')).toBe(100);
  });
});

describe('a union of objects told apart by literal properties (IntegrationCondition)', () => {
  const refused = (condition: unknown) => {
    try {
      validate(FilterIntegrationsBody, { conditions: [condition] }, 'body');
    } catch (e) {
      return (e as ApiError).details;
    }
    throw new Error('expected a 400');
  };

  it('reports the branch whose literals match: IN with a string', () => {
    expect(refused({ field: 'name', operator: 'IN', value: 'a' })).toEqual([{ path: '/conditions/0/value', message: 'must be array' }]);
  });

  it('reports the element of the list, not the list', () => {
    expect(refused({ field: 'provider', operator: 'IN', value: ['pronet', 'fax'] })).toEqual([
      { path: '/conditions/0/value/1', message: 'must be one of "microblog", "pronet", "pronetPage"' },
    ]);
  });

  it('a literal no branch has: one "must be one of" line, nothing about the other properties', () => {
    expect(refused({ field: 'nope', operator: '==', value: 'x' })).toEqual([
      { path: '/conditions/0/field', message: 'must be one of "provider", "externalAccountId", "name"' },
    ]);
    expect(refused({ field: 'name', operator: 'LIKE', value: 'x' })).toEqual([{ path: '/conditions/0/operator', message: 'must be one of "==", "IN"' }]);
  });

  it('a missing literal is "is required"; a non-object one "must be object"', () => {
    expect(refused({ field: 'name', value: 'x' })).toEqual([{ path: '/conditions/0/operator', message: 'is required' }]);
    expect(refused('x')).toEqual([{ path: '/conditions/0', message: 'must be object' }]);
  });
});

describe('a custom field body: a union keyed by `type` (CreateCustomFieldBody)', () => {
  const details = (body: unknown) => {
    try {
      validate(CreateCustomFieldBody, body, 'body');
      return [];
    } catch (e) {
      return (e as ApiError).details;
    }
  };

  it('takes every custom field type', () => {
    for (const type of CUSTOM_FIELD_TYPES) expect(details({ label: 'L', type }), type).toEqual([]);
  });

  it('options of a type without a pick list: "only allowed when", not "not a known property"', () => {
    expect(details({ label: 'L', type: 'boolean', options: [] })).toEqual([{ path: '/options', message: 'is only allowed when type is "string", "number" or "multi"' }]);
    expect(details({ label: 'L', type: 'boolean', other: 1 })).toEqual([{ path: '/other', message: 'is not a known property' }]);
  });

  it('an option value of the wrong type names the value', () => {
    expect(details({ label: 'L', type: 'number', options: [{ label: 'a', value: 1 }, { label: 'b', value: 'b' }] })).toEqual([{ path: '/options/1/value', message: 'must be number' }]);
    expect(details({ label: 'L', type: 'multi', options: [{ label: 'a', value: 1 }] })).toEqual([{ path: '/options/0/value', message: 'must be string' }]);
  });
});
