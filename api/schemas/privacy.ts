/** Personal-data lifecycle endpoints (`/privacy/…`, docs/PRIVACY.md): erasure requests and the suppression list. */
import { Type, type Static } from '@sinclair/typebox';
import { WebhookConfiguration } from './common.js';

// `@` is the server's whole test of an email here (domain/identity.ts normalizeEmail): the schema says so.
const Emails = Type.Array(Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\u0000]*@[^\\u0000]*$', description: 'Email address (contains `@`)' }), { maxItems: 100 });
// What domain/identity.ts normalizeProfileUrl keeps something of: after white space and an optional
// scheme, a first character that is not `/`, `?` or `#` (those start a path, query or fragment).
const WS = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const PROFILE_URL = `^[${WS}]*(?:[A-Za-z][A-Za-z0-9+.-]*://)?[^/?#\\u0000${WS}][^\\u0000]*$`;
const ProfileUrls = Type.Array(Type.String({ minLength: 1, maxLength: 2048, pattern: PROFILE_URL, description: 'Profile URL (any form: it is normalised; at least a host)' }), { maxItems: 100 });

/** At least one identifier of the person: the handler's rule, said where a client can read it. */
export const PERSON_IDENTIFIED = (['contactIds', 'emails', 'profileUrls'] as const).map((k) => ({ required: [k], properties: { [k]: { minItems: 1 } } }));

export const ErasureRequestBody = Type.Object(
  {
    contactIds: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 100, description: 'Contacts of this workspace' })),
    emails: Type.Optional(Emails),
    profileUrls: Type.Optional(ProfileUrls),
    webhookConfiguration: Type.Optional(WebhookConfiguration),
  },
  {
    additionalProperties: false,
    anyOf: PERSON_IDENTIFIED,
    description: 'Identifiers of one person: at least one contact id, email or profile URL',
    examples: [{ emails: ['jane.doe@example.com'], profileUrls: ['https://www.pronet.example/in/jane-doe/'] }],
  },
);
export type ErasureRequestBody = Static<typeof ErasureRequestBody>;

export const SuppressionBody = Type.Object(
  {
    emails: Type.Optional(Emails),
    profileUrls: Type.Optional(ProfileUrls),
  },
  {
    additionalProperties: false,
    // At least one identifier: the handler's rule, said where a client can read it.
    anyOf: [
      { required: ['emails'], properties: { emails: { minItems: 1 } } },
      { required: ['profileUrls'], properties: { profileUrls: { minItems: 1 } } },
    ],
    description: 'Identifiers to put on the do-not-contact list (stored as keyed hashes only): at least one email or profile URL',
    examples: [{ emails: ['jane.doe@example.com'] }],
  },
);

export const SuppressionEntry = Type.Object(
  {
    identifierHash: Type.String({ description: 'HMAC-SHA256 (hex) of the normalised identifier under the server key' }),
    kind: Type.Union([Type.Literal('email'), Type.Literal('profileUrl')]),
    reason: Type.Union([Type.Literal('erasure'), Type.Literal('doNotContact')]),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { description: 'One entry of the suppression list' },
);

export const SuppressionAdded = Type.Object(
  { data: Type.Object({ added: Type.Integer(), entries: Type.Array(SuppressionEntry) }) },
  {
    
    examples: [{ data: { added: 1, entries: [{ identifierHash: '9f2c…', kind: 'email', reason: 'doNotContact', createdAt: '2026-11-28T12:00:00.000Z' }] } }],
  },
);

export const SuppressionList = Type.Object(
  {
    data: Type.Array(SuppressionEntry),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last' }),
  },
  {
    
    examples: [{ data: [{ identifierHash: '9f2c…', kind: 'email', reason: 'erasure', createdAt: '2026-11-28T12:00:00.000Z' }], nextCursor: null }],
  },
);

export const SuppressionListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  },
  { additionalProperties: false },
);

export const SuppressionHashParams = Type.Object({ identifierHash: Type.String({ pattern: '^[0-9a-f]{64}$' }) });

export const SuppressionRemoved = Type.Object({ data: Type.Object({ removed: Type.Boolean() }) }, { examples: [{ data: { removed: true } }] });
