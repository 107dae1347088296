/**
 * `POST /integrations/filter-integrations` as one use case: the conditions and pagination token
 * read, one keyset page of the workspace's connected accounts and their total through the
 * request's `scope`, the page shaped for the response. The route only adapts HTTP to it.
 */
import type { Static } from '@sinclair/typebox';
import { listConnectedIntegrations, type IntegrationListQuery } from '../../db/integrations.js';
import type { WorkspaceScope } from '../../db/scope.js';
import { invalidField } from '../../domain/errors.js';
import { decodeToken, pageMeta, queryFingerprint, type TokenPayload } from '../../domain/pagination.js';
import { entityJson } from '../entityJson.js';
import { Integration, type FilterIntegrationsBody, type IntegrationJson } from '../schemas/integrations.js';

export const integrationJson = (i: object): IntegrationJson => entityJson(Integration, i);

export async function listIntegrations(scope: WorkspaceScope, secret: string, body: Static<typeof FilterIntegrationsBody>) {
  const limit = body.limit ?? 25;
  // The schema holds the operator's value shape and the provider kinds (IntegrationCondition).
  const conditions: IntegrationListQuery['conditions'] = (body.conditions ?? []).map((c) => ({
    field: c.field,
    values: c.operator === 'IN' ? c.value : [c.value],
  }));
  const fingerprint = queryFingerprint(scope.workspaceId, { r: 'integrations', c: body.conditions ?? [] });
  const from: TokenPayload | undefined = body.paginationToken ? decodeToken(secret, fingerprint, body.paginationToken) : undefined;
  let after: IntegrationListQuery['after'];
  if (from) {
    const [ts, id] = from.after as [string, string];
    if (typeof ts !== 'string' || typeof id !== 'string') throw invalidField('/paginationToken', 'is malformed');
    after = { dir: from.dir, createdAt: ts, id };
  }
  const { rows, total } = await listConnectedIntegrations(scope, { conditions, after, limit: limit + 1 });
  const page = pageMeta({
    secret,
    fingerprint,
    rows,
    limit,
    totalRecords: total,
    // The sort key travels as PostgreSQL's own text form: exact to the microsecond.
    keyOf: (r) => [r.k, r.integration.id],
    from,
  });
  return { data: page.data.map((r) => integrationJson(r.integration)), meta: page.meta };
}
