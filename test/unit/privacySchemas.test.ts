/**
 * Privacy bodies publish the server's email rule (issue 27 item 21): a string the schema allows in
 * `emails` is one normalizeEmail accepts, so the handler's "must be an email address" 400 is
 * never the answer to schema-valid data.
 */
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErasureRequestBody, SuppressionBody } from '../../api/schemas/privacy.js';
import { sharedSchemas } from '../../api/schemas/common.js';
import { refShared } from '../../api/validation.js';
import { normalizeEmail } from '../../domain/identity.js';

const ajv = new Ajv({ strict: false });
(addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
for (const s of sharedSchemas) ajv.addSchema(s);

describe('privacy email rule in the schema', () => {
  for (const [name, schema] of [['erasure', ErasureRequestBody], ['suppression', SuppressionBody]] as const) {
    it(`${name}: schema and server agree on emails`, () => {
      const validate = ajv.compile(refShared(schema) as object);
      for (const email of ['0\u0000\u0000', 'abc', '   ', 'jane.doe@example.com', ' a@b ', '@@@']) {
        expect(validate({ emails: [email] }), JSON.stringify(email)).toBe(normalizeEmail(email) !== null);
      }
    });
  }

  it('suppression: an empty body or empty lists are refused by the schema, as by the handler', () => {
    const validate = ajv.compile(refShared(SuppressionBody) as object);
    for (const body of [{}, { emails: [] }, { profileUrls: [] }, { emails: [], profileUrls: [] }]) expect(validate(body), JSON.stringify(body)).toBe(false);
    expect(validate({ emails: ['a@b'] })).toBe(true);
    expect(validate({ emails: [], profileUrls: ['https://www.pronet.example/in/jane-doe/'] })).toBe(true);
  });
});
