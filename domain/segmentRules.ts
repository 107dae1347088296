/**
 * Business rules of segments (API-SPEC "Segments", DESIGN §4): what a clone copies and what it
 * is called.
 *
 * `POST /segments/{id}/clone` always copies `workflows`. Without `workflowOnly` it also copies
 * `segmentSources`, the conditions and the saved-view templates; with `workflowOnly: true` those
 * start empty. A clone is never the default segment and records `clonedFrom`.
 *
 * The default segment holds every contact by being the default, not through sources or
 * conditions: its copy is a normal segment listing every source of the workspace at the time of
 * the clone (so it holds the same contacts then). Its `workflowOnly` clone copies the workflows only.
 */

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
  'The default segment holds every contact by being the default (it has no sources or conditions): its copy is a normal segment whose ' +
  '`segmentSources` are all the sources of the workspace at the time of the clone, so it holds the same contacts then (a source created ' +
  'later is not in it); with `workflowOnly: true` only its workflows are copied.';

/**
 * The content of a clone. `workspaceSources`: every source id of the workspace, the sources of a
 * copy of the default segment (which holds every contact by being the default, not by its sources).
 */
export function cloneSegmentContent(origin: CloneOrigin, opts: CloneOptions, now: Date, workspaceSources: readonly string[] = []): SegmentContent {
  const workflowOnly = opts.workflowOnly === true;
  const name = opts.name?.trim() ? opts.name.trim() : defaultCloneName(origin.name, now);
  return {
    name,
    workflows: copy(origin.workflows ?? []),
    segmentSources: workflowOnly ? [] : [...(origin.isDefault ? workspaceSources : (origin.segmentSources ?? []))],
    conditions: workflowOnly ? null : copy(origin.conditions ?? null),
    groupedCondition: workflowOnly ? null : copy(origin.groupedCondition ?? null),
    savedViewTemplates: workflowOnly ? [] : copy(origin.savedViewTemplates ?? []),
  };
}
