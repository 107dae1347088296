/**
 * Activities of subject-access jobs (workflows/subjectAccess.ts). The person's identifiers and
 * data never cross the workflow: each activity opens the identifiers from the request's row
 * (sealed with the keyring), the document goes straight from PostgreSQL to the object store, and
 * the workflow gets counts, the object's name and a presigned link. Each step records what it
 * did in the request row, so a retry after a crash does not redo it and answers the same.
 */
import { Context } from '@temporalio/activity';
import { keyringOf } from '../domain/keyring.js';
import { expandIdentifiers, type PersonIdentifiers } from '../db/privacy.js';
import { ACCESS_IDENTIFIERS_CONTEXT, completeAccessRequest, findAccessRequest, mergeAccessRequest, subjectAccessDocument } from '../db/subjectAccess.js';
import { activityScope } from '../db/scope.js';
import type { ActivityDeps } from './deps.js';

export interface AccessStepInput {
  workspaceId: string;
  requestId: string;
}

/** The access job's result: where the document is, what it holds (counts), and a short-lived link to it. */
export interface SubjectAccessResult {
  objectName: string;
  contacts: number;
  sources: number;
  enrichments: number;
  segments: number;
  charges: number;
  sizeBytes: number;
  downloadUrl: string;
  expiresAt: string;
}

/** How long the presigned link of an export stays valid. */
export const ACCESS_LINK_TTL_SECONDS = 15 * 60;

export const accessObjectName = (workspaceId: string, requestId: string) => `${workspaceId}/subject-access/${requestId}.json`;

/**
 * Runs `fn` while heartbeating every 2 s: with the workflow's short heartbeat timeout, a step
 * whose worker was SIGKILLed is retried within seconds, not after its start-to-close timeout.
 */
async function heartbeating<T>(fn: () => Promise<T>): Promise<T> {
  Context.current().heartbeat();
  const beat = setInterval(() => Context.current().heartbeat(), 2000);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}

export function createSubjectAccessActivities(deps: ActivityDeps) {
  const keyring = keyringOf(deps.config);

  /** The request's row, read in the activity's scope (the input's workspace). */
  async function load(input: AccessStepInput) {
    const { db, workspaceId } = activityScope();
    const row = await findAccessRequest(db, workspaceId, input.requestId);
    if (!row) throw new Error(`access request ${input.requestId} not found`);
    const ids: PersonIdentifiers = row.identifiers ? JSON.parse(keyring.decryptText(row.identifiers, ACCESS_IDENTIFIERS_CONTEXT)) : { contactIds: [], emails: [], profileUrls: [] };
    return { ids, plan: row.plan ?? {}, result: row.result };
  }

  return {
    accessResolve: (input: AccessStepInput) => heartbeating(() => resolve(input)),
    accessExport: (input: AccessStepInput) => heartbeating(() => exportDocument(input)),
    accessComplete: (input: AccessStepInput) => heartbeating(() => complete(input)),
  };

  /** The person's contacts: every contact that holds one of the identifiers (fixed once, so a retry exports the same). */
  async function resolve(input: AccessStepInput): Promise<{ contacts: number }> {
    const { ids, plan } = await load(input);
    if (plan.contactIds) return { contacts: plan.contactIds.length };
    const { db, workspaceId } = activityScope();
    const all = await expandIdentifiers(db, workspaceId, ids);
    await mergeAccessRequest(db, workspaceId, input.requestId, 'plan', { contactIds: all.contactIds });
    return { contacts: all.contactIds.length };
  }

  /** Reads everything about those contacts and writes it as one JSON object under the workspace's prefix. */
  async function exportDocument(input: AccessStepInput): Promise<{ objectName: string }> {
    const { plan, result } = await load(input);
    if (result?.objectName) return { objectName: String(result.objectName) };
    const { db, workspaceId } = activityScope();
    const { contacts } = await subjectAccessDocument(db, workspaceId, plan.contactIds ?? []);
    const document = {
      kind: 'subjectAccessExport',
      requestId: input.requestId,
      workspaceId,
      exportedAt: new Date().toISOString(),
      notes: [
        'fields[name].origins: an enrichment names its provider, slice, job and time; other values came in through the sources listed (the ingest keeps no per-field source).',
        'charges: credit ledger entries made for the contact (amounts and references).',
      ],
      contacts,
    };
    const body = Buffer.from(JSON.stringify(document, null, 2));
    const objectName = accessObjectName(workspaceId, input.requestId);
    await deps.storage.client.putObject(deps.storage.bucket, objectName, body, body.length, { 'Content-Type': 'application/json' });
    await mergeAccessRequest(db, workspaceId, input.requestId, 'result', {
      objectName,
      contacts: contacts.length,
      sources: new Set(contacts.flatMap((c) => c.sources.map((s) => s.sourceId))).size,
      enrichments: contacts.reduce((n, c) => n + c.enrichments.length, 0),
      segments: new Set(contacts.flatMap((c) => c.segments.map((s) => s.segmentId))).size,
      charges: contacts.reduce((n, c) => n + c.charges.length, 0),
      sizeBytes: body.length,
    });
    return { objectName };
  }

  /** Signs the link once, drops the identifiers, and answers the job's result. */
  async function complete(input: AccessStepInput): Promise<SubjectAccessResult> {
    const { db, workspaceId } = activityScope();
    const result = await completeAccessRequest(db, workspaceId, input.requestId, async () => {
      const objectName = accessObjectName(workspaceId, input.requestId);
      const expiresAt = new Date(Date.now() + ACCESS_LINK_TTL_SECONDS * 1000).toISOString();
      return { downloadUrl: await deps.storage.readUrl(objectName, ACCESS_LINK_TTL_SECONDS), expiresAt };
    });
    return result as unknown as SubjectAccessResult;
  }
}
