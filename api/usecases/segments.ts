/**
 * The segment writes as use cases (create, clone, update), and what they and the segment routes
 * share: the response shape, the 404 load and the checks of sources and conditions. Every
 * statement goes through the request's `scope`; api/routes/segments.ts only adapts HTTP to them.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { loadContactCatalog } from '../../db/contactRead.js';
import type { WorkspaceScope } from '../../db/scope.js';
import { validateSegmentConditions } from '../../db/segmentMembership.js';
import { ensureDefaultSegment, findSegment, insertSegment, updateSegment, type SegmentEntity } from '../../db/segments.js';
import { allSourceIds, existingSourceIds } from '../../db/sources.js';
import { invalidField } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import { cloneSegmentContent } from '../../domain/segmentRules.js';
import { notFound, notFoundField } from '../errors.js';
import type { CloneSegmentBody, CreateSegmentBody, PatchSegmentBody, SegmentJson } from '../schemas/segments.js';

export function segmentJson(r: SegmentEntity): SegmentJson {
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

/** The segment of the workspace, or a 404. */
export async function loadSegment(em: EntityManager, id: string): Promise<SegmentEntity> {
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

/** Conditions written to a segment must compile against the workspace's contact catalog (400 naming the field). */
async function checkConditions(scope: WorkspaceScope, body: { conditions?: unknown; groupedCondition?: unknown }): Promise<void> {
  if (body.conditions === undefined && (body.groupedCondition === undefined || body.groupedCondition === null)) return;
  validateSegmentConditions(await loadContactCatalog(scope.db, scope.workspaceId), body);
}

/** `POST /segments`: the default segment made first if the workspace has none yet. */
export async function createSegment(scope: WorkspaceScope, body: CreateSegmentBody) {
  await ensureDefaultSegment(scope.em, scope.workspaceId);
  const sources = await checkSources(scope.em, body.segmentSources ?? []);
  await checkConditions(scope, body);
  const row = await insertSegment(scope, {
    name: body.name.trim(),
    clonedFrom: null,
    segmentSources: sources,
    conditions: body.conditions ?? [],
    groupedCondition: body.groupedCondition ?? null,
    workflows: body.workflows ?? [],
    savedViewTemplates: body.savedViewTemplates ?? [],
  });
  return { data: segmentJson(row) };
}

/** `POST /segments/{id}/clone`: a clone of the default segment names every source of the workspace. */
export async function cloneSegment(scope: WorkspaceScope, id: string, body: CloneSegmentBody) {
  const origin = await loadSegment(scope.em, id);
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
    origin.isDefault && body.workflowOnly !== true ? await allSourceIds(scope.em) : [],
  );
  const row = await insertSegment(scope, {
    name: c.name,
    clonedFrom: origin.id,
    segmentSources: c.segmentSources,
    conditions: c.conditions ?? [],
    groupedCondition: c.groupedCondition ?? null,
    workflows: c.workflows,
    savedViewTemplates: c.savedViewTemplates,
  });
  return { data: segmentJson(row) };
}

/** `PATCH /segments/{id}`: what the default segment holds (every contact) cannot be narrowed. */
export async function patchSegment(scope: WorkspaceScope, id: string, body: PatchSegmentBody) {
  const seg = await loadSegment(scope.em, id);
  if (seg.isDefault) {
    for (const k of ['segmentSources', 'conditions', 'groupedCondition'] as const) {
      if (body[k] !== undefined) throw invalidField(`/${k}`, 'cannot be set on the default segment, which holds every contact');
    }
  }
  const sources = body.segmentSources !== undefined ? await checkSources(scope.em, body.segmentSources) : undefined;
  await checkConditions(scope, {
    conditions: body.conditions ?? (body.groupedCondition !== undefined ? seg.conditions : undefined),
    groupedCondition: body.groupedCondition !== undefined ? body.groupedCondition : body.conditions !== undefined ? seg.groupedCondition : undefined,
  });
  const row = await updateSegment(scope.em, seg, {
    name: body.name?.trim(),
    segmentSources: sources,
    conditions: body.conditions,
    groupedCondition: body.groupedCondition,
    workflows: body.workflows,
    savedViewTemplates: body.savedViewTemplates,
  });
  return { data: segmentJson(row) };
}
