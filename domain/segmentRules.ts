/**
 * Business rules of segments (API-SPEC "Segments", DESIGN §4): what a clone copies and what it
 * is called.
 *
 * `POST /segments/{id}/clone` always copies `workflows`. Without `workflowOnly` it also copies
 * `segmentSources`, the conditions and the saved-view templates; with `workflowOnly: true` those
 * start empty. A clone is never the default segment and records `clonedFrom`.
 */

export interface SegmentContent {
  name: string;
  segmentSources: string[];
  conditions: unknown[] | null;
  groupedCondition: unknown | null;
  workflows: unknown[];
  savedViewTemplates: unknown[];
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

export function cloneSegmentContent(
  origin: SegmentContent,
  opts: CloneOptions,
  now: Date,
): SegmentContent {
  const workflowOnly = opts.workflowOnly === true;
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
