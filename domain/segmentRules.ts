/**
 * Business rules of segments (API-SPEC "Segments", DESIGN §4): what a clone copies and what it
 * is called.
 *
 * `POST /segments/{id}/clone` always copies `workflows`. Without `workflowOnly` it also copies
 * `segmentSources`, the conditions and the saved-view templates; with `workflowOnly: true` those
 * start empty. A clone is never the default segment and records `clonedFrom`.
 *
 * The default segment holds every contact by being the default, not through sources or
 * conditions, so a full copy of it could not hold what it holds: cloning it is a 409
 * `default_segment_not_cloneable`. Its `workflowOnly` clone (workflows only, empty membership by
 * the contract's own definition) is allowed.
 */
import { ConflictError } from './errors.js';

export interface SegmentContent {
  name: string;
  segmentSources: string[];
  conditions: unknown[] | null;
  groupedCondition: unknown | null;
  workflows: unknown[];
  savedViewTemplates: unknown[];
}

export interface CloneOrigin extends SegmentContent {
  isDefault: boolean;
}

export interface CloneOptions {
  name?: string;
  workflowOnly?: boolean;
}

/** `Copy of {name} - {ISO timestamp}` (timestamp in ISO 8601 UTC with milliseconds). */
export function defaultCloneName(name: string, now: Date): string {
  return `Copy of ${name} - ${now.toISOString()}`;
}

/** Deep copy of JSON values, so the clone never shares structure with its origin. */
function copy<T>(v: T): T {
  return v === null || v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

export const DEFAULT_SEGMENT_CLONE_DOC =
  'The default segment holds every contact by being the default (it has no sources or conditions), so a copy could not hold the same contacts: ' +
  'cloning it is a 409 `default_segment_not_cloneable`, except with `workflowOnly: true`, which copies only its workflows.';

export function cloneSegmentContent(origin: CloneOrigin, opts: CloneOptions, now: Date): SegmentContent {
  const workflowOnly = opts.workflowOnly === true;
  if (origin.isDefault && !workflowOnly)
    throw new ConflictError(
      'The default segment cannot be cloned: it holds every contact by being the default, which a copy is not; clone it with workflowOnly: true to copy its workflows',
      'default_segment_not_cloneable',
    );
  const name = opts.name?.trim() ? opts.name.trim() : defaultCloneName(origin.name, now);
  return {
    name,
    workflows: copy(origin.workflows ?? []),
    segmentSources: workflowOnly ? [] : [...(origin.segmentSources ?? [])],
    conditions: workflowOnly ? null : copy(origin.conditions ?? null),
    groupedCondition: workflowOnly ? null : copy(origin.groupedCondition ?? null),
    savedViewTemplates: workflowOnly ? [] : copy(origin.savedViewTemplates ?? []),
  };
}
