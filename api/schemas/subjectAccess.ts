/** Subject-access endpoint (`POST /privacy/access-requests`, docs/PRIVACY.md). */
import { Type, type Static } from '@sinclair/typebox';
import { ErasureRequestBody, PERSON_IDENTIFIED } from './privacy.js';

export const AccessRequestBody = Type.Object(
  { ...ErasureRequestBody.properties },
  {
    additionalProperties: false,
    anyOf: PERSON_IDENTIFIED,
    description: 'Identifiers of one person: at least one contact id, email or profile URL. Every contact holding one of them is exported.',
    examples: [{ emails: ['jane.doe@example.com'], webhookConfiguration: { url: 'https://hooks.example.com/access' } }],
  },
);
export type AccessRequestBody = Static<typeof AccessRequestBody>;
