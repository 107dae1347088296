/**
 * `POST /v1/posts/filter-posts` as one use case: the sort checked, the pagination token read, one
 * keyset page of the workspace's posts and their total through the request's `scope`, the page
 * shaped for the response. The route only adapts HTTP to it.
 */
import { filterPostsPage } from '../../db/posts.js';
import type { WorkspaceScope } from '../../db/scope.js';
import { decodeToken, pageMeta, queryFingerprint, type TokenPayload } from '../../domain/pagination.js';
import { postJson, type FilterPostsBody } from '../schemas/posts.js';

export async function listPosts(scope: WorkspaceScope, secret: string, body: FilterPostsBody) {
  const limit = body.limit ?? 50;
  // A field sorted on again adds nothing: its first mention is kept (as `fields` lists keep theirs).
  const sortInput = body.sort?.length ? body.sort.filter((s, i, all) => all.findIndex((o) => o.field === s.field) === i) : [{ field: 'createdAt', direction: 'desc' }];
  const fingerprint = queryFingerprint(scope.workspaceId, { r: 'posts', c: body.conditions ?? null, g: body.groupedCondition ?? null, s: sortInput });
  const from: TokenPayload | undefined = body.paginationToken ? decodeToken(secret, fingerprint, body.paginationToken) : undefined;
  const { rows, total, keyOf } = await filterPostsPage(scope, { filter: body, sort: sortInput, from, limit });
  const page = pageMeta({
    secret,
    fingerprint,
    rows,
    limit,
    totalRecords: total,
    keyOf: (r) => keyOf(r.sortRow),
    from,
  });
  return { data: page.data.map((r) => postJson(r.post)), meta: page.meta };
}
