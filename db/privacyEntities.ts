/** Entities of the personal-data lifecycle tables (Migration20261128300000_privacy, docs/PRIVACY.md). */
import { defineEntity, p } from '@mikro-orm/core';
import { workspaceOwned } from './tenancy.js';
import { workspaceId } from './platform.js';

export type SuppressionKind = 'email' | 'profileUrl';
export type SuppressionReason = 'erasure' | 'doNotContact';

export const ErasureRequest = defineEntity({
  name: 'ErasureRequest',
  tableName: 'erasure_requests',
  filters: workspaceOwned,
  properties: {
    /** The erasure job's id. */
    id: p.uuid().primary(),
    workspaceId: workspaceId('erasure_requests'),
    /** The request's identifiers, sealed with the keyring; null once the job has ended. */
    identifiers: p.text().nullable(),
    /** What the job decided to remove (object names, workflow ids: no personal data), so a retry removes the same. */
    plan: p.json<Record<string, unknown>>().nullable(),
    /** Counts per store. */
    report: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    completedAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'erasure_requests_workspace', properties: ['workspaceId'] }],
});

export const SuppressionEntry = defineEntity({
  name: 'SuppressionEntry',
  tableName: 'suppression_entries',
  filters: workspaceOwned,
  properties: {
    workspaceId: workspaceId('suppression_entries').primary(),
    /** HMAC-SHA256 (hex) of the normalised identifier under the suppression key. */
    identifierHash: p.text().primary(),
    kind: p.text().$type<SuppressionKind>(),
    reason: p.text().$type<SuppressionReason>(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  checks: [
    { name: 'suppression_entries_kind_check', expression: `kind in ('email','profileUrl')` },
    { name: 'suppression_entries_reason_check', expression: `reason in ('erasure','doNotContact')` },
  ],
});
