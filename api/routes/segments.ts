/**
 * Segments (API-SPEC "Segments", DESIGN §4): create, type-ahead search, get, update, delete and
 * clone. A segment holds `segmentSources` (source ids), `conditions` / `groupedCondition`
 * (checked against the workspace's contact catalog when written), `workflows` and
 * `savedViewTemplates`. Membership — contacts from the segment's sources that match its
 * conditions; every contact for the default segment — is `domain/segmentMembership.ts`, used by
 * `POST /contacts/by-segment/{segmentId}`.
 *
 * `/segments/search` is mounted before `/segments/{id}`.
 */
import { deleteSegment, ensureDefaultSegment, searchSegmentsByName } from '../../db/segments.js';
import { likeContains, likePrefix } from '../../domain/like.js';
import { conflict, notFound } from '../errors.js';
import { DEFAULT_SEGMENT_CLONE_DOC } from '../../domain/segmentRules.js';
import { cloneSegment, createSegment, loadSegment, patchSegment, segmentJson } from '../usecases/segments.js';
import { defineRoute } from '../route.js';
import { IdParams } from '../schemas/common.js';
import {
  CloneSegmentBody,
  CreateSegmentBody,
  PatchSegmentBody,
  SegmentDeleted,
  SegmentList,
  SegmentResponse,
  SegmentSearchQuery,
} from '../schemas/segments.js';

export const segmentRoutes = [
  defineRoute({
    method: 'post',
    path: '/segments',
    tag: 'Segments',
    summary: 'Create a segment',
    description:
      'A segment holds the contacts that came from its `segmentSources` and match its `conditions` (ANDed) and `groupedCondition` ' +
      '(same rules as `POST /contacts/filter-contacts`). `workflows` and `savedViewTemplates` are stored as given.',
    body: CreateSegmentBody,
    responses: { 200: SegmentResponse },
    errors: [400, 401, 404, 500],
    examples: {
      request: {
        name: 'Analytical leads',
        conditions: [{ field: 'company.companyName', operator: 'LIKE', value: 'Analytical%' }],
        groupedCondition: { operator: 'OR', conditions: [{ field: 'contact.lastName', operator: '==', value: 'Lovelace' }, { field: 'contact.lastName', operator: '==', value: 'Babbage' }] },
      },
    },
    idempotent: true,
    handler: ({ body, scope }) => createSegment(scope, body),
  }),

  defineRoute({
    method: 'get',
    path: '/segments/search',
    tag: 'Segments',
    summary: 'Type-ahead search of segments by name',
    description: 'Segments whose name contains `q` (case-insensitive; all when `q` is empty): names starting with `q` first, then alphabetical.',
    query: SegmentSearchQuery,
    responses: { 200: SegmentList },
    errors: [400, 401, 500],
    handler: async ({ query, scope }) => {
      await ensureDefaultSegment(scope.em, scope.workspaceId);
      const q = (query.q ?? '').trim().toLowerCase();
      const rows = await searchSegmentsByName(scope, likeContains(q), likePrefix(q), query.limit ?? 10);
      return { data: rows.map(segmentJson) };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/segments/{id}/clone',
    tag: 'Segments',
    summary: 'Clone a segment',
    description:
      'Always copies `workflows`. Unless `workflowOnly` is true it also copies `segmentSources`, `conditions`/`groupedCondition` and `savedViewTemplates`. ' +
      'Default name: `Copy of {name} - {ISO timestamp}`. The clone records `clonedFrom` and is never the default segment. ' +
      DEFAULT_SEGMENT_CLONE_DOC,
    params: IdParams,
    body: CloneSegmentBody,
    responses: { 200: SegmentResponse },
    errors: [400, 401, 404, 500],
    idempotent: true,
    handler: ({ params, body, scope }) => cloneSegment(scope, params.id, body),
  }),

  defineRoute({
    method: 'get',
    path: '/segments/{id}',
    tag: 'Segments',
    summary: 'Get a segment',
    params: IdParams,
    responses: { 200: SegmentResponse },
    errors: [401, 404, 500],
    handler: async ({ params, scope }) => ({ data: segmentJson(await loadSegment(scope.em, params.id)) }),
  }),

  defineRoute({
    method: 'patch',
    path: '/segments/{id}',
    tag: 'Segments',
    summary: 'Update a segment',
    description:
      'Only the properties present change; each replaces the stored value. The default segment holds every contact, so its `segmentSources`, ' +
      '`conditions` and `groupedCondition` cannot be set (400).',
    params: IdParams,
    body: PatchSegmentBody,
    responses: { 200: SegmentResponse },
    errors: [400, 401, 404, 500],
    handler: ({ params, body, scope }) => patchSegment(scope, params.id, body),
  }),

  defineRoute({
    method: 'delete',
    path: '/segments/{id}',
    tag: 'Segments',
    summary: 'Delete a segment',
    description: 'Deletes the segment (its contacts and sources stay). The default segment cannot be deleted (409 `default_segment_protected`).',
    params: IdParams,
    responses: { 200: SegmentDeleted },
    errors: [401, 404, 409, 500], errorCodes: ['default_segment_protected'],
    handler: async ({ params, scope }) => {
      const seg = await loadSegment(scope.em, params.id);
      if (seg.isDefault) throw conflict('The default segment holds every contact and cannot be deleted', 'default_segment_protected');
      const id = seg.id;
      // A concurrent DELETE that removed it first answered 200: this one answers as if sent after it.
      if (!(await deleteSegment(scope.em, seg))) throw notFound('Segment', params.id);
      return { data: { id, deleted: true as const } };
    },
  }),
];
