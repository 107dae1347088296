/**
 * The OAuth 2.0 client side of the networks (issue 29), shared by the API (connect: authorization
 * URL, code exchange, identity) and the worker (refresh before publishing):
 *
 *   microblog (X):  authorization code with PKCE (S256), confidential client (HTTP Basic);
 *                   GET https://x.com/i/oauth2/authorize, POST {api}/2/oauth2/token,
 *                   POST {api}/2/oauth2/revoke, GET {api}/2/users/me. Access tokens live 2 h;
 *                   refresh tokens (scope `offline.access`) rotate on every use.
 *   pronet, pronetPage (LinkedIn): 3-legged OAuth; GET https://www.linkedin.com/oauth/v2/authorization,
 *                   POST …/oauth/v2/accessToken (client id and secret in the form), OpenID
 *                   GET {api}/v2/userinfo, pages administered: GET {api}/rest/organizationAcls.
 *                   Access tokens live 60 days, refresh tokens 365 days and are not rotated.
 *
 * Operator configuration (environment): X_CLIENT_ID, X_CLIENT_SECRET, LINKEDIN_CLIENT_ID,
 * LINKEDIN_CLIENT_SECRET, OAUTH_REDIRECT_URL (default `<PUBLIC_BASE_URL>/integrations/oauth/callback`),
 * and for tests or proxies X_AUTHORIZE_URL, X_API_BASE_URL, LINKEDIN_AUTH_BASE_URL,
 * LINKEDIN_API_BASE_URL. Every call goes through the outbound guard (infra/outbound.ts).
 *
 * Failures are classified once, here: `invalid_grant` (the grant is gone: revoked, spent or
 * expired; the account needs reconnecting), `transient` (network error, 5xx, 429: retry, change
 * nothing), `refused` (any other answer: a configuration problem, shown as is).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Provider } from '../domain/social.js';
import { outboundFetch, shortReason } from './outbound.js';

/** The networks with an OAuth app: `pronetPage` connects through the LinkedIn (`pronet`) app. */
export type OAuthNetwork = 'microblog' | 'pronet';
export const OAUTH_NETWORKS: readonly OAuthNetwork[] = ['microblog', 'pronet'];
export const oauthNetworkOf = (p: Provider): OAuthNetwork => (p === 'microblog' ? 'microblog' : 'pronet');

export interface OAuthApp {
  clientId: string;
  clientSecret: string;
  /** Whose app: the operator's (environment) or the workspace's own (`oauth_apps`). */
  source: 'operator' | 'workspace';
}

export interface OAuthEndpoints {
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  /** The network's API base (identity look-ups; also what publishing calls). */
  apiBaseUrl: string;
}

/** The scopes asked for, per provider. */
export const OAUTH_SCOPES: Record<Provider, string[]> = {
  microblog: ['tweet.read', 'tweet.write', 'users.read', 'media.write', 'offline.access'],
  pronet: ['openid', 'profile', 'w_member_social'],
  pronetPage: ['openid', 'profile', 'w_member_social', 'w_organization_social', 'rw_organization_admin'],
};

export const X_DEFAULT_API = 'https://api.x.com';
export const LINKEDIN_DEFAULT_API = 'https://api.linkedin.com';
const trim = (u: string) => u.replace(/\/$/, '');

export function oauthEndpoints(network: OAuthNetwork, env: NodeJS.ProcessEnv): OAuthEndpoints {
  if (network === 'microblog') {
    const api = trim(env.X_API_BASE_URL || X_DEFAULT_API);
    return { authorizeUrl: env.X_AUTHORIZE_URL || 'https://x.com/i/oauth2/authorize', tokenUrl: `${api}/2/oauth2/token`, revokeUrl: `${api}/2/oauth2/revoke`, apiBaseUrl: api };
  }
  const auth = trim(env.LINKEDIN_AUTH_BASE_URL || 'https://www.linkedin.com');
  return {
    authorizeUrl: `${auth}/oauth/v2/authorization`,
    tokenUrl: `${auth}/oauth/v2/accessToken`,
    revokeUrl: `${auth}/oauth/v2/revoke`,
    apiBaseUrl: trim(env.LINKEDIN_API_BASE_URL || LINKEDIN_DEFAULT_API),
  };
}

