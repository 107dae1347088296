/**
 * The post field catalog for `POST /v1/posts/filter-posts`, compiled by the one condition
 * compiler (parsed by domain/conditions.ts; the columns are db/postColumns.ts). Paths are the
 * Post property names.
 */
import { catalogOf, type CatalogField, type FieldType } from './conditions.js';

function field(path: string, type: FieldType, sortable: boolean): CatalogField {
  return { path, type, output: [path], filteringSupported: true, sortable };
}

export const POST_SORT_FIELDS = ['createdAt', 'updatedAt', 'scheduledTime', 'publishedAt'] as const;

export const postCatalog = catalogOf([
  field('status', 'string', false),
  field('providerId', 'uuid', false),
  field('parentPostId', 'uuid', false),
  field('externalPost', 'boolean', false),
  field('scheduledTime', 'date', true),
  field('publishedAt', 'date', true),
  field('createdAt', 'date', true),
  field('updatedAt', 'date', true),
]);
