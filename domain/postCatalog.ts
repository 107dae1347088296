/**
 * The post field catalog for `POST /v1/posts/filter-posts`, compiled by the one condition
 * compiler (domain/conditions.ts). Paths are the Post property names; the SQL reads table `p`.
 */
import { catalogOf, type CatalogField, type FieldType } from './conditions.js';

function field(path: string, type: FieldType, sql: string, opts: { nullable: boolean; sortable: boolean }): CatalogField {
  return { path, type, sql, output: [path], filteringSupported: true, ...opts };
}

export const POST_SORT_FIELDS = ['createdAt', 'updatedAt', 'scheduledTime', 'publishedAt'] as const;

export const postCatalog = catalogOf(
  [
    field('status', 'string', 'p.status', { nullable: false, sortable: false }),
    field('providerId', 'uuid', 'p.provider_id', { nullable: false, sortable: false }),
    field('parentPostId', 'uuid', 'p.parent_post_id', { nullable: true, sortable: false }),
    field('externalPost', 'boolean', 'p.external_post', { nullable: false, sortable: false }),
    field('scheduledTime', 'date', 'p.scheduled_time', { nullable: true, sortable: true }),
    field('publishedAt', 'date', 'p.published_at', { nullable: true, sortable: true }),
    field('createdAt', 'date', 'p.created_at', { nullable: false, sortable: true }),
    field('updatedAt', 'date', 'p.updated_at', { nullable: false, sortable: true }),
  ],
  'p.id',
);
