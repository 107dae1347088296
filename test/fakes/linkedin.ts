/**
 * A fake LinkedIn REST API (Community Management) speaking the wire protocol the pronet adapter
 * uses, and as strict: Bearer token (401 otherwise), `LinkedIn-Version: YYYYMM` and
 * `X-Restli-Protocol-Version: 2.0.0` on every /rest call (400 otherwise), an author/actor the
 * token may act as (403 otherwise), known fields only, media that was uploaded by its owner,
 * reshare parents and comment threads that exist. Posts answer 201 with an empty body and the
 * URN in `x-restli-id`. Records every request.
 *
 *   POST /rest/posts · GET /rest/posts?q=author · POST /rest/images|documents?action=initializeUpload
 *   POST /rest/videos?action=initializeUpload|finalizeUpload · PUT /upload/… (upload URLs)
 *   POST|GET /rest/socialActions/{urn}/comments
 *
 * and LinkedIn's 3-legged OAuth (`oauth` below): GET /oauth/v2/authorization (consent approves as
 * `oauth.consentAs(...)`), POST /oauth/v2/accessToken (60-day access tokens, 365-day refresh
 * tokens that do not rotate), POST /oauth/v2/revoke, OpenID GET /v2/userinfo, and the
 * organizations a member administers: GET /rest/organizationAcls?q=roleAssignee,
 * GET /rest/organizations/{id}.
 */
import { OAuthGrants } from './oauthGrants.js';
import { SocialFake, bearer, type FakeReply, type Received } from './socialFake.js';

export interface FakeLiPost {
  urn: string;
  author: string;
  commentary: string;
  content: unknown;
  reshareParent: string | null;
  createdAt: number;
  external: boolean;
}
export interface FakeLiComment {
  urn: string;
  id: string;
  actor: string;
  object: string;
  text: string;
  createdAt: number;
}
interface FakeAsset {
  urn: string;
  owner: string;
  kind: 'image' | 'document' | 'video';
  size: number;
  parts: Array<{ firstByte: number; lastByte: number; etag: string | null }>;
  state: 'WAITING_UPLOAD' | 'PROCESSING' | 'AVAILABLE';
}

const PART_BYTES = 4 * 1024 * 1024;
const err = (status: number, message: string, code?: string): FakeReply => ({ status, body: { status, message, ...(code ? { code } : {}) } });
const POST_KEYS = ['author', 'commentary', 'visibility', 'distribution', 'lifecycleState', 'isReshareDisabledByAuthor', 'content', 'reshareContext', 'contentLandingPage', 'contentCallToActionLabel'];

export class FakeLinkedIn extends SocialFake {
  readonly posts: FakeLiPost[] = [];
  readonly comments: FakeLiComment[] = [];
  readonly assets = new Map<string, FakeAsset>();
  private accounts = new Map<string, string[]>();
  private seq = 7_300_000_000_000_000_000n;
  /** Where the upload URLs it hands out point (default: its own URL). */
  uploadBaseUrl: string | null = null;
  readonly oauth = new OAuthGrants({ accessTtlSecs: 60 * 86400, refreshTtlSecs: 365 * 86400, rotateRefresh: false, pkce: false, refreshScope: null });
  /** Organizations by id, with the members (person ids) who administer them. */
  readonly organizations = new Map<string, { name: string; vanityName: string; admins: string[] }>();

