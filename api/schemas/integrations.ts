/** Integrations (connected social accounts): request and response shapes. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { INTEGRATION_STATUSES, PROVIDERS } from '../../domain/social.js';
import { DataOf, JsonValue, KeyedRecord, NonBlankString, PageOf, PaginationToken } from './common.js';

export const ProviderKind = Type.Union(
  PROVIDERS.map((p) => Type.Literal(p)),
  { description: '`microblog` (X API v2), `pronet` (LinkedIn member), `pronetPage` (LinkedIn organization page)' },
);

export const Integration = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The `providerId` used by posts and schedules' }),
    provider: ProviderKind,
    name: Type.String(),
    externalAccountId: Type.String({ description: 'Account id on the network (X user id, LinkedIn person or organization id/URN)' }),
    apiBaseUrl: Type.Union([Type.String(), Type.Null()], { description: "Override of the network's API base URL" }),
    status: Type.Union(INTEGRATION_STATUSES.filter((s) => s !== 'disconnected').map((s) => Type.Literal(s)), {
      description: '`connected`; `reauth_required`: the network ended the grant (revoked, expired), reconnect through OAuth (same `id`)',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    scopes: Type.Array(Type.String(), { description: 'OAuth scopes granted (empty for an account connected with a raw token)' }),
    handle: Type.Union([Type.String(), Type.Null()], { description: "The account's handle on the network (X username), when known" }),
    accessExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the current access token ends; it is refreshed before (null: unknown or no expiry)',
    }),
    grantExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the grant itself ends and the account must be reconnected (LinkedIn: 365 days; null: until revoked)',
    }),
  },
  { description: 'Connected account. Credentials are stored encrypted and never returned; nor is any token.' },
);
export type IntegrationJson = Static<typeof Integration>;

export const ConnectIntegrationBody = Type.Object(
  {
    provider: ProviderKind,
    name: NonBlankString({ maxLength: 200 }),
    externalAccountId: NonBlankString({ maxLength: 200 }),
    // JsonValue: what the server stores, said as a schema (no NUL in nested strings or keys)
    credentials: KeyedRecord(JsonValue, {
      keyMaxLength: 100,
      minProperties: 1,
      maxProperties: 20,
      description: 'Provider credentials, e.g. `{"accessToken": "..."}`; encrypted at rest (AES-256-GCM), never returned',
    }),
    apiBaseUrl: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type ConnectIntegrationBody = Static<typeof ConnectIntegrationBody>;

export const INTEGRATION_FILTER_FIELDS = ['provider', 'externalAccountId', 'name'] as const;

const TextValue = Type.String({ maxLength: 200 });
const inList = <T extends TSchema>(item: T) => Type.Array(item, { minItems: 1, maxItems: 100 });
const TextField = Type.Union(
  INTEGRATION_FILTER_FIELDS.filter((f) => f !== 'provider').map((f) => Type.Literal(f)),
);

/**
 * One branch per field kind and operator, told apart by the literals `field` and `operator`
 * (api/validation.ts reports only the branches those match): `==` takes one value, `IN` a list;
 * `provider` takes the provider kinds only.
 */
export const IntegrationCondition = Type.Union(
  [
    Type.Object({ field: Type.Literal('provider'), operator: Type.Literal('=='), value: ProviderKind }, { additionalProperties: false }),
    Type.Object({ field: Type.Literal('provider'), operator: Type.Literal('IN'), value: inList(ProviderKind) }, { additionalProperties: false }),
    Type.Object({ field: TextField, operator: Type.Literal('=='), value: TextValue }, { additionalProperties: false }),
    Type.Object({ field: TextField, operator: Type.Literal('IN'), value: inList(TextValue) }, { additionalProperties: false }),
  ],
  { description: '`==` takes a string, `IN` an array of 1–100 strings; `provider` values are `microblog`, `pronet` or `pronetPage`' },
);
export type IntegrationCondition = Static<typeof IntegrationCondition>;

export const FilterIntegrationsBody = Type.Object(
  {
    conditions: Type.Optional(Type.Array(IntegrationCondition, { maxItems: 10, description: 'ANDed; e.g. `{"field":"provider","operator":"==","value":"microblog"}`' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    paginationToken: Type.Optional(PaginationToken),
  },
  { additionalProperties: false },
);
export type FilterIntegrationsBody = Static<typeof FilterIntegrationsBody>;

export const IntegrationResponse = DataOf(Integration);
export const IntegrationPage = PageOf(Integration);
export const IntegrationDeleted = DataOf(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }));
