/**
 * `/privacy/…` (docs/PRIVACY.md): erasure requests start an erasure job (workflows/erasure.ts)
 * whose identifiers wait, sealed, in `erasure_requests` (never in the workflow input); the
 * suppression list (keyed hashes) can be added to, listed and removed from directly.
 */
import { defineRoute, reply } from '../route.js';
import { startSealedRequestJob } from '../usecases/startSealedRequestJob.js';
import { JobAccepted } from '../schemas/common.js';
import { ErasureRequestBody, SuppressionAdded, SuppressionBody, SuppressionHashParams, SuppressionList, SuppressionListQuery, SuppressionRemoved } from '../schemas/privacy.js';
import { InvalidInputError } from '../../domain/errors.js';
import {
  ERASURE_IDENTIFIERS_CONTEXT,
  addSuppressions,
  insertErasureRequest,
  listSuppressions,
  normalizeIdentifier,
  removeSuppression,
  suppressionHash,
  suppressionKey,
  type PersonIdentifiers,
} from '../../db/privacy.js';
import type { SuppressionKind } from '../../db/privacyEntities.js';

/** The normalised identifiers of a body; a value that is no email / profile URL is a 400 naming it. */
function normalized(body: { emails?: string[]; profileUrls?: string[] }): { kind: SuppressionKind; value: string }[] {
  const out: { kind: SuppressionKind; value: string }[] = [];
  for (const [field, kind] of [['emails', 'email'], ['profileUrls', 'profileUrl']] as const) {
    for (const [i, raw] of (body[field] ?? []).entries()) {
      const value = normalizeIdentifier(kind, raw);
      if (!value) throw new InvalidInputError([field, String(i)], kind === 'email' ? 'must be an email address' : 'must be a profile URL');
      out.push({ kind, value });
    }
  }
  return out;
}

/** The person an erasure or access body names; a 400 naming the field when it names nobody. */
export function personOf(body: ErasureRequestBody): PersonIdentifiers {
  const ids: PersonIdentifiers = {
    contactIds: body.contactIds ?? [],
    emails: normalized({ emails: body.emails }).map((x) => x.value),
    profileUrls: body.profileUrls ?? [],
  };
  normalized({ profileUrls: body.profileUrls });
  if (!ids.contactIds.length && !ids.emails.length && !ids.profileUrls.length) throw new InvalidInputError(['emails'], 'name the person: at least one contact id, email or profile URL');
  return ids;
}

export const privacyRoutes = [
  defineRoute({
    method: 'post',
    path: '/privacy/erasure-requests',
    tag: 'Privacy',
    summary: 'Erase a person from every store of the workspace (asynchronous)',
    description: [
      'Starts an erasure job for one person named by contact ids, emails and/or profile URLs. The job hard-deletes the person\'s contacts',
      'and everything on or linked to them (emails, phones, custom fields, company links, source links, segment membership), identity-log',
      'entries, staged rows, stored idempotent responses, objects of the workspace that carry them, and Temporal executions whose history',
      'carries them (with their job records); it puts the emails and profile URLs on the suppression list (keyed hashes). The result',
      '(`jobResponsePayload` of GET /jobs/{jobId}) counts what was removed per store, never the data. Credit ledger entries stay.',
    ].join(' '),
    body: ErasureRequestBody,
    responses: { 202: JobAccepted },
    errors: [400, 401, 409, 422, 429, 500],
    idempotent: true,
    handler: async ({ body, scope, deps }) => {
      const accepted = await startSealedRequestJob(scope, deps, {
        ids: personOf(body),
        context: ERASURE_IDENTIFIERS_CONTEXT,
        insert: insertErasureRequest,
        job: 'erasure',
        webhook: body.webhookConfiguration,
        message: 'Erasure accepted; poll jobStatusEndpoint for the report per store',
      });
      return reply(202, accepted);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/privacy/suppressions',
    tag: 'Privacy',
    summary: 'Put identifiers on the do-not-contact list',
    description: 'Adds emails and profile URLs to the workspace\'s suppression list as keyed hashes (no clear text is kept). Every import path then skips rows of these people and enrichment refuses them.',
    body: SuppressionBody,
    responses: { 201: SuppressionAdded },
    errors: [400, 401, 429, 500],
    orm: false,
    handler: async ({ body, scope, deps }) => {
      const key = suppressionKey(deps.config.serverSecret);
      const entries = normalized(body).map((x) => ({ kind: x.kind, hash: suppressionHash(key, x.kind, x.value) }));
      if (!entries.length) throw new InvalidInputError(['emails'], 'name at least one email or profile URL');
      // One statement: the scope's pool runs it as the workspace (row-level security).
      const added = await addSuppressions(scope.db, scope.workspaceId, entries, 'doNotContact');
      const now = new Date().toISOString();
      return reply(201, { data: { added, entries: entries.map((e) => ({ identifierHash: e.hash, kind: e.kind, reason: 'doNotContact' as const, createdAt: now })) } });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/privacy/suppressions',
    tag: 'Privacy',
    summary: 'List the suppression list (hashes only)',
    query: SuppressionListQuery,
    responses: { 200: SuppressionList },
    errors: [400, 401, 429, 500],
    orm: false,
    handler: async ({ query, scope }) => {
      const limit = query.limit ?? 100;
      const rows = await listSuppressions(scope, limit + 1, query.cursor ?? null);
      const page = rows.slice(0, limit);
      return {
        data: page.map((r) => ({ identifierHash: r.identifierHash, kind: r.kind, reason: r.reason, createdAt: r.createdAt.toISOString() })),
        nextCursor: rows.length > limit ? page.at(-1)!.identifierHash : null,
      };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/privacy/suppressions/{identifierHash}',
    tag: 'Privacy',
    summary: 'Remove one entry from the suppression list',
    params: SuppressionHashParams,
    responses: { 200: SuppressionRemoved },
    errors: [400, 401, 429, 500],
    orm: false,
    handler: async ({ params, scope }) => {
      const removed = await removeSuppression(scope, params.identifierHash);
      return { data: { removed } };
    },
  }),
];
