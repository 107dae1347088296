/**
 * `GET /audit-events`: the workspace's audit trail (api/audit.ts records it; docs/PRIVACY.md
 * "Audit trail"), newest first, filtered and keyset-paginated like every list of the API.
 */
import { defineRoute } from '../route.js';
import { PageOf } from '../schemas/common.js';
import { AuditEventItem, AuditEventsQuery } from '../schemas/audit.js';
import { listAuditEvents } from '../usecases/listAuditEvents.js';

export const auditRoutes = [
  defineRoute({
    method: 'get',
    path: '/audit-events',
    tag: 'Privacy',
    summary: 'The audit trail of the workspace, newest first',
    description: [
      'Who (API key id and kind) did what (`action`) to which resource (type and UUID) and when, for every POST, PATCH, PUT and DELETE',
      'made with a key of the workspace (privacy actions included: `erasure.request`, `access.request`, `suppression.add`, `suppression.remove`) and for',
      'retention purges (`system`). The trail is append-only and holds no request body and no personal data: an erasure by email is',
      'recorded with the request\'s id. Filters combine with AND; `since` is inclusive, `until` exclusive.',
    ].join(' '),
    query: AuditEventsQuery,
    responses: { 200: PageOf(AuditEventItem) },
    errors: [400, 401, 429, 500],
    orm: false,
    handler: ({ query, scope, deps }) => listAuditEvents(scope, deps.config.serverSecret, query),
  }),
];