  constructor() {
    super();
    const rest = (m: string, p: RegExp, key: string, h: (req: Received, params: string[], actors: string[]) => FakeReply | Promise<FakeReply>) =>
      this.route(m, p, key, (req, params) => {
        const actors = this.accounts.get(bearer(req) ?? '') ?? this.oauthActors(bearer(req));
        if (!actors) return { status: 401, body: { status: 401, serviceErrorCode: 65601, code: 'REVOKED_ACCESS_TOKEN', message: 'The token used in the request has been revoked by the user' } };
        if (!/^\d{6}$/.test(String(req.headers['linkedin-version'] ?? ''))) return err(400, 'A version must be present. Please specify a version by adding the LinkedIn-Version header.', 'VERSION_MISSING');
        if (req.headers['x-restli-protocol-version'] !== '2.0.0') return err(400, 'X-Restli-Protocol-Version 2.0.0 is required', 'ILLEGAL_ARGUMENT');
        return h(req, params, actors);
      });
    rest('POST', /^\/rest\/posts$/, 'POST /rest/posts', (req, _p, a) => this.createPost(req, a));
    rest('GET', /^\/rest\/posts$/, 'GET /rest/posts', (req, _p, a) => this.findPosts(req, a));
    rest('POST', /^\/rest\/(images|documents|videos)$/, 'POST /rest/{media}', (req, p, a) => this.mediaAction(req, p[0]!, a));
    rest('POST', /^\/rest\/socialActions\/([^/]+)\/comments$/, 'POST /rest/socialActions/{urn}/comments', (req, p, a) => this.createComment(req, decodeURIComponent(p[0]!), a));
    rest('GET', /^\/rest\/socialActions\/([^/]+)\/comments$/, 'GET /rest/socialActions/{urn}/comments', (_req, p) => this.listComments(decodeURIComponent(p[0]!)));
    this.route('GET', /^\/oauth\/v2\/authorization$/, 'GET /oauth/v2/authorization', (req) => this.oauth.authorize(req));
    this.route('POST', /^\/oauth\/v2\/accessToken$/, 'POST /oauth/v2/accessToken', (req) => this.oauth.token(req));
    this.route('POST', /^\/oauth\/v2\/revoke$/, 'POST /oauth/v2/revoke', (req) => this.oauth.revokeRequest(req));
    this.route('GET', /^\/v2\/userinfo$/, 'GET /v2/userinfo', (req) => this.userinfo(req));
    rest('GET', /^\/rest\/organizationAcls$/, 'GET /rest/organizationAcls', (req) => this.organizationAcls(req));
    rest('GET', /^\/rest\/organizations\/(\d+)$/, 'GET /rest/organizations/{id}', (_req, p) => this.organization(p[0]!));
    this.route('PUT', /^\/upload\/([^/]+)(?:\/part\/(\d+))?$/, 'PUT /upload', (req, p) => this.upload(req, decodeURIComponent(p[0]!), p[1]));
  }

  /** A member (`urn:li:person:…`) whose token may also act for the organizations listed. */
  addAccount(token: string, actorUrns: string[]): void {
    this.accounts.set(token, actorUrns);
  }

  revoke(token: string): void {
    this.accounts.delete(token);
  }

  /** An organization page administered by the members `adminPersonIds`. */
  addOrganization(id: string, name: string, adminPersonIds: string[]): void {
    this.organizations.set(id, { name, vanityName: name.toLowerCase().replace(/\W+/g, '-'), admins: adminPersonIds });
  }

  /** What an OAuth access token may act as: the member, and with `w_organization_social` the pages they administer. */
  private oauthActors(token: string | null): string[] | undefined {
    const g = this.oauth.grantOf(token);
    if (!g) return undefined;
    const actors = [`urn:li:person:${g.user.id}`];
    if (g.scopes.includes('w_organization_social')) {
      for (const [id, o] of this.organizations) if (o.admins.includes(g.user.id)) actors.push(`urn:li:organization:${id}`);
    }
    return actors;
  }

  private userinfo(req: Received): FakeReply {
    const g = this.oauth.grantOf(bearer(req));
    if (!g) return { status: 401, body: { status: 401, serviceErrorCode: 65601, code: 'REVOKED_ACCESS_TOKEN', message: 'The token used in the request has been revoked by the user' } };
    if (!g.scopes.includes('openid') || !g.scopes.includes('profile')) return err(403, 'Not enough permissions to access: userinfo.GET.NO_VERSION', 'ACCESS_DENIED');
    const [given, ...family] = g.user.name.split(' ');
    return {
      status: 200,
      body: { sub: g.user.id, name: g.user.name, given_name: given, family_name: family.join(' '), locale: { country: 'US', language: 'en' }, ...(g.scopes.includes('email') && g.user.email ? { email: g.user.email, email_verified: true } : {}) },
    };
  }

