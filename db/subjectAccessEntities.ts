/**
 * Entities of dataset opt-outs and subject-access requests (Migration20261128640000_dataset_opt_outs_subject_access,
 * docs/PRIVACY.md). Kept apart from privacyEntities.ts (erasure, suppression).
 */
import { defineEntity, p } from '@mikro-orm/core';
import { workspaceOwned } from './tenancy.js';
import { workspaceId } from './platform.js';

export type DatasetOptOutKind = 'email' | 'profileUrl';

/** The operator's opt-out list of the global dataset: keyed hashes only. Global: no workspace. */
export const DatasetOptOut = defineEntity({
  name: 'DatasetOptOut',
  tableName: 'dataset_opt_outs',
  properties: {
    /** HMAC-SHA256 (hex) of the normalised identifier under the dataset opt-out key. */
    identifierHash: p.text().primary(),
    kind: p.text().$type<DatasetOptOutKind>(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  checks: [{ name: 'dataset_opt_outs_kind_check', expression: `kind in ('email','profileUrl')` }],
});

export const AccessRequest = defineEntity({
  name: 'AccessRequest',
  tableName: 'access_requests',
  filters: workspaceOwned,
  properties: {
    /** The access job's id. */
    id: p.uuid().primary(),
    workspaceId: workspaceId('access_requests'),
    /** The request's identifiers, sealed with the keyring; null once the job has ended. */
    identifiers: p.text().nullable(),
    /** The contact ids the identifiers resolved to, so a retry exports the same; null once the job has ended. */
    plan: p.json<Record<string, unknown>>().nullable(),
    /** The job's result once the document is written: object key, counts, link and its expiry. */
    result: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    completedAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'access_requests_workspace', properties: ['workspaceId'] }],
});
