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
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  deleteSegment,
  ensureDefaultSegment,
  findSegment,
  insertSegment,
  searchSegmentsByName,
  updateSegment,
  type SegmentEntity,
} from '../../db/segments.js';
import { allSourceIds, existingSourceIds } from '../../db/sources.js';
import type { Queryable } from '../../db/pool.js';
import { loadContactCatalog } from '../../db/contactRead.js';
import { isUuid } from '../../domain/ids.js';
import { likeContains, likePrefix } from '../../domain/like.js';
import { invalidField } from '../../domain/errors.js';
import { conflict, notFound, notFoundField } from '../errors.js';
import { validateSegmentConditions } from '../../db/segmentMembership.js';
import { DEFAULT_SEGMENT_CLONE_DOC, cloneSegmentContent } from '../../domain/segmentRules.js';
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
  type SegmentJson,
} from '../schemas/segments.js';

function segmentJson(r: SegmentEntity): SegmentJson {
  return {
    id: r.id,
    type: 'segments',
    attributes: {
      name: r.name,
      clonedFrom: r.clonedFrom ?? null,
      segmentSources: r.segmentSources ?? [],
      isDefault: r.isDefault,
      // Stored as the request schemas (Condition, GroupedCondition) accepted them.
      conditions: (r.conditions ?? []) as SegmentJson['attributes']['conditions'],
      groupedCondition: (r.groupedCondition ?? null) as SegmentJson['attributes']['groupedCondition'],
      workflows: (r.workflows ?? []) as SegmentJson['attributes']['workflows'],
      savedViewTemplates: (r.savedViewTemplates ?? []) as SegmentJson['attributes']['savedViewTemplates'],
      createdAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
    },
  };
}

async function loadSegment(em: EntityManager, id: string): Promise<SegmentEntity> {
  const seg = await findSegment(em, id);
  if (!seg) throw notFound('Segment', id);
  return seg;
}

/** Every id must be a source of the workspace (400 naming the first that is not). */
async function checkSources(em: EntityManager, ids: string[]): Promise<string[]> {
  const valid = ids.filter(isUuid).map((id) => id.toLowerCase());
  const known = await existingSourceIds(em, valid);
  ids.forEach((id, i) => {
    if (!known.has(id.toLowerCase())) throw notFoundField(`/segmentSources/${i}`, `${id} is not a source of this workspace`);
  });
  return ids.map((id) => id.toLowerCase());
}

async function checkConditions(q: Queryable, workspaceId: string, body: { conditions?: unknown; groupedCondition?: unknown }): Promise<void> {
  if (body.conditions === undefined && (body.groupedCondition === undefined || body.groupedCondition === null)) return;
  validateSegmentConditions(await loadContactCatalog(q, workspaceId), body);
}

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
    handler: async ({ body, auth, deps, em }) => {
      await ensureDefaultSegment(em, auth.workspaceId);
      const sources = await checkSources(em, body.segmentSources ?? []);
      await checkConditions(deps.pool, auth.workspaceId, body);
      const row = await insertSegment(em, auth.workspaceId, {
        name: body.name.trim(),
        clonedFrom: null,
        segmentSources: sources,
        conditions: body.conditions ?? [],
        groupedCondition: body.groupedCondition ?? null,
        workflows: body.workflows ?? [],
        savedViewTemplates: body.savedViewTemplates ?? [],
      });
      return { data: segmentJson(row) };
    },
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
    handler: async ({ query, auth, deps, em }) => {
      await ensureDefaultSegment(em, auth.workspaceId);
      const q = (query.q ?? '').trim().toLowerCase();
      const rows = await searchSegmentsByName(em, auth.workspaceId, likeContains(q), likePrefix(q), query.limit ?? 10);
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
    handler: async ({ params, body, auth, em }) => {
      const origin = await loadSegment(em, params.id);
      const c = cloneSegmentContent(
        {
          name: origin.name,
          isDefault: origin.isDefault,
          segmentSources: origin.segmentSources ?? [],
          conditions: origin.conditions ?? [],
          groupedCondition: origin.groupedCondition ?? null,
          workflows: origin.workflows ?? [],
          savedViewTemplates: origin.savedViewTemplates ?? [],
        },
        body,
        new Date(),
        origin.isDefault && body.workflowOnly !== true ? await allSourceIds(em) : [],
      );
      const row = await insertSegment(em, auth.workspaceId, {
        name: c.name,
        clonedFrom: origin.id,
        segmentSources: c.segmentSources,
        conditions: c.conditions ?? [],
        groupedCondition: c.groupedCondition ?? null,
        workflows: c.workflows,
        savedViewTemplates: c.savedViewTemplates,
      });
      return { data: segmentJson(row) };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/segments/{id}',
    tag: 'Segments',
    summary: 'Get a segment',
    params: IdParams,
    responses: { 200: SegmentResponse },
    errors: [401, 404, 500],
    handler: async ({ params, em }) => ({ data: segmentJson(await loadSegment(em, params.id)) }),
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
    handler: async ({ params, body, auth, deps, em }) => {
      const seg = await loadSegment(em, params.id);
      if (seg.isDefault) {
        for (const k of ['segmentSources', 'conditions', 'groupedCondition'] as const) {
          if (body[k] !== undefined) throw invalidField(`/${k}`, 'cannot be set on the default segment, which holds every contact');
        }
      }
      const sources = body.segmentSources !== undefined ? await checkSources(em, body.segmentSources) : undefined;
      await checkConditions(deps.pool, auth.workspaceId, {
        conditions: body.conditions ?? (body.groupedCondition !== undefined ? seg.conditions : undefined),
        groupedCondition: body.groupedCondition !== undefined ? body.groupedCondition : body.conditions !== undefined ? seg.groupedCondition : undefined,
      });
      const row = await updateSegment(em, seg, {
        name: body.name?.trim(),
        segmentSources: sources,
        conditions: body.conditions,
        groupedCondition: body.groupedCondition,
        workflows: body.workflows,
        savedViewTemplates: body.savedViewTemplates,
      });
      return { data: segmentJson(row) };
    },
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
    handler: async ({ params, em }) => {
      const seg = await loadSegment(em, params.id);
      if (seg.isDefault) throw conflict('The default segment holds every contact and cannot be deleted', 'default_segment_protected');
      const id = seg.id;
      // A concurrent DELETE that removed it first answered 200: this one answers as if sent after it.
      if (!(await deleteSegment(em, seg))) throw notFound('Segment', params.id);
      return { data: { id, deleted: true as const } };
    },
  }),
];
