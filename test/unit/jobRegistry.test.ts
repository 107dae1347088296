/**
 * The workflow contract (workflows/contract/) names workflows by their type name, so callers
 * need no workflow code: each name must be a workflow the worker registers, and each job's
 * registered input must be what its workflow takes (checked by the compiler, below).
 */
import { describe, expect, it } from 'vitest';
import * as workflows from '../../workflows/index.js';
import { JOBS, type JobKey, type JobWorkflowOf } from '../../workflows/contract/jobs.js';
import { MAINTENANCE_WORKFLOWS } from '../../workflows/contract/maintenance.js';
import { MEDIA_WORKFLOWS } from '../../workflows/contract/media.js';
import { PUBLISH_WORKFLOWS } from '../../workflows/contract/publishing.js';
import { SOURCE_WORKFLOWS } from '../../workflows/contract/sources.js';

/** Each job's workflow function, typed as the registry says it is: a mismatch fails `tsc`. */
const jobWorkflows: { [K in JobKey]: JobWorkflowOf<K> } = {
  enrichment: workflows.enrichmentWorkflow,
  'bulk-enrichment': workflows.bulkEnrichmentWorkflow,
  'bulk-upsert': workflows.bulkUpsertContactsWorkflow,
  'source-pull': workflows.sourcePullWorkflow,
  'import-verified-companies': workflows.importVerifiedCompaniesWorkflow,
  erasure: workflows.erasureWorkflow,
  'subject-access': workflows.subjectAccessWorkflow,
};

const registered = workflows as unknown as Record<string, unknown>;

describe('workflow contract', () => {
  it('every job key names the workflow the worker registers under that type name', () => {
    for (const [key, { workflowType }] of Object.entries(JOBS)) expect(registered[workflowType], key).toBe(jobWorkflows[key as JobKey]);
  });

  it('every workflow type name in the contract is a workflow of the bundle', () => {
    const names = [PUBLISH_WORKFLOWS, MEDIA_WORKFLOWS, SOURCE_WORKFLOWS, MAINTENANCE_WORKFLOWS].flatMap((t) => Object.values(t));
    expect(names.filter((n) => typeof registered[n] !== 'function')).toEqual([]);
    // and the check finds a wrong one
    expect(typeof registered['publishPostWorkflw']).not.toBe('function');
  });
});
