/**
 * Body rules the handlers apply, now carried by the published schemas (issue 27 item 21:
 * schemathesis positive_data_acceptance found each of these answered 400 to a schema-valid body).
 */
import { describe, expect, it } from 'vitest';
import type { TSchema } from '@sinclair/typebox';
import { validate } from '../../api/validation.js';
import { BulkUpsertBody } from '../../api/schemas/contacts.js';
import { ErasureRequestBody } from '../../api/schemas/privacy.js';
import { AccessRequestBody } from '../../api/schemas/subjectAccess.js';

/** The server's own validation (ajv, as requests get it): true when the body passes. */
const valid = (schema: TSchema, body: unknown) => {
  try {
    validate(schema, body, 'body');
    return true;
  } catch {
    return false;
  }
};

describe('selection rules in the schemas', () => {
  it('bulk upsert: at least one row, or a file', () => {
    expect(valid(BulkUpsertBody, { contactsData: [] })).toBe(false);
    expect(valid(BulkUpsertBody, { contactsData: [{ 'contact.firstName': 'Ada' }] })).toBe(true);
    expect(valid(BulkUpsertBody, { contactsData: [], contactsFile: { fileName: 'f.csv' } })).toBe(true);
  });
  it('erasure and access requests name the person', () => {
    for (const schema of [ErasureRequestBody, AccessRequestBody]) {
      expect(valid(schema, {})).toBe(false);
      expect(valid(schema, { emails: [] })).toBe(false);
      expect(valid(schema, { profileUrls: ['https://pronet.example/in/ada'] })).toBe(true);
    }
  });
});
