/**
 * `GET /audit-events` as one use case: the query's filters and pagination token read, one page
 * of the workspace's audit trail and its total through the request's `scope`, the page shaped for
 * the response. The route only adapts HTTP to it.
 */
import type { Static } from '@sinclair/typebox';
import { auditEventsPage, countAuditEvents, type AuditFilters } from '../../db/audit.js';
import type { WorkspaceScope } from '../../db/scope.js';
import { invalidField } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import { decodeToken, pageMeta, queryFingerprint } from '../../domain/pagination.js';
import type { AuditEventsQuery } from '../schemas/audit.js';

export async function listAuditEvents(scope: WorkspaceScope, secret: string, query: Static<typeof AuditEventsQuery>) {
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
  const fp = queryFingerprint(scope.workspaceId, { r: 'audit', ...filterQuery });
  const from = paginationToken ? decodeToken(secret, fp, paginationToken) : undefined;
  const afterId = from?.after[0];
  if (from && !isUuid(afterId)) throw invalidField('/paginationToken', 'is malformed');
  const [rows, total] = await Promise.all([
    auditEventsPage(scope, filters, limit + 1, from && { dir: from.dir, afterId: afterId as string }),
    countAuditEvents(scope, filters),
  ]);
  const page = pageMeta({ secret, fingerprint: fp, rows, limit, totalRecords: total, from, keyOf: (r) => [r.id] });
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
}