  private organizationAcls(req: Received): FakeReply {
    const g = this.oauth.grantOf(bearer(req));
    if (!g || !g.scopes.includes('rw_organization_admin')) return err(403, 'Not enough permissions to access: organizationAcls.FINDER-roleAssignee', 'ACCESS_DENIED');
    if (req.query.get('q') !== 'roleAssignee') return err(400, 'q must be roleAssignee', 'ILLEGAL_ARGUMENT');
    const role = req.query.get('role');
    const state = req.query.get('state');
    const elements = [...this.organizations]
      .filter(([, o]) => o.admins.includes(g.user.id))
      .map(([id]) => ({ organization: `urn:li:organization:${id}`, role: 'ADMINISTRATOR', state: 'APPROVED', roleAssignee: `urn:li:person:${g.user.id}` }))
      .filter((e) => (!role || e.role === role) && (!state || e.state === state));
    return { status: 200, body: { paging: { start: 0, count: 10, total: elements.length }, elements } };
  }

  private organization(id: string): FakeReply {
    const o = this.organizations.get(id);
    if (!o) return err(404, `Organization ${id} does not exist`, 'NOT_FOUND');
    return { status: 200, body: { id: Number(id), localizedName: o.name, vanityName: o.vanityName } };
  }

  /** Someone else's post (an external-reply target); `kind` picks the URN form. */
  seedExternalPost(kind: 'activity' | 'ugcPost' | 'share' = 'activity'): FakeLiPost {
    const p: FakeLiPost = { urn: `urn:li:${kind}:${this.next()}`, author: 'urn:li:person:someone-else', commentary: 'external', content: null, reshareParent: null, createdAt: Date.now(), external: true };
    this.posts.push(p);
    return p;
  }

  private next(): string {
    return String(this.seq++);
  }

  private createPost(req: Received, actors: string[]): FakeReply {
    const b = req.body as Record<string, unknown>;
    if (typeof b !== 'object' || b === null || Buffer.isBuffer(b) || '__invalid' in b) return err(400, 'Request body must be JSON');
    for (const k of Object.keys(b)) if (!POST_KEYS.includes(k)) return err(422, `Unrecognized field /${k}`, 'UNPROCESSABLE_ENTITY');
    if (typeof b.author !== 'string' || !/^urn:li:(person|organization):[\w-]+$/.test(b.author)) return err(422, '/author must be a person or organization URN');
    if (!actors.includes(b.author)) return { status: 403, body: { status: 403, serviceErrorCode: 100, code: 'ACCESS_DENIED', message: `Not enough permissions to post as ${b.author}` } };
    if (typeof b.commentary !== 'string') return err(422, '/commentary is required');
    if ([...b.commentary].length > 3000) return err(422, '/commentary exceeds 3000 characters');
    if (!['PUBLIC', 'CONNECTIONS', 'LOGGED_IN', 'CONTAINER'].includes(String(b.visibility))) return err(422, '/visibility is invalid');
    const d = b.distribution as { feedDistribution?: unknown } | undefined;
    if (!d || !['MAIN_FEED', 'NONE'].includes(String(d.feedDistribution))) return err(422, '/distribution/feedDistribution is required');
    if (b.lifecycleState !== 'PUBLISHED') return err(422, '/lifecycleState must be PUBLISHED');
    let reshareParent: string | null = null;
    if (b.reshareContext !== undefined) {
      const parent = (b.reshareContext as { parent?: unknown }).parent;
      if (typeof parent !== 'string' || !this.posts.some((p) => p.urn === parent)) return err(422, `/reshareContext/parent ${String(parent)} does not exist`);
      reshareParent = parent;
    }
    if (b.content !== undefined) {
      const c = b.content as { media?: { id?: unknown }; multiImage?: { images?: Array<{ id?: unknown }> } };
      const ids = c.media ? [c.media.id] : c.multiImage?.images?.map((i) => i.id) ?? [];
      if (!ids.length) return err(422, '/content must carry media or multiImage');
      for (const id of ids) {
        const asset = this.assets.get(String(id));
        if (!asset || asset.owner !== b.author) return err(400, `Content(s) you provided must be owned by post author: ${String(id)}`, 'INVALID_CONTENT_OWNERSHIP');
        if (asset.state !== 'AVAILABLE') return err(422, `${String(id)} is not uploaded`);
      }
    }
    const urn = `urn:li:share:${this.next()}`;
    this.posts.push({ urn, author: b.author, commentary: b.commentary, content: b.content ?? null, reshareParent, createdAt: Date.now(), external: false });
    return { status: 201, headers: { 'x-restli-id': urn, 'x-linkedin-id': urn } };
  }

