/**
 * pronet (member) and pronetPage (organization) = LinkedIn REST (Community Management API).
 * Every call carries `Authorization: Bearer <token>`, `LinkedIn-Version: YYYYMM` and
 * `X-Restli-Protocol-Version: 2.0.0`.
 *
 *   images:    POST /rest/images?action=initializeUpload {initializeUploadRequest:{owner}}
 *              → {value:{uploadUrl, image}}; PUT bytes to uploadUrl
 *   documents: POST /rest/documents?action=initializeUpload (same shape, `document`)
 *   videos:    POST /rest/videos?action=initializeUpload {initializeUploadRequest:{owner, fileSizeBytes, uploadCaptions, uploadThumbnail}}
 *              → {value:{video, uploadToken, uploadInstructions:[{uploadUrl, firstByte, lastByte}]}};
 *              PUT each part (ETag of each answer); POST /rest/videos?action=finalizeUpload
 *              {finalizeUploadRequest:{video, uploadToken, uploadedPartIds}}
 *   post:      POST /rest/posts {author, commentary, visibility, distribution, lifecycleState: PUBLISHED, content?}
 *              → 201, empty body, URN in `x-restli-id`
 *   reshare:   POST /rest/posts {…, reshareContext:{parent}}
 *   comment:   POST /rest/socialActions/{urn}/comments {actor, object, message:{text}} → 201
 *   look-up:   GET /rest/posts?q=author&author={urn}&count=…  (X-RestLi-Method: FINDER)
 *              GET /rest/socialActions/{urn}/comments
 */
import {
  ProviderFailure,
  failureFromStatus,
  httpCall,
  jsonBody,
  shortReason,
  type CreateOp,
  type MediaSource,
  type Published,
  type SocialAccount,
  type SocialAdapter,
} from './social.js';

export const LINKEDIN_API_BASE_URL = 'https://api.linkedin.com';
/** The Marketing API version this adapter speaks (YYYYMM). */
export const LINKEDIN_VERSION = '202610';

const base = (a: SocialAccount) => (a.apiBaseUrl ?? LINKEDIN_API_BASE_URL).replace(/\/$/, '');
const headers = (a: SocialAccount, json = true): Record<string, string> => ({
  authorization: `Bearer ${a.accessToken}`,
  'linkedin-version': LINKEDIN_VERSION,
  'x-restli-protocol-version': '2.0.0',
  ...(json ? { 'content-type': 'application/json' } : {}),
});

export function authorUrn(a: SocialAccount): string {
  if (a.externalAccountId.startsWith('urn:li:')) return a.externalAccountId;
  return `urn:li:${a.provider === 'pronetPage' ? 'organization' : 'person'}:${a.externalAccountId}`;
}

export const postUrl = (urn: string) => `https://www.linkedin.com/feed/update/${urn}/`;
export const commentUrl = (threadUrn: string, commentUrn: string) =>
  `https://www.linkedin.com/feed/update/${threadUrn}/?commentUrn=${encodeURIComponent(commentUrn)}`;

async function fail(res: Response): Promise<ProviderFailure> {
  const body = await jsonBody(res);
  const msg = shortReason([body.code, body.message].filter((v) => typeof v === 'string' && v).join(': ')) ?? '';
  return failureFromStatus(res, msg);
}

