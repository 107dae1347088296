/**
 * A fake X API v2 speaking the wire protocol the microblog adapter uses, strict about shapes the
 * way X is: Bearer user token required (401 otherwise), JSON bodies with only known fields,
 * 280-character text, media ids that exist, belong to the caller and finished processing,
 * replies to tweets that exist, and 403 for duplicate text. Records every request.
 *
 *   POST /2/tweets · POST /2/media/upload · POST /2/media/upload/initialize
 *   POST /2/media/upload/{id}/append · POST /2/media/upload/{id}/finalize
 *   GET /2/media/upload?command=STATUS · GET /2/users/{id}/tweets · POST /2/users/{id}/retweets
 *
 * and X's OAuth 2.0 (authorization code with PKCE, `oauth` below): GET /i/oauth2/authorize
 * (consent approves as `oauth.consentAs(...)`), POST /2/oauth2/token (2-hour access tokens,
 * refresh tokens with `offline.access` that rotate on every use), POST /2/oauth2/revoke,
 * GET /2/users/me.
 */
import { OAuthGrants } from './oauthGrants.js';
import { SocialFake, bearer, type FakeReply, type Received } from './socialFake.js';

export interface FakeTweet {
  id: string;
  text: string;
  authorId: string;
  replyTo: string | null;
  mediaIds: string[];
  createdAt: string;
}

interface FakeMedia {
  id: string;
  ownerId: string;
  category: string;
  mediaType: string;
  totalBytes: number;
  bytes: number;
  nextSegment: number;
  state: 'uploading' | 'pending' | 'succeeded';
}