  private findPosts(req: Received, actors: string[]): FakeReply {
    if (req.query.get('q') !== 'author') return err(400, 'q=author is required');
    if (req.headers['x-restli-method'] !== 'FINDER') return err(400, 'X-RestLi-Method: FINDER is required for finders');
    const author = req.query.get('author') ?? '';
    if (!actors.includes(author)) return { status: 403, body: { status: 403, code: 'ACCESS_DENIED', message: `Not enough permissions to read posts of ${author}` } };
    const count = Math.min(Number(req.query.get('count') ?? 10), 100);
    const elements = this.posts
      .filter((p) => p.author === author)
      .reverse()
      .slice(0, count)
      .map((p) => ({
        id: p.urn,
        author: p.author,
        commentary: p.commentary,
        createdAt: p.createdAt,
        lastModifiedAt: p.createdAt,
        lifecycleState: 'PUBLISHED',
        visibility: 'PUBLIC',
        ...(p.reshareParent ? { reshareContext: { parent: p.reshareParent } } : {}),
      }));
    return { status: 200, body: { elements, paging: { start: 0, count, links: [] } } };
  }

  private mediaAction(req: Received, kind: string, actors: string[]): FakeReply {
    const action = req.query.get('action');
    const b = req.body as Record<string, unknown>;
    if (typeof b !== 'object' || b === null || Buffer.isBuffer(b)) return err(400, 'Request body must be JSON');
    if (action === 'initializeUpload') {
      const r = b.initializeUploadRequest as { owner?: unknown; fileSizeBytes?: unknown } | undefined;
      if (!r || typeof r.owner !== 'string') return err(422, '/initializeUploadRequest/owner is required');
      if (!actors.includes(r.owner)) return { status: 403, body: { status: 403, code: 'ACCESS_DENIED', message: `Not enough permissions to upload for ${r.owner}` } };
      const id = this.next();
      if (kind === 'videos') {
        if (typeof r.fileSizeBytes !== 'number' || r.fileSizeBytes <= 0) return err(422, '/initializeUploadRequest/fileSizeBytes is required');
        const urn = `urn:li:video:C5${id}`;
        const parts: FakeAsset['parts'] = [];
        for (let first = 0; first < r.fileSizeBytes; first += PART_BYTES) parts.push({ firstByte: first, lastByte: Math.min(first + PART_BYTES, r.fileSizeBytes) - 1, etag: null });
        this.assets.set(urn, { urn, owner: r.owner, kind: 'video', size: r.fileSizeBytes, parts, state: 'WAITING_UPLOAD' });
        return {
          status: 200,
          body: {
            value: {
              uploadUrlsExpireAt: Date.now() + 86_400_000,
              video: urn,
              uploadToken: `token-${id}`,
              uploadInstructions: parts.map((p, i) => ({ uploadUrl: `${this.uploadBaseUrl ?? this.url}/upload/${encodeURIComponent(urn)}/part/${i}`, firstByte: p.firstByte, lastByte: p.lastByte })),
            },
          },
        };
      }
      const assetKind = kind === 'images' ? 'image' : 'document';
      const urn = `urn:li:${assetKind}:C4${id}`;
      this.assets.set(urn, { urn, owner: r.owner, kind: assetKind, size: 0, parts: [], state: 'WAITING_UPLOAD' });
      return { status: 200, body: { value: { uploadUrlExpiresAt: Date.now() + 86_400_000, uploadUrl: `${this.uploadBaseUrl ?? this.url}/upload/${encodeURIComponent(urn)}`, [assetKind]: urn } } };
    }
    if (action === 'finalizeUpload' && kind === 'videos') {
      const r = b.finalizeUploadRequest as { video?: unknown; uploadToken?: unknown; uploadedPartIds?: unknown } | undefined;
      const asset = this.assets.get(String(r?.video));
      if (!asset || !actors.includes(asset.owner)) return err(422, '/finalizeUploadRequest/video is unknown');
      const etags = asset.parts.map((p) => p.etag);
      if (!Array.isArray(r?.uploadedPartIds) || JSON.stringify(r.uploadedPartIds) !== JSON.stringify(etags) || etags.includes(null)) {
        return err(422, '/finalizeUploadRequest/uploadedPartIds must list every part ETag in order');
      }
      asset.state = 'AVAILABLE';
      return { status: 200 };
    }
    return err(400, `Unsupported action ${String(action)}`);
  }

