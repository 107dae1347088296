/**
 * `POST /v1/posts/{postId}/reposting` as one use case: in one transaction of the request's entity
 * manager, the parent post locked and checked (a draft or scheduled original), every target account
 * checked (connected, not the parent's own, listed once, able to reshare the parent's kind), the
 * configuration stored and the repost children replaced (or cancelled when disabled). The route
 * only checks the plan and adapts HTTP to it.
 */
import { integrationProvider } from '../../db/integrations.js';
import { cancelRepostChildren, replaceRepostChildren, setPostAutomation } from '../../db/posts.js';
import type { WorkspaceScope } from '../../db/scope.js';
import { invalidField } from '../../domain/errors.js';
import { providerKindsCompatible } from '../../domain/social.js';
import { conflict } from '../errors.js';
import { committedPost, connectedProvider, lockedPostOr404 } from '../postLoaders.js';
import { postJson, type RepostingBody } from '../schemas/posts.js';

export async function configureReposting(scope: WorkspaceScope, postId: string, { reposting }: RepostingBody) {
  const { em } = scope;
  const { enable, reposts } = reposting;
  const parentId = await em.transactional(async (tx) => {
    const parent = await lockedPostOr404(tx, postId);
    if (parent.parentPostId) throw conflict('A repost child cannot be reposted; configure its parent', 'invalid_post_state');
    if (parent.externalPost) throw conflict('A comment on an external post cannot be reposted', 'invalid_post_state');
    if (!['draft', 'scheduled'].includes(parent.status)) {
      throw conflict(`Reposting can be configured on a draft or scheduled post; this one is ${parent.status}`, 'invalid_post_state');
    }
    const parentKind = await integrationProvider(em, parent.providerId);
    const seen = new Set<string>();
    for (const [i, t] of reposts.entries()) {
      const path = `/reposting/reposts/${i}/providerId`;
      const id = t.providerId.toLowerCase();
      const kind = await connectedProvider(em, id, path);
      if (id === parent.providerId) throw invalidField(path, 'is the account that publishes the post itself');
      if (seen.has(id)) throw invalidField(path, 'is listed twice');
      if (!providerKindsCompatible(parentKind, kind)) throw invalidField(path, `is a ${kind} account and cannot reshare a ${parentKind} post`);
      seen.add(id);
    }
    const targets = reposts.map((t) => ({ providerId: t.providerId.toLowerCase(), scheduleInSecs: t.scheduleInSecs }));
    const automation = { ...parent.automation, crossAccountRepostConfig: { enabled: enable, providersConfig: targets } };
    await setPostAutomation(tx, parent.id, automation);
    if (enable) await replaceRepostChildren(tx, parent, targets);
    else await cancelRepostChildren(tx, parent.id);
    return parent.id;
  });
  return { data: postJson(await committedPost(em, parentId)) };
}