async function putBytes(a: SocialAccount, uploadUrl: string, bytes: Buffer): Promise<Response> {
  const res = await httpCall(a, uploadUrl, {
    method: 'PUT',
    headers: { authorization: `Bearer ${a.accessToken}`, 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  if (!res.ok) throw await fail(res);
  return res;
}

async function uploadMedia(a: SocialAccount, m: MediaSource): Promise<string> {
  const owner = authorUrn(a);
  if (m.contentType.startsWith('image/') || m.contentType === 'application/pdf') {
    const kind = m.contentType === 'application/pdf' ? 'documents' : 'images';
    const init = await httpCall(a, `${base(a)}/rest/${kind}?action=initializeUpload`, {
      method: 'POST',
      headers: headers(a),
      body: JSON.stringify({ initializeUploadRequest: { owner } }),
    });
    if (!init.ok) throw await fail(init);
    const v = (await jsonBody(init)).value as { uploadUrl?: string; image?: string; document?: string } | undefined;
    const urn = kind === 'images' ? v?.image : v?.document;
    if (!v?.uploadUrl || !urn) throw new ProviderFailure('transient', `${kind} initializeUpload answered without an upload URL`);
    await (await putBytes(a, v.uploadUrl, await m.read(0, m.size))).arrayBuffer();
    return urn;
  }
  if (m.contentType.startsWith('video/')) {
    const init = await httpCall(a, `${base(a)}/rest/videos?action=initializeUpload`, {
      method: 'POST',
      headers: headers(a),
      body: JSON.stringify({ initializeUploadRequest: { owner, fileSizeBytes: m.size, uploadCaptions: false, uploadThumbnail: false } }),
    });
    if (!init.ok) throw await fail(init);
    const v = (await jsonBody(init)).value as
      | { video?: string; uploadToken?: string; uploadInstructions?: Array<{ uploadUrl: string; firstByte: number; lastByte: number }> }
      | undefined;
    if (!v?.video || !v.uploadInstructions?.length) throw new ProviderFailure('transient', 'videos initializeUpload answered without upload instructions');
    const etags: string[] = [];
    for (const part of v.uploadInstructions) {
      const res = await putBytes(a, part.uploadUrl, await m.read(part.firstByte, part.lastByte - part.firstByte + 1));
      const etag = res.headers.get('etag');
      await res.arrayBuffer();
      if (!etag) throw new ProviderFailure('transient', 'video part upload answered without an ETag');
      etags.push(etag);
    }
    const fin = await httpCall(a, `${base(a)}/rest/videos?action=finalizeUpload`, {
      method: 'POST',
      headers: headers(a),
      body: JSON.stringify({ finalizeUploadRequest: { video: v.video, uploadToken: v.uploadToken ?? '', uploadedPartIds: etags } }),
    });
    if (!fin.ok) throw await fail(fin);
    await fin.arrayBuffer();
    return v.video;
  }
  throw new ProviderFailure('invalid_input', `pronet does not take ${m.contentType} media`);
}

function postBody(a: SocialAccount, text: string): Record<string, unknown> {
  return {
    author: authorUrn(a),
    commentary: text,
    visibility: 'PUBLIC',
    distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
    lifecycleState: 'PUBLISHED',
    isReshareDisabledByAuthor: false,
  };
}

/** LinkedIn's "little" text format escapes these characters in `commentary`. */
export function escapeLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, (c) => `\\${c}`);
}

async function createPost(a: SocialAccount, body: Record<string, unknown>, beforeSend?: () => Promise<void>): Promise<Published> {
  await beforeSend?.();
  const res = await httpCall(a, `${base(a)}/rest/posts`, { method: 'POST', headers: headers(a), body: JSON.stringify(body), creates: true });
  if (!res.ok) throw await fail(res);
  await res.arrayBuffer();
  const urn = res.headers.get('x-restli-id');
  if (!urn) throw new ProviderFailure('outcome_unknown', 'POST /rest/posts answered without x-restli-id');
  return { externalId: urn, externalUrl: postUrl(urn) };
}

async function createComment(a: SocialAccount, threadUrn: string, text: string, media: MediaSource[], beforeSend?: () => Promise<void>): Promise<Published> {
  const body: Record<string, unknown> = { actor: authorUrn(a), object: threadUrn, message: { text } };
  if (media.length) {
    if (media.length > 1 || !media[0]!.contentType.startsWith('image/')) throw new ProviderFailure('invalid_input', 'a pronet comment takes at most one image');
    body.content = [{ entity: { image: await uploadMedia(a, media[0]!) } }];
  }
  await beforeSend?.();
  const res = await httpCall(a, `${base(a)}/rest/socialActions/${encodeURIComponent(threadUrn)}/comments`, {
    method: 'POST',
    headers: headers(a),
    body: JSON.stringify(body),
    creates: true,
  });
  if (!res.ok) throw await fail(res);
  const json = await jsonBody(res);
  const urn = res.headers.get('x-restli-id') ?? (typeof json.$URN === 'string' ? json.$URN : null);
  if (!urn) throw new ProviderFailure('outcome_unknown', 'comment created without a URN in the answer');
  return { externalId: urn, externalUrl: commentUrl(threadUrn, urn) };
}

interface ListedPost {
  id: string;
  commentary?: string;
  createdAt?: number;
  reshareContext?: { parent?: string };
}
interface ListedComment {
  $URN?: string;
  id?: string;
  actor?: string;
  message?: { text?: string };
  created?: { time?: number };
}

export const pronetAdapter: SocialAdapter = {
  async create(a, op) {
    if (op.type === 'post') {
      const body = postBody(a, escapeLittleText(op.text));
      if (op.media.length) {
        const urns: string[] = [];
        for (const m of op.media) urns.push(await uploadMedia(a, m));
        if (urns.length === 1) body.content = { media: { id: urns[0] } };
        else if (urns.every((u) => u.startsWith('urn:li:image:'))) body.content = { multiImage: { images: urns.map((id) => ({ id })) } };
        else throw new ProviderFailure('invalid_input', 'pronet takes several images, or one video or document, per post');
      }
      return createPost(a, body, op.beforeSend);
    }
    if (op.type === 'reshare') {
      if (!op.parentExternalId) throw new ProviderFailure('invalid_input', 'a reshare needs the parent post URN');
      return createPost(a, { ...postBody(a, escapeLittleText(op.text)), reshareContext: { parent: op.parentExternalId } }, op.beforeSend);
    }
    if (!op.parentExternalId) throw new ProviderFailure('invalid_input', 'a comment needs the post it answers');
    return createComment(a, op.parentExternalId, op.text, op.media, op.beforeSend);
  },

  async find(a, op, since) {
    const after = since.getTime() - 5_000;
    if (op.type === 'post' || op.type === 'reshare') {
      const url = `${base(a)}/rest/posts?q=author&author=${encodeURIComponent(authorUrn(a))}&count=20&sortBy=LAST_MODIFIED`;
      const res = await httpCall(a, url, { method: 'GET', headers: { ...headers(a, false), 'x-restli-method': 'FINDER' } });
      if (!res.ok) throw await fail(res);
      const posts = ((await jsonBody(res)).elements as ListedPost[] | undefined) ?? [];
      const want = escapeLittleText(op.text);
      const hit = posts.find(
        (p) =>
          (p.commentary ?? '') === want &&
          (p.createdAt === undefined || p.createdAt >= after) &&
          (op.type === 'reshare' ? p.reshareContext?.parent === op.parentExternalId : !p.reshareContext),
      );
      return hit ? { externalId: hit.id, externalUrl: postUrl(hit.id) } : null;
    }
    const thread = op.parentExternalId!;
    const res = await httpCall(a, `${base(a)}/rest/socialActions/${encodeURIComponent(thread)}/comments?count=50`, { method: 'GET', headers: headers(a, false) });
    if (!res.ok) throw await fail(res);
    const comments = ((await jsonBody(res)).elements as ListedComment[] | undefined) ?? [];
    const me = authorUrn(a);
    const hit = comments.find((c) => c.actor === me && c.message?.text === op.text && (c.created?.time === undefined || c.created.time >= after));
    const urn = hit?.$URN ?? (hit?.id ? `urn:li:comment:(${thread},${hit.id})` : null);
    return urn ? { externalId: urn, externalUrl: commentUrl(thread, urn) } : null;
  },
};

export type { CreateOp };
