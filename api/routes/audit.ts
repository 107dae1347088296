/**
 * `GET /audit-events`: the workspace's audit trail (api/audit.ts records it; docs/PRIVACY.md
 * "Audit trail"), newest first, filtered and keyset-paginated like every list of the API.
 */
import { defineRoute } from '../route.js';
import { PageOf } from '../schemas/common.js';
import { AuditEventItem, AuditEventsQuery } from '../schemas/audit.js';
import { decodeToken, pageMeta, queryFingerprint } from '../../domain/pagination.js';
import { isUuid } from '../../domain/ids.js';
import { invalidField } from '../../domain/errors.js';
import { auditEventsPage, countAuditEvents, type AuditFilters } from '../../db/audit.js';

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
    handler: async ({ query, auth, deps }) => {
      const limit = query.limit ?? 100;
      const filters: AuditFilters = {
        actorKeyId: query.actorKeyId,
        action: query.action,
        resourceType: query.resourceType,
        resourceId: query.resourceId,
        since: query.since ? new Date(query.since) : undefined,
        until: query.until ? new Date(query.until) : undefined,
      };
      const { limit: _limit, paginationToken, ...filterQuery } = query;
      const fp = queryFingerprint(auth.workspaceId, { r: 'audit', ...filterQuery });
      const from = paginationToken ? decodeToken(deps.config.serverSecret, fp, paginationToken) : undefined;
      const afterId = from?.after[0];
      if (from && !isUuid(afterId)) throw invalidField('/paginationToken', 'is malformed');
      const [rows, total] = await Promise.all([
        auditEventsPage(deps.pool, auth.workspaceId, filters, limit + 1, from && { dir: from.dir, afterId: afterId as string }),
        countAuditEvents(deps.pool, auth.workspaceId, filters),
      ]);
      const page = pageMeta({ secret: deps.config.serverSecret, fingerprint: fp, rows, limit, totalRecords: total, from, keyOf: (r) => [r.id] });
      return {
        data: page.data.map((r) => ({
          id: r.id,
          occurredAt: r.occurredAt.toISOString(),
          actor: { apiKeyId: r.actorKeyId, kind: r.actorKind },
          action: r.action,
          resource: { type: r.resourceType, id: r.resourceId },
          requestId: r.requestId,
          status: r.status,
        })),
        meta: page.meta,
      };
    },
  }),
];
