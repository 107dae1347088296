/**
 * Sources: where contacts come from (imports, webhooks, social listening). Table `sources`,
 * unique (workspace_id, source_type, normalised_identifier) so that a repeated type + identifier
 * resolves to the existing source (Migration20261121010000_contacts).
 */
import { defineEntity, p } from '@mikro-orm/core';

export const SOURCE_TYPES = [
  'pronetInbound',
  'pronetOutbound',
  'pronetPost',
  'pronetKeywordSearch',
  'pronetJobPosting',
  'importFromWebhook',
] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

export const REFRESH_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type RefreshStatus = (typeof REFRESH_STATUSES)[number];

export interface FieldMappingEntry {
  sourceFieldName: string;
  targetFieldName: string;
}

export interface SourceMeta {
  config?: { fieldMapping?: FieldMappingEntry[]; [k: string]: unknown };
  [k: string]: unknown;
}

export interface RunFrequency {
  numberOfPastDaysToSync?: string;
  periodicInterval?: string;
}

export const Source = defineEntity({
  name: 'Source',
  tableName: 'sources',
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid(),
    sourceType: p.string().$type<SourceType>(),
    /** As given by the caller; null for keyword / job-posting sources. */
    sourceIdentifier: p.text().nullable(),
    /** Normalised identity of the source within its type (URL key, keyword, …). */
    normalisedIdentifier: p.text(),
    sourceMeta: p.json<SourceMeta>().default({} as never),
    runFrequency: p.json<RunFrequency>().nullable(),
    refreshStatus: p.string().$type<RefreshStatus>().nullable(),
    /** Temporal Schedule id while a runFrequency is set. */
    scheduleId: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
