/** The column of each post catalog field (domain/postCatalog.ts): table `posts p`. */
import { withColumns, type FieldColumn } from './conditionSql.js';
import { postCatalog } from '../domain/postCatalog.js';

const COLUMNS: Record<string, FieldColumn> = {
  status: { sql: 'p.status', nullable: false },
  providerId: { sql: 'p.provider_id', nullable: false },
  parentPostId: { sql: 'p.parent_post_id', nullable: true },
  externalPost: { sql: 'p.external_post', nullable: false },
  scheduledTime: { sql: 'p.scheduled_time', nullable: true },
  publishedAt: { sql: 'p.published_at', nullable: true },
  createdAt: { sql: 'p.created_at', nullable: false },
  updatedAt: { sql: 'p.updated_at', nullable: false },
};

export const postColumns = withColumns(postCatalog, (f) => COLUMNS[f.path]!, 'p.id');