/** The base URL an OAuth-connected integration stores: null when it is the network's official one. */
export function integrationBaseUrl(network: OAuthNetwork, env: NodeJS.ProcessEnv): string | null {
  const api = oauthEndpoints(network, env).apiBaseUrl;
  return api === (network === 'microblog' ? X_DEFAULT_API : LINKEDIN_DEFAULT_API) ? null : api;
}

/** The operator's app for a network, or null when it is not configured. */
export function operatorApp(network: OAuthNetwork, env: NodeJS.ProcessEnv): OAuthApp | null {
  const prefix = network === 'microblog' ? 'X' : 'LINKEDIN';
  const clientId = env[`${prefix}_CLIENT_ID`];
  const clientSecret = env[`${prefix}_CLIENT_SECRET`];
  return clientId && clientSecret ? { clientId, clientSecret, source: 'operator' } : null;
}

export function oauthRedirectUri(env: NodeJS.ProcessEnv, publicBaseUrl: string): string {
  return env.OAUTH_REDIRECT_URL || `${trim(publicBaseUrl)}/integrations/oauth/callback`;
}

/** A PKCE verifier (43 characters of base64url, RFC 7636 §4.1) and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizationUrl(p: { provider: Provider; endpoints: OAuthEndpoints; app: OAuthApp; redirectUri: string; state: string; challenge: string | null }): string {
  const url = new URL(p.endpoints.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', p.app.clientId);
  url.searchParams.set('redirect_uri', p.redirectUri);
  url.searchParams.set('scope', OAUTH_SCOPES[p.provider].join(' '));
  url.searchParams.set('state', p.state);
  if (p.challenge) {
    url.searchParams.set('code_challenge', p.challenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.toString();
}

export class OAuthError extends Error {
  constructor(
    readonly kind: 'invalid_grant' | 'transient' | 'refused',
    message: string,
    readonly opts: { status?: number; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.name = 'OAuthError';
  }
}

/** What a token endpoint answered. `refreshToken` undefined: none in the answer (keep the stored one). */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  accessExpiresAt: Date | null;
  grantExpiresAt: Date | null;
  scopes: string[];
}

const TIMEOUT_MS = 15_000;

async function call(url: string, init: { method: string; headers: Record<string, string>; body?: string }, allowList: string[]): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  let res: Response;
  try {
    res = await outboundFetch(url, { ...init, timeoutMs: TIMEOUT_MS, maxBytes: 1024 * 1024, allowList });
  } catch (e) {
    throw new OAuthError('transient', `${init.method} ${new URL(url).pathname} failed (${shortReason((e as Error).message) ?? 'network error'})`);
  }
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    /* not JSON: classified by status alone */
  }
  return { status: res.status, body, headers: res.headers };
}

function failure(what: string, r: { status: number; body: Record<string, unknown>; headers: Headers }): OAuthError {
  const reason = shortReason([r.body.error, r.body.error_description ?? r.body.message].filter((v) => typeof v === 'string').join(': ')) ?? `HTTP ${r.status}`;
  if (r.status === 429 || r.status >= 500) {
    const ra = Number(r.headers.get('retry-after'));
    return new OAuthError('transient', `${what}: ${reason}`, { status: r.status, ...(Number.isFinite(ra) && ra > 0 ? { retryAfterMs: ra * 1000 } : {}) });
  }
  // RFC 6749 §5.2: the grant (code or refresh token) is invalid, expired, revoked or spent.
  if (r.body.error === 'invalid_grant') return new OAuthError('invalid_grant', `${what}: ${reason}`, { status: r.status });
  return new OAuthError('refused', `${what}: ${reason}`, { status: r.status });
}

