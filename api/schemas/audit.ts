/** Schemas of `GET /audit-events` (api/routes/audit.ts, docs/PRIVACY.md "Audit trail"). */
import { Type } from '@sinclair/typebox';
import { PaginationToken } from './common.js';

export const AuditEventsQuery = Type.Object(
  {
    actorKeyId: Type.Optional(Type.String({ format: 'uuid', description: 'Only events of this API key' })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only this action, e.g. `contact.update`, `erasure.request`' })),
    resourceType: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only this resource type, e.g. `contact`, `job`, `erasureRequest`' })),
    resourceId: Type.Optional(Type.String({ format: 'uuid', description: 'Only events on this resource' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Events at or after this time' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Events before this time' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    paginationToken: Type.Optional(PaginationToken),
  },
  { additionalProperties: false },
);

export const AuditEventItem = Type.Object({
  id: Type.String({ format: 'uuid' }),
  occurredAt: Type.String({ format: 'date-time' }),
  actor: Type.Object({
    apiKeyId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The key that acted; null for `system` (retention purges)' }),
    kind: Type.Union([Type.Literal('workspace'), Type.Literal('user'), Type.Literal('session'), Type.Literal('system')]),
  }),
  action: Type.String({ description: '`<resourceType>.<verb>`' }),
  resource: Type.Object({
    type: Type.String(),
    id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Always a UUID (never an email or URL); null for actions on no single resource' }),
  }),
  requestId: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Integer(), Type.Null()], {
    description: 'HTTP status the request was answered with; null while it runs or when its outcome could not be recorded. The event itself is recorded before the write runs.',
  }),
});
