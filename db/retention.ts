/**
 * SQL of the retention purge (workflows/retention.ts, docs/PRIVACY.md "Retention"): what has
 * expired, found oldest first in batches, and its removal. A purged contact goes with everything
 * hanging off it through the erasure's own `deletePersonRows` (db/privacy.ts). Every batch commits
 * on its own, so a purge stopped anywhere resumes from what is left.
 */
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { Queryable } from './pool.js';
import { scopeTransaction, type WorkspaceScope } from './scope.js';
import { runQuery, textArray, typedQueries, uuidArray } from './sqlFragments.js';
import { Contact } from './contacts.js';
import { Job, WebhookDelivery } from './platform.js';
import { AccessRequest } from './subjectAccessEntities.js';
import { recordAuditEvents } from './audit.js';
import { lockForEmailWrite } from './identityLog.js';
import { deletePersonRows, type PersonRowsRemoved } from './privacy.js';
import { assertWorkspaceScope } from './tenancy.js';
import { normalizeEmail } from '../domain/identity.js';

type RetentionDB = InferKyselyDB<typeof Contact | typeof WebhookDelivery | typeof Job | typeof AccessRequest>;
const q = () => typedQueries<RetentionDB>();

/**
 * Contacts soft-deleted before `cutoff`, oldest first, across workspaces: the caller runs it
 * under `withoutTenancy` (the purge covers every workspace), then purges each workspace's own.
 */
export async function expiredDeletedContacts(db: Queryable, cutoff: Date, limit: number): Promise<{ workspaceId: string; id: string }[]> {
  const rows = await runQuery(
    db,
    q().selectFrom('contacts').select(['workspace_id', 'id']).where('status', '=', 'deleted').where('deleted_at', '<', cutoff).orderBy('deleted_at').limit(limit),
  );
  return rows.map((r) => ({ workspaceId: r.workspace_id, id: r.id }));
}

/**
 * Hard-deletes those of `contactIds` still soft-deleted before `cutoff` (checked again under the
 * workspace's ingest lock: an import may have revived one meanwhile) with what hangs off them, as
 * an erasure does. Emails and profile URLs another contact of the workspace still holds are left
 * to that contact (its source links and stored responses are its own). Each purge is recorded in
 * the audit trail as `contact.purge` by `system`, in the same transaction.
 */
export async function purgeDeletedContacts(scope: WorkspaceScope, contactIds: string[], cutoff: Date): Promise<PersonRowsRemoved> {
  const { workspaceId } = scope;
  return scopeTransaction(scope, async (client) => {
    await lockForEmailWrite(client, workspaceId);
    const doomed = await runQuery(
      client,
      q()
        .selectFrom('contacts')
        .select(['id', 'emails', 'work_email', 'pronet', 'pronet_key'])
        .where('id', '=', sql<string>`any(${uuidArray(contactIds)})`)
        .where('status', '=', 'deleted')
        .where('deleted_at', '<', cutoff)
        .forUpdate(),
    );
    if (!doomed.length) return { contacts: 0, contactSources: 0, identityLogEntries: 0, stagedRows: 0, idempotencyRecords: 0 };
    const ids = doomed.map((c) => c.id);
    const emails = [...new Set(doomed.flatMap((c) => [...(c.emails as string[]), ...(c.work_email ? [c.work_email] : [])]).map((e) => normalizeEmail(e) ?? e.toLowerCase()))];
    const profiles = [...new Set(doomed.flatMap((c) => [c.pronet, c.pronet_key]).filter((u): u is string => !!u))];
    const kept = await runQuery(
      client,
      q()
        .selectFrom('contacts')
        .select(['emails', 'work_email', 'pronet', 'pronet_key'])
        .where('id', '!=', sql<string>`all(${uuidArray(ids)})`)
        .where((eb) =>
          eb.or([
            eb('emails', '&&', textArray(emails)),
            eb(eb.fn('lower', ['work_email']), '=', sql<string>`any(${textArray(emails)})`),
            eb('pronet_key', '=', sql<string>`any(${textArray(profiles)})`),
            eb('pronet', '=', sql<string>`any(${textArray(profiles)})`),
          ]),
        ),
    );
    const held = new Set(kept.flatMap((c) => [...(c.emails as string[]), c.work_email, c.pronet, c.pronet_key]).filter((v): v is string => !!v).map((v) => v.toLowerCase()));
    const removed = await deletePersonRows(client, workspaceId, {
      contactIds: ids,
      emails: emails.filter((e) => !held.has(e)),
      profileUrls: profiles.filter((u) => !held.has(u.toLowerCase())),
    });
    await recordAuditEvents(
      client,
      ids.map((id) => ({ id: uuidv7(), workspaceId, actorKeyId: null, actorKind: 'system', action: 'contact.purge', resourceType: 'contact', resourceId: id, requestId: null })),
    );
    return removed;
  });
}

/** Deletes up to `limit` webhook delivery records made before `cutoff`, oldest first, across workspaces (under `withoutTenancy`). */
export async function purgeWebhookDeliveries(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const rows = await runQuery(
    db,
    q()
      .deleteFrom('webhook_deliveries')
      .where('id', 'in', (eb) => eb.selectFrom('webhook_deliveries').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(limit))
      .returning('id'),
  );
  return rows.length;
}

/** Which of `workflowIds` still have a `jobs` row in the workspace (a purged job's row goes with its execution). */
export async function jobWorkflowIdsAmong(scope: WorkspaceScope, workflowIds: string[]): Promise<string[]> {
  if (!workflowIds.length) return [];
  assertWorkspaceScope(scope.workspaceId);
  const rows = await runQuery(scope.db, q().selectFrom('jobs').select('workflow_id').where('workflow_id', '=', sql<string>`any(${textArray(workflowIds)})`));
  return rows.map((r) => r.workflow_id);
}

/**
 * Subject-access requests completed before `cutoff`, oldest first, across workspaces (the caller
 * runs it under `withoutTenancy`): their export documents are due for removal.
 */
export async function expiredAccessRequests(db: Queryable, cutoff: Date, limit: number): Promise<{ workspaceId: string; id: string }[]> {
  const rows = await runQuery(db, q().selectFrom('access_requests').select(['workspace_id', 'id']).where('completed_at', '<', cutoff).orderBy('completed_at').limit(limit));
  return rows.map((r) => ({ workspaceId: r.workspace_id, id: r.id }));
}

/** Forgets a subject-access request whose export document was removed (its job result, a link long expired, stays with the job). */
export async function deleteAccessRequest(scope: WorkspaceScope, id: string): Promise<number> {
  assertWorkspaceScope(scope.workspaceId);
  return (await runQuery(scope.db, q().deleteFrom('access_requests').where('id', '=', id).returning('id'))).length;
}