  private upload(req: Received, urn: string, part: string | undefined): FakeReply {
    if (!bearer(req) || !this.accounts.has(bearer(req)!)) return { status: 401, body: { status: 401, message: 'Unauthorized upload' } };
    const asset = this.assets.get(urn);
    if (!asset) return err(404, 'Unknown upload URL');
    if (asset.kind === 'video') {
      const p = asset.parts[Number(part)];
      if (!p) return err(400, 'Unknown part');
      if (req.raw.length !== p.lastByte - p.firstByte + 1) return err(400, `Part ${part} must be ${p.lastByte - p.firstByte + 1} bytes, got ${req.raw.length}`);
      p.etag = `etag-${urn.slice(-6)}-${part}`;
      return { status: 200, headers: { etag: p.etag } };
    }
    if (req.raw.length === 0) return err(400, 'Empty upload');
    asset.size = req.raw.length;
    asset.state = 'AVAILABLE';
    return { status: 201 };
  }

  private createComment(req: Received, threadUrn: string, actors: string[]): FakeReply {
    if (!this.posts.some((p) => p.urn === threadUrn)) return err(404, `${threadUrn} does not exist`);
    const b = req.body as { actor?: unknown; object?: unknown; message?: { text?: unknown }; content?: unknown };
    if (typeof b !== 'object' || b === null || Buffer.isBuffer(b)) return err(400, 'Request body must be JSON');
    for (const k of Object.keys(b)) if (!['actor', 'object', 'message', 'content', 'parentComment'].includes(k)) return err(422, `Unrecognized field /${k}`);
    if (typeof b.actor !== 'string' || !actors.includes(b.actor)) return { status: 403, body: { status: 403, code: 'ACCESS_DENIED', message: `Not enough permissions to comment as ${String(b.actor)}` } };
    if (b.object !== threadUrn) return err(400, '/object must equal the URN in the path');
    if (typeof b.message?.text !== 'string' || !b.message.text) return err(422, '/message/text is required');
    const id = this.next();
    const c: FakeLiComment = { urn: `urn:li:comment:(${threadUrn},${id})`, id, actor: b.actor, object: threadUrn, text: b.message.text, createdAt: Date.now() };
    this.comments.push(c);
    return {
      status: 201,
      headers: { 'x-restli-id': c.urn },
      body: { actor: c.actor, object: c.object, message: { text: c.text }, id: c.id, $URN: c.urn, created: { actor: c.actor, time: c.createdAt } },
    };
  }

  private listComments(threadUrn: string): FakeReply {
    const elements = this.comments
      .filter((c) => c.object === threadUrn)
      .map((c) => ({ actor: c.actor, object: c.object, message: { text: c.text }, id: c.id, $URN: c.urn, created: { actor: c.actor, time: c.createdAt } }));
    return { status: 200, body: { elements, paging: { start: 0, count: elements.length, links: [] } } };
  }
}
