/**
 * `POST /privacy/access-requests` (docs/PRIVACY.md): starts a subject-access job
 * (workflows/subjectAccess.ts) whose identifiers wait, sealed, in `access_requests` (never in the
 * workflow input). The job writes one JSON document with everything the workspace holds about
 * the person to the object store and answers a short-lived presigned link to it.
 */
import { defineRoute, reply } from '../route.js';
import { JobAccepted } from '../schemas/common.js';
import { AccessRequestBody } from '../schemas/subjectAccess.js';
import { personOf } from './privacy.js';
import { startSealedRequestJob } from '../usecases/startSealedRequestJob.js';
import { ACCESS_IDENTIFIERS_CONTEXT, insertAccessRequest } from '../../db/subjectAccess.js';

export const subjectAccessRoutes = [
  defineRoute({
    method: 'post',
    path: '/privacy/access-requests',
    tag: 'Privacy',
    summary: 'Export everything held about a person (asynchronous)',
    description: [
      'Starts a subject-access job for one person named by contact ids, emails and/or profile URLs (every contact holding one of them is',
      'included). The job writes one JSON document to the object store under the workspace\'s prefix: each contact record with, per field,',
      'where its value came from (the enrichment provider, slice, job and time, else the sources it came in through), its companies, sources',
      '(type, identifier, row key, first and last seen), enrichments, segments and the credit charges made for it. The result',
      '(`jobResponsePayload` of GET /jobs/{jobId}) is `{objectName, contacts, sources, enrichments, segments, charges, sizeBytes, downloadUrl,',
      'expiresAt}`: counts and a presigned `downloadUrl` valid for 15 minutes from the job\'s end, never the data itself.',
    ].join(' '),
    body: AccessRequestBody,
    responses: { 202: JobAccepted },
    errors: [400, 401, 409, 422, 429, 500],
    idempotent: true,
    handler: async ({ body, scope, deps }) => {
      const accepted = await startSealedRequestJob(scope, deps, {
        ids: personOf(body),
        context: ACCESS_IDENTIFIERS_CONTEXT,
        insert: (s, jobId, sealed) => insertAccessRequest(s.db, jobId, s.workspaceId, sealed),
        job: 'subject-access',
        webhook: body.webhookConfiguration,
        message: 'Subject access accepted; poll jobStatusEndpoint for the link to the document',
      });
      return reply(202, accepted);
    },
  }),
];