const invalid = (message: string): FakeReply => ({
  status: 400,
  body: {
    errors: [{ message }],
    title: 'Invalid Request',
    detail: 'One or more parameters to your request was invalid.',
    type: 'https://api.twitter.com/2/problems/invalid-request',
  },
});
const unauthorized: FakeReply = { status: 401, body: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' } };
const forbidden = (detail: string): FakeReply => ({ status: 403, body: { title: 'Forbidden', type: 'about:blank', status: 403, detail } });

export class FakeX extends SocialFake {
  readonly tweets: FakeTweet[] = [];
  readonly retweets: Array<{ userId: string; tweetId: string; at: number }> = [];
  readonly media = new Map<string, FakeMedia>();
  private users = new Map<string, string>();
  private nextId = 1_850_000_000_000_000_000n;
  readonly oauth = new OAuthGrants({ accessTtlSecs: 7200, refreshTtlSecs: null, rotateRefresh: true, pkce: true, refreshScope: 'offline.access' });

  constructor() {
    super();
    const r = (m: string, p: RegExp, key: string, h: (req: Received, params: string[], userId: string) => FakeReply | Promise<FakeReply>) =>
      this.route(m, p, key, (req, params) => {
        const t = bearer(req);
        const userId = this.users.get(t ?? '') ?? this.oauth.grantOf(t)?.user.id;
        return userId ? h(req, params, userId) : unauthorized;
      });
    this.route('GET', /^\/i\/oauth2\/authorize$/, 'GET /i/oauth2/authorize', (req) => this.oauth.authorize(req));
    this.route('POST', /^\/2\/oauth2\/token$/, 'POST /2/oauth2/token', (req) => this.oauth.token(req));
    this.route('POST', /^\/2\/oauth2\/revoke$/, 'POST /2/oauth2/revoke', (req) => this.oauth.revokeRequest(req));
    r('GET', /^\/2\/users\/me$/, 'GET /2/users/me', (req, _p, u) => this.me(req, u));
    r('POST', /^\/2\/tweets$/, 'POST /2/tweets', (req, _p, u) => this.createTweet(req, u));
    r('POST', /^\/2\/media\/upload$/, 'POST /2/media/upload', (req, _p, u) => this.simpleUpload(req, u));
    r('GET', /^\/2\/media\/upload$/, 'GET /2/media/upload', (req, _p, u) => this.status(req, u));
    r('POST', /^\/2\/media\/upload\/initialize$/, 'POST /2/media/upload/initialize', (req, _p, u) => this.initialize(req, u));
    r('POST', /^\/2\/media\/upload\/(\d+)\/append$/, 'POST /2/media/upload/{id}/append', (req, p, u) => this.append(req, p[0]!, u));
    r('POST', /^\/2\/media\/upload\/(\d+)\/finalize$/, 'POST /2/media/upload/{id}/finalize', (_req, p, u) => this.finalize(p[0]!, u));
    r('GET', /^\/2\/users\/(\d+)\/tweets$/, 'GET /2/users/{id}/tweets', (req, p) => this.timeline(req, p[0]!));
    r('POST', /^\/2\/users\/(\d+)\/retweets$/, 'POST /2/users/{id}/retweets', (req, p, u) => this.retweet(req, p[0]!, u));
  }

  /** A user whose OAuth 2.0 access token is `token`. */
  addUser(userId: string, token: string): void {
    this.users.set(token, userId);
  }

  /** The user revoked the app: the token answers 401 from now on. */
  revoke(token: string): void {
    this.users.delete(token);
  }

  /** A tweet posted by someone else (a reply/retweet target). */
  seedTweet(authorId: string, text: string): FakeTweet {
    const t: FakeTweet = { id: this.id(), text, authorId, replyTo: null, mediaIds: [], createdAt: new Date().toISOString() };
    this.tweets.push(t);
    return t;
  }

  private me(req: Received, userId: string): FakeReply {
    const user = this.oauth.grantOf(bearer(req))?.user ?? { id: userId, name: `user ${userId}`, username: `user${userId}` };
    return { status: 200, body: { data: { id: user.id, name: user.name, username: user.username } } };
  }

  private id(): string {
    return String(this.nextId++);
  }

  private createTweet(req: Received, userId: string): FakeReply {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return invalid('Content-Type must be application/json');
    const b = req.body as Record<string, unknown>;
    if (typeof b !== 'object' || b === null || Buffer.isBuffer(b) || '__invalid' in b) return invalid('Request body is not valid JSON');
    for (const k of Object.keys(b)) if (!['text', 'media', 'reply', 'quote_tweet_id'].includes(k)) return invalid(`The query parameter [${k}] is not one of [text,media,reply,quote_tweet_id]`);
    const media = b.media as { media_ids?: unknown } | undefined;
    const mediaIds = media?.media_ids;
    if (media !== undefined) {
      if (!Array.isArray(mediaIds) || mediaIds.length < 1 || mediaIds.length > 4 || mediaIds.some((m) => typeof m !== 'string' || !/^\d+$/.test(m))) {
        return invalid('media.media_ids must be an array of 1 to 4 numeric strings');
      }
      for (const id of mediaIds as string[]) {
        const m = this.media.get(id);
        if (!m || m.ownerId !== userId) return invalid(`Your media IDs are invalid: ${id}`);
        if (m.state !== 'succeeded') return invalid(`Media ${id} is not ready`);
      }
    }
    if (typeof b.text !== 'string' || (b.text === '' && !mediaIds)) return invalid('text must be a non-empty string');
    if ([...b.text].length > 280) return invalid('text must be at most 280 characters');
    let replyTo: string | null = null;
    if (b.reply !== undefined) {
      const r = b.reply as { in_reply_to_tweet_id?: unknown };
      if (typeof r !== 'object' || r === null || typeof r.in_reply_to_tweet_id !== 'string') return invalid('reply.in_reply_to_tweet_id must be a tweet id string');
      if (!this.tweets.some((t) => t.id === r.in_reply_to_tweet_id)) return invalid(`Tweet ${r.in_reply_to_tweet_id} to reply to does not exist`);
      replyTo = r.in_reply_to_tweet_id;
    }
    if (b.text && this.tweets.some((t) => t.authorId === userId && t.text === b.text)) {
      return forbidden('You are not allowed to create a Tweet with duplicate content.');
    }
    const t: FakeTweet = { id: this.id(), text: b.text, authorId: userId, replyTo, mediaIds: (mediaIds as string[] | undefined) ?? [], createdAt: new Date().toISOString() };
    this.tweets.push(t);
    return { status: 201, body: { data: { id: t.id, text: t.text, edit_history_tweet_ids: [t.id] } } };
  }

  private async simpleUpload(req: Received, userId: string): Promise<FakeReply> {
    if (!(req.body instanceof FormData)) return invalid('media upload must be multipart/form-data');
    const file = req.body.get('media');
    const category = req.body.get('media_category');
    if (!(file instanceof Blob) || file.size === 0) return invalid('media is required');
    if (category !== 'tweet_image') return invalid(`media_category ${String(category)} needs the chunked upload (initialize/append/finalize)`);
    const id = this.id();
    this.media.set(id, { id, ownerId: userId, category, mediaType: file.type, totalBytes: file.size, bytes: file.size, nextSegment: 1, state: 'succeeded' });
    return { status: 200, body: { data: { id, media_key: `3_${id}`, size: file.size, expires_after_secs: 86400, image: { image_type: file.type } } } };
  }

  private initialize(req: Received, userId: string): FakeReply {
    const b = req.body as { media_type?: unknown; total_bytes?: unknown; media_category?: unknown };
    if (typeof b !== 'object' || b === null || Buffer.isBuffer(b)) return invalid('initialize takes a JSON body');
    if (typeof b.media_type !== 'string' || !/^(video|image)\//.test(b.media_type)) return invalid('media_type is required');
    if (typeof b.total_bytes !== 'number' || b.total_bytes <= 0) return invalid('total_bytes must be a positive integer');
    if (!['tweet_video', 'tweet_gif', 'tweet_image'].includes(String(b.media_category))) return invalid('media_category is invalid');
    const id = this.id();
    this.media.set(id, { id, ownerId: userId, category: String(b.media_category), mediaType: b.media_type, totalBytes: b.total_bytes, bytes: 0, nextSegment: 0, state: 'uploading' });
    return { status: 200, body: { data: { id, media_key: `7_${id}`, expires_after_secs: 86400 } } };
  }

  private append(req: Received, id: string, userId: string): FakeReply {
    const m = this.media.get(id);
    if (!m || m.ownerId !== userId || m.state !== 'uploading') return invalid(`media ${id} is not being uploaded`);
    if (!(req.body instanceof FormData)) return invalid('append must be multipart/form-data');
    const seg = Number(req.body.get('segment_index'));
    const chunk = req.body.get('media');
    if (seg !== m.nextSegment) return invalid(`segment_index ${seg} out of order; expected ${m.nextSegment}`);
    if (!(chunk instanceof Blob)) return invalid('media is required');
    m.bytes += chunk.size;
    m.nextSegment++;
    return { status: 200 };
  }

  private finalize(id: string, userId: string): FakeReply {
    const m = this.media.get(id);
    if (!m || m.ownerId !== userId || m.state !== 'uploading') return invalid(`media ${id} is not being uploaded`);
    if (m.bytes !== m.totalBytes) return invalid(`File size mismatch: received ${m.bytes} of ${m.totalBytes} bytes`);
    m.state = m.category === 'tweet_image' ? 'succeeded' : 'pending';
    const info = m.state === 'pending' ? { processing_info: { state: 'pending', check_after_secs: 1 } } : {};
    return { status: 200, body: { data: { id, media_key: `7_${id}`, size: m.bytes, expires_after_secs: 86400, ...info } } };
  }

  private status(req: Received, userId: string): FakeReply {
    if (req.query.get('command') !== 'STATUS') return invalid('command must be STATUS');
    const m = this.media.get(req.query.get('media_id') ?? '');
    if (!m || m.ownerId !== userId) return invalid('media_id is invalid');
    // Processing finishes by the first status check.
    if (m.state === 'pending') m.state = 'succeeded';
    return { status: 200, body: { data: { id: m.id, media_key: `7_${m.id}`, processing_info: { state: m.state, progress_percent: 100 } } } };
  }

  private timeline(req: Received, userId: string): FakeReply {
    const max = Math.min(Math.max(Number(req.query.get('max_results') ?? 10), 5), 100);
    const mine = this.tweets.filter((t) => t.authorId === userId).reverse().slice(0, max);
    return {
      status: 200,
      body: {
        data: mine.map((t) => ({
          id: t.id,
          text: t.text,
          created_at: t.createdAt,
          ...(t.replyTo ? { referenced_tweets: [{ type: 'replied_to', id: t.replyTo }] } : {}),
        })),
        meta: { result_count: mine.length },
      },
    };
  }

  private retweet(req: Received, pathUserId: string, userId: string): FakeReply {
    if (pathUserId !== userId) return forbidden('You are not allowed to retweet on behalf of another user.');
    const b = req.body as { tweet_id?: unknown };
    if (typeof b !== 'object' || b === null || typeof b.tweet_id !== 'string') return invalid('tweet_id is required');
    if (!this.tweets.some((t) => t.id === b.tweet_id)) return invalid(`Tweet ${String(b.tweet_id)} does not exist`);
    if (!this.retweets.some((r) => r.userId === userId && r.tweetId === b.tweet_id)) this.retweets.push({ userId, tweetId: b.tweet_id, at: Date.now() });
    return { status: 200, body: { data: { retweeted: true } } };
  }
}
