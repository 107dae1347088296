/**
 * A request body the server refuses when absent is `required` in the OpenAPI document (issue 27
 * item 21): `PATCH /v1/posts/{id}` without a body answered 400 "must NOT have fewer than 1
 * properties" while the document let the body out.
 */
import { describe, expect, it } from 'vitest';
import { bodyRequired } from '../../api/openapi.js';
import { UpdatePostBody } from '../../api/schemas/posts.js';
import { PatchContactBody } from '../../api/schemas/contacts.js';
import { Type } from '@sinclair/typebox';

describe('OpenAPI requestBody.required', () => {
  it('is true for a partial update that needs at least one property', () => {
    expect(bodyRequired(UpdatePostBody)).toBe(true);
    expect(bodyRequired(PatchContactBody)).toBe(true);
  });
  it('is true for a body of alternatives, false for an object of optional properties', () => {
    expect(bodyRequired(Type.Object({ a: Type.Optional(Type.String()) }, { anyOf: [{ required: ['a'] }] }))).toBe(true);
    expect(bodyRequired(Type.Object({ a: Type.Optional(Type.String()) }))).toBe(false);
  });
});
