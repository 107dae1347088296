/**
 * microblog = X API v2, acting as the user with an OAuth 2.0 user access token
 * (`Authorization: Bearer <token>`).
 *
 *   media (images):      POST /2/media/upload  multipart {media, media_category=tweet_image}
 *   media (video, gif):  POST /2/media/upload/initialize  {media_type, total_bytes, media_category}
 *                        POST /2/media/upload/{id}/append   multipart {media, segment_index}
 *                        POST /2/media/upload/{id}/finalize
 *                        GET  /2/media/upload?command=STATUS&media_id={id}  while processing
 *   post:                POST /2/tweets {text, media?: {media_ids}, reply?: {in_reply_to_tweet_id}} → 201 {data:{id,text}}
 *   reshare:             POST /2/users/{userId}/retweets {tweet_id} → 200 {data:{retweeted:true}} (idempotent)
 *   look-up:             GET  /2/users/{userId}/tweets?max_results=…&tweet.fields=created_at,referenced_tweets
 *
 * X answers duplicate text with 403: that is the content being refused (invalid input), not the
 * credentials.
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

export const X_API_BASE_URL = 'https://api.x.com';
/** APPEND segment size (X allows up to 5 MB per segment). */
export const X_CHUNK_BYTES = 4 * 1024 * 1024;
const MAX_STATUS_POLLS = 60;

const base = (a: SocialAccount) => (a.apiBaseUrl ?? X_API_BASE_URL).replace(/\/$/, '');
const auth = (a: SocialAccount) => ({ authorization: `Bearer ${a.accessToken}` });
export const tweetUrl = (id: string) => `https://x.com/i/status/${id}`;

function reason(body: Record<string, unknown>): string {
  const errors = Array.isArray(body.errors) ? (body.errors as Array<{ message?: unknown } | null>) : [];
  const parts = [body.title, body.detail, ...errors.map((e) => e?.message)].filter((v) => typeof v === 'string' && v);
  return shortReason(parts.join(': ')) ?? '';
}

