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
import { ExternalReplyBody } from '../../api/schemas/publishing.js';
import { parsePronetPostUrl } from '../../domain/pronetUrls.js';

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
    // Rows and a file together: the handler refuses it, so the schema does.
    expect(valid(BulkUpsertBody, { contactsData: [{ 'contact.firstName': 'Ada' }], contactsFile: { fileName: 'f.csv' } })).toBe(false);
  });
  it('scheduled times and external post URLs have the shapes the handlers take', () => {
    const row = (scheduledTime: string) => ({ externalPostUrl: 'urn:li:activity:7', content: 'Hi', scheduledTime, providerId: 'x' });
    expect(valid(ExternalReplyBody, row('2030-01-02T03:04:05Z'))).toBe(true);
    expect(valid(ExternalReplyBody, row('string'))).toBe(false);
    expect(valid(ExternalReplyBody, row('2030-01-02T03:04:05'))).toBe(false); // no zone
    const url = (externalPostUrl: string) => ({ externalPostUrl, content: 'Hi', scheduledTime: '2030-01-02T03:04:05Z', providerId: 'x' });
    for (const u of ['string', 'https://example.com/posts/a-activity-1', 'urn:li:person:1']) expect(valid(ExternalReplyBody, url(u)), u).toBe(false);
    for (const u of [
      'urn:li:ugcPost:123',
      'https://www.linkedin.com/feed/update/urn:li:activity:123/',
      'https://www.linkedin.com/feed/update/urn%3Ali%3Ashare%3A9',
      'https://linkedin.com/posts/ada_slug-activity-42-AbCd?utm_source=x',
    ]) {
      expect(valid(ExternalReplyBody, url(u)), u).toBe(true);
      expect(parsePronetPostUrl(u), u).not.toBeNull();
    }
  });
  it('erasure and access requests name the person', () => {
    for (const schema of [ErasureRequestBody, AccessRequestBody]) {
      expect(valid(schema, {})).toBe(false);
      expect(valid(schema, { emails: [] })).toBe(false);
      expect(valid(schema, { profileUrls: ['https://pronet.example/in/ada'] })).toBe(true);
    }
  });
});
