/** `POST /contacts/unified-data-api`: asynchronous enrichment (API-SPEC Contacts, DESIGN §4). */
import { Type, type Static } from '@sinclair/typebox';
import { ENRICHMENT_SLICES } from '../../domain/enrichment.js';
import { NonBlankString, PROFILE_URL_PATTERN, WEBSITE_PATTERN, WebhookConfiguration } from './common.js';

const Name = (description: string) => Type.Optional(NonBlankString({ maxLength: 200, description }));

export const UnifiedDataBody = Type.Object(
  {
    fields: Type.Array(Type.Union(ENRICHMENT_SLICES.map((s) => Type.Literal(s))), {
      minItems: 1,
      maxItems: ENRICHMENT_SLICES.length,
      uniqueItems: true,
      description: 'Slices to enrich: ' + ENRICHMENT_SLICES.join(', '),
    }),
    pronet: Type.Optional(
      Type.String({
        maxLength: 2048,
        // host.tld/path once scheme, trailing slashes, query and fragment are dropped (what the lookup keys on)
        pattern: PROFILE_URL_PATTERN,
        description: 'Profile URL; required for every slice but emails (emails may use companyWebsite + name instead)',
      }),
    ),
    firstName: Name('With lastName (and best with companyWebsite): finds emails without pronet; beside pronet, a hint for providers'),
    lastName: Name('With firstName'),
    fullName: Name('Alone or with companyWebsite: finds emails without pronet; beside pronet, a hint for providers'),
    companyWebsite: Type.Optional(
      Type.String({ maxLength: 2048, pattern: WEBSITE_PATTERN, description: 'Company website or domain: with a name, finds emails without pronet' }),
    ),
    webhookConfiguration: Type.Optional(WebhookConfiguration),
  },
  {
    additionalProperties: false,
    dependentRequired: { firstName: ['lastName'], lastName: ['firstName'] },
    // every slice but emails needs pronet; emails alone may use a name instead. The domain
    // (planEnrichment) answers it with its documented code, naming what is missing (api/validation.ts onlyCodedRules).
    'x-error-code': 'pronet_required',
    description: 'Every slice but `emails` needs `pronet`; `emails` alone may use `fullName` (or `firstName` + `lastName`) instead: a body with neither is a 400 `pronet_required` (the `anyOf` rule, code in `x-error-code`)',
    anyOf: [
      { required: ['pronet'] },
      { properties: { fields: { items: { const: 'emails' } } }, anyOf: [{ required: ['fullName'] }, { required: ['firstName', 'lastName'] }] },
    ],
  },
);
export type UnifiedDataBody = Static<typeof UnifiedDataBody>;
