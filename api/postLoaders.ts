/**
 * How the post routes (api/routes/posts.ts, api/routes/publishing.ts) load the post a path names
 * and check the integration a body names: one 404 and one 400 for both files.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid, type Provider } from '../domain/social.js';
import { connectedIntegrationProvider } from '../db/integrations.js';
import { findPost, lockPost, type PostEntity } from '../db/posts.js';
import { notFound, notFoundField } from './errors.js';

/** The post `id` of the workspace, or 404. */
export async function postOr404(em: EntityManager, id: string): Promise<PostEntity> {
  const post = isUuid(id) ? await findPost(em, id.toLowerCase()) : null;
  if (!post) throw notFound('Post', id);
  return post;
}

/** The post `id` of the workspace locked in the transaction `tx` (read again even when the request already holds it), or 404. */
export async function lockedPostOr404(tx: EntityManager, id: string): Promise<PostEntity> {
  const post = isUuid(id) ? await lockPost(tx, id.toLowerCase()) : null;
  if (!post) throw notFound('Post', id);
  return post;
}

/** The post as committed, or null when it is gone (a fresh fork: the request's identity map may hold an older copy). */
export const committedPostOrNull = async (em: EntityManager, id: string): Promise<PostEntity | null> => findPost(em.fork(), id);

/** The post as committed (a fresh fork: the request's identity map may hold an older copy). */
export const committedPost = async (em: EntityManager, id: string): Promise<PostEntity> => (await committedPostOrNull(em, id))!;

/** The kind of the connected integration `id` of the workspace, or a 400 naming `path`. */
export async function connectedProvider(em: EntityManager, id: string, path: string): Promise<Provider> {
  const provider = isUuid(id) ? await connectedIntegrationProvider(em, id.toLowerCase()) : null;
  if (!provider) throw notFoundField(path, 'is not a connected integration of this workspace');
  return provider;
}
