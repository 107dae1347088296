/** OAuth connect (authorization URL, callback) and workspace OAuth apps: request and response shapes. */
import { Type, type Static } from '@sinclair/typebox';
import { DataOf, NonBlankString } from './common.js';
import { Integration, ProviderKind } from './integrations.js';

export const AuthorizeBody = Type.Object(
  { provider: ProviderKind },
  { additionalProperties: false, examples: [{ provider: 'microblog' }] },
);
export type AuthorizeBody = Static<typeof AuthorizeBody>;

export const Authorization = Type.Object(
  {
    authorizationUrl: Type.String({ format: 'uri', description: "The network's consent page; send the member's browser there" }),
    expiresAt: Type.String({ format: 'date-time', description: 'The callback must arrive before this (10 minutes)' }),
  },
  { examples: [{ authorizationUrl: 'https://x.com/i/oauth2/authorize?response_type=code&client_id=YOUR_CLIENT_ID&state=SIGNED_STATE', expiresAt: '2026-11-28T18:10:00.000Z' }] },
);
export const AuthorizationResponse = DataOf(Authorization);

export const CallbackQuery = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 2048 })),
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  error: Type.Optional(Type.String({ maxLength: 200 })),
  error_description: Type.Optional(Type.String({ maxLength: 2000 })),
});
export type CallbackQuery = Static<typeof CallbackQuery>;

export const Organization = Type.Object({ id: Type.String({ description: 'LinkedIn organization id' }), name: Type.String() });

export const Connected = Type.Object(
  {
    integration: Integration,
    reconnected: Type.Boolean({ description: 'True when an existing integration of the same account was reconnected (same `id`)' }),
    organizations: Type.Optional(
      Type.Array(Organization, { description: '`pronetPage`: the pages the member administers; connect one with `POST /integrations/{id}/pages`' }),
    ),
  },
  {},
);
export const ConnectedResponse = DataOf(Connected);

export const ConnectPageBody = Type.Object(
  { organizationId: Type.String({ pattern: '^\\d{1,20}$', description: 'One of the `organizations` the callback listed' }) },
  { additionalProperties: false, examples: [{ organizationId: '2414183' }] },
);
export type ConnectPageBody = Static<typeof ConnectPageBody>;

export const NetworkParams = Type.Object({ network: Type.Union([Type.Literal('microblog'), Type.Literal('pronet')]) }, { additionalProperties: false });

export const OAuthAppBody = Type.Object(
  {
    clientId: NonBlankString({ maxLength: 200 }),
    clientSecret: NonBlankString({ maxLength: 500, description: 'Encrypted at rest, never returned' }),
  },
  { additionalProperties: false, examples: [{ clientId: 'YOUR_CLIENT_ID', clientSecret: 'YOUR_CLIENT_SECRET' }] },
);
export type OAuthAppBody = Static<typeof OAuthAppBody>;

export const OAuthApp = Type.Object(
  {
    network: Type.Union([Type.Literal('microblog'), Type.Literal('pronet')]),
    clientId: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { description: "A workspace's own OAuth app; its secret is never returned" },
);
export const OAuthAppResponse = DataOf(OAuthApp);
export const OAuthAppList = DataOf(Type.Array(OAuthApp));
export const OAuthAppDeleted = DataOf(Type.Object({ network: Type.String(), deleted: Type.Literal(true) }));