async function fail(res: Response): Promise<ProviderFailure> {
  const body = await jsonBody(res);
  const msg = reason(body);
  if (res.status === 403 && /duplicate/i.test(msg)) return new ProviderFailure('invalid_input', `403 ${msg}`, { status: 403, code: 'duplicate_content' });
  return failureFromStatus(res, msg);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function category(contentType: string): 'tweet_image' | 'tweet_gif' | 'tweet_video' {
  if (contentType === 'image/gif') return 'tweet_gif';
  if (contentType.startsWith('video/')) return 'tweet_video';
  if (contentType.startsWith('image/')) return 'tweet_image';
  throw new ProviderFailure('invalid_input', `microblog does not take ${contentType} media`);
}

async function uploadMedia(a: SocialAccount, m: MediaSource): Promise<string> {
  const cat = category(m.contentType);
  if (cat === 'tweet_image') {
    const form = new FormData();
    form.set('media', new Blob([await m.read(0, m.size)], { type: m.contentType }), m.fileName.split('/').pop());
    form.set('media_category', cat);
    const res = await httpCall(a, `${base(a)}/2/media/upload`, { method: 'POST', headers: auth(a), body: form });
    if (!res.ok) throw await fail(res);
    const id = ((await jsonBody(res)).data as { id?: string } | undefined)?.id;
    if (!id) throw new ProviderFailure('transient', 'media upload answered without a media id');
    return id;
  }
  // Chunked: initialize, append each segment, finalize, then wait for processing.
  const init = await httpCall(a, `${base(a)}/2/media/upload/initialize`, {
    method: 'POST',
    headers: { ...auth(a), 'content-type': 'application/json' },
    body: JSON.stringify({ media_type: m.contentType, total_bytes: m.size, media_category: cat }),
  });
  if (!init.ok) throw await fail(init);
  const id = ((await jsonBody(init)).data as { id?: string } | undefined)?.id;
  if (!id) throw new ProviderFailure('transient', 'media initialize answered without a media id');
  for (let offset = 0, segment = 0; offset < m.size; offset += X_CHUNK_BYTES, segment++) {
    const form = new FormData();
    form.set('media', new Blob([await m.read(offset, Math.min(X_CHUNK_BYTES, m.size - offset))]), 'chunk');
    form.set('segment_index', String(segment));
    const res = await httpCall(a, `${base(a)}/2/media/upload/${id}/append`, { method: 'POST', headers: auth(a), body: form });
    if (!res.ok) throw await fail(res);
    await res.arrayBuffer();
  }
  const fin = await httpCall(a, `${base(a)}/2/media/upload/${id}/finalize`, { method: 'POST', headers: auth(a) });
  if (!fin.ok) throw await fail(fin);
  let info = ((await jsonBody(fin)).data as { processing_info?: { state: string; check_after_secs?: number } } | undefined)?.processing_info;
  for (let i = 0; info && (info.state === 'pending' || info.state === 'in_progress'); i++) {
    if (i >= MAX_STATUS_POLLS) throw new ProviderFailure('transient', `media ${id} is still processing`);
    await sleep(Math.min(Math.max(info.check_after_secs ?? 1, 1), 10) * 1000);
    const st = await httpCall(a, `${base(a)}/2/media/upload?command=STATUS&media_id=${encodeURIComponent(id)}`, { method: 'GET', headers: auth(a) });
    if (!st.ok) throw await fail(st);
    info = ((await jsonBody(st)).data as { processing_info?: { state: string; check_after_secs?: number } } | undefined)?.processing_info;
  }
  if (info?.state === 'failed') throw new ProviderFailure('invalid_input', `microblog could not process media ${m.fileName}`);
  return id;
}

interface ListedTweet {
  id: string;
  text: string;
  created_at?: string;
  referenced_tweets?: Array<{ type: string; id: string }>;
}

export const microblogAdapter: SocialAdapter = {
  async create(a, op) {
    if (op.type === 'comment') throw new ProviderFailure('invalid_input', 'microblog has no comments on external posts; use a pronet integration');
    if (op.type === 'reshare') {
      if (!op.parentExternalId) throw new ProviderFailure('invalid_input', 'a reshare needs the parent post id');
      // A retweet is idempotent on X (retweeting twice leaves one retweet), so it is safe to repeat.
      const res = await httpCall(a, `${base(a)}/2/users/${encodeURIComponent(a.externalAccountId)}/retweets`, {
        method: 'POST',
        headers: { ...auth(a), 'content-type': 'application/json' },
        body: JSON.stringify({ tweet_id: op.parentExternalId }),
      });
      if (!res.ok) throw await fail(res);
      await res.arrayBuffer();
      return { externalId: op.parentExternalId, externalUrl: tweetUrl(op.parentExternalId) };
    }
    const mediaIds: string[] = [];
    for (const m of op.media) mediaIds.push(await uploadMedia(a, m));
    const body: Record<string, unknown> = { text: op.text };
    if (mediaIds.length) body.media = { media_ids: mediaIds };
    if (op.type === 'reply') {
      if (!op.parentExternalId) throw new ProviderFailure('invalid_input', 'a reply needs the tweet it answers');
      body.reply = { in_reply_to_tweet_id: op.parentExternalId };
    }
    await op.beforeSend?.();
    const res = await httpCall(a, `${base(a)}/2/tweets`, {
      method: 'POST',
      headers: { ...auth(a), 'content-type': 'application/json' },
      body: JSON.stringify(body),
      creates: true,
    });
    if (!res.ok) throw await fail(res);
    const id = ((await jsonBody(res)).data as { id?: string } | undefined)?.id;
    if (!id) throw new ProviderFailure('outcome_unknown', 'POST /2/tweets answered without a tweet id');
    return { externalId: id, externalUrl: tweetUrl(id) };
  },

  async find(a, op, since) {
    if (op.type === 'reshare' || op.type === 'comment') return null;
    const url = `${base(a)}/2/users/${encodeURIComponent(a.externalAccountId)}/tweets?max_results=20&tweet.fields=created_at,referenced_tweets`;
    const res = await httpCall(a, url, { method: 'GET', headers: auth(a) });
    if (!res.ok) throw await fail(res);
    const tweets = ((await jsonBody(res)).data as ListedTweet[] | undefined) ?? [];
    const after = since.getTime() - 5_000;
    const hit = tweets.find((t) => {
      if (t.text !== op.text) return false;
      if (t.created_at && Date.parse(t.created_at) < after) return false;
      const repliedTo = t.referenced_tweets?.find((r) => r.type === 'replied_to')?.id;
      return op.type === 'reply' ? repliedTo === op.parentExternalId : !repliedTo;
    });
    return hit ? ({ externalId: hit.id, externalUrl: tweetUrl(hit.id) } satisfies Published) : null;
  },
};

export type { CreateOp };
