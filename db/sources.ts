/**
 * Sources: where contacts come from (imports, webhooks, social listening). Table `sources`,
 * unique (workspace_id, source_type, normalised_identifier) so that a repeated type + identifier
 * resolves to the existing source (Migration20261121010000_contacts).
 */
import { defineEntity, p } from '@mikro-orm/core';

import type { FieldMappingEntry, RefreshStatus, SourceType } from '../domain/sourceRules.js';
import type { RunFrequency } from '../domain/runFrequency.js';
import type { Queryable } from './pool.js';

// The rules and shapes of sources live in domain/ (one source of truth); re-exported for db users.
export { REFRESH_STATUSES, SOURCE_TYPES } from '../domain/sourceRules.js';
export type { FieldMappingEntry, RefreshStatus, SourceType } from '../domain/sourceRules.js';
export type { RunFrequency } from '../domain/runFrequency.js';

export interface SourceMeta {
  config?: { fieldMapping?: FieldMappingEntry[]; [k: string]: unknown };
  [k: string]: unknown;
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
    refreshStatus: p.string().$type<Exclude<RefreshStatus, null>>().nullable(),
    /** Temporal Schedule id while a runFrequency is set. */
    scheduleId: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/**
 * Display fields a pull learned about a listening source's subject (`sourceMeta.socialName`,
 * `profileImageUrl`): the name replaces only the placeholder set at creation (the handle) or an
 * empty one, never a name the client chose; the picture fills only an empty one.
 */
export async function learnSourceDisplay(db: Queryable, workspaceId: string, sourceId: string, subject: { name?: string | null; profileImageUrl?: string | null }): Promise<void> {
  if (!subject.name && !subject.profileImageUrl) return;
  await db.query(
    `update sources set source_meta = source_meta
       || case when $3::text is not null and (coalesce(source_meta->>'socialName', '') = '' or source_meta->>'socialName' = source_meta->>'socialHandle')
               then jsonb_build_object('socialName', $3::text) else '{}'::jsonb end
       || case when $4::text is not null and coalesce(source_meta->>'profileImageUrl', '') = ''
               then jsonb_build_object('profileImageUrl', $4::text) else '{}'::jsonb end
     where id = $1 and workspace_id = $2`,
    [sourceId, workspaceId, subject.name ?? null, subject.profileImageUrl ?? null],
  );
}