async function tokenRequest(network: OAuthNetwork, app: OAuthApp, endpoints: OAuthEndpoints, form: Record<string, string>, allowList: string[]): Promise<TokenSet> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  const fields = { ...form };
  // X takes a confidential client's credentials as HTTP Basic; LinkedIn in the form.
  if (network === 'microblog') headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret)}`).toString('base64')}`;
  else Object.assign(fields, { client_id: app.clientId, client_secret: app.clientSecret });
  const r = await call(endpoints.tokenUrl, { method: 'POST', headers, body: new URLSearchParams(fields).toString() }, allowList);
  const what = `token endpoint (${form.grant_type})`;
  if (r.status !== 200) throw failure(what, r);
  const b = r.body;
  if (typeof b.access_token !== 'string' || !b.access_token) throw new OAuthError('transient', `${what}: answer without access_token`);
  const now = Date.now();
  const secs = (v: unknown) => (typeof v === 'number' && v > 0 ? new Date(now + v * 1000) : null);
  return {
    accessToken: b.access_token,
    ...(typeof b.refresh_token === 'string' && b.refresh_token ? { refreshToken: b.refresh_token } : {}),
    accessExpiresAt: secs(b.expires_in),
    grantExpiresAt: secs(b.refresh_token_expires_in),
    scopes: typeof b.scope === 'string' ? b.scope.split(/[ ,]+/).filter(Boolean) : [],
  };
}

export function exchangeCode(network: OAuthNetwork, app: OAuthApp, endpoints: OAuthEndpoints, p: { code: string; redirectUri: string; verifier: string | null }, allowList: string[]): Promise<TokenSet> {
  return tokenRequest(
    network,
    app,
    endpoints,
    { grant_type: 'authorization_code', code: p.code, redirect_uri: p.redirectUri, ...(p.verifier ? { code_verifier: p.verifier, client_id: app.clientId } : {}) },
    allowList,
  );
}

export function refreshGrant(network: OAuthNetwork, app: OAuthApp, endpoints: OAuthEndpoints, refreshToken: string, allowList: string[]): Promise<TokenSet> {
  return tokenRequest(network, app, endpoints, { grant_type: 'refresh_token', refresh_token: refreshToken, ...(network === 'microblog' ? { client_id: app.clientId } : {}) }, allowList);
}

export interface ExternalIdentity {
  /** X user id, LinkedIn person id (OpenID `sub`). */
  id: string;
  name: string;
  handle: string | null;
}

export async function fetchIdentity(network: OAuthNetwork, endpoints: OAuthEndpoints, accessToken: string, allowList: string[]): Promise<ExternalIdentity> {
  const headers = { authorization: `Bearer ${accessToken}`, accept: 'application/json' };
  if (network === 'microblog') {
    const r = await call(`${endpoints.apiBaseUrl}/2/users/me`, { method: 'GET', headers }, allowList);
    const d = r.body.data as { id?: unknown; name?: unknown; username?: unknown } | undefined;
    if (r.status !== 200 || typeof d?.id !== 'string') throw failure('GET /2/users/me', r);
    return { id: d.id, name: typeof d.name === 'string' ? d.name : d.id, handle: typeof d.username === 'string' ? d.username : null };
  }
  const r = await call(`${endpoints.apiBaseUrl}/v2/userinfo`, { method: 'GET', headers }, allowList);
  if (r.status !== 200 || typeof r.body.sub !== 'string') throw failure('GET /v2/userinfo', r);
  return { id: r.body.sub, name: typeof r.body.name === 'string' ? r.body.name : r.body.sub, handle: null };
}

const LINKEDIN_VERSION = '202506';

/** The LinkedIn organizations the member administers (id and name), for `pronetPage`. */
export async function administeredOrganizations(endpoints: OAuthEndpoints, accessToken: string, allowList: string[]): Promise<Array<{ id: string; name: string }>> {
  const headers = { authorization: `Bearer ${accessToken}`, 'linkedin-version': LINKEDIN_VERSION, 'x-restli-protocol-version': '2.0.0' };
  const r = await call(`${endpoints.apiBaseUrl}/rest/organizationAcls?q=roleAssignee&role=ADMINISTRATOR&state=APPROVED`, { method: 'GET', headers }, allowList);
  if (r.status !== 200) throw failure('GET /rest/organizationAcls', r);
  const ids = ((r.body.elements as Array<{ organization?: unknown }> | undefined) ?? [])
    .map((e) => (typeof e.organization === 'string' ? /^urn:li:organization:(\d+)$/.exec(e.organization)?.[1] : undefined))
    .filter((id): id is string => !!id);
  const out: Array<{ id: string; name: string }> = [];
  for (const id of ids) {
    const o = await call(`${endpoints.apiBaseUrl}/rest/organizations/${id}`, { method: 'GET', headers }, allowList);
    out.push({ id, name: o.status === 200 && typeof o.body.localizedName === 'string' ? o.body.localizedName : `organization ${id}` });
  }
  return out;
}
