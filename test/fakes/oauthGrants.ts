/**
 * The OAuth 2.0 authorization server half shared by the fake X and LinkedIn servers (RFC 6749 +
 * RFC 7636): registered clients, a consent step that approves on behalf of a configured user,
 * single-use authorization codes bound to client, redirect URI and PKCE challenge, grants whose
 * access tokens expire on the fake's clock, refresh tokens that rotate (X) or stay (LinkedIn),
 * a spent refresh token answering `invalid_grant`, and revocation ending the whole grant.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FakeReply, Received } from './socialFake.js';

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

/** Who the fake consent screen approves as (the member or user logged in on the network). */
export interface ConsentUser {
  id: string;
  name: string;
  /** X `username`; LinkedIn: none. */
  username?: string;
  email?: string;
}

export interface Grant {
  id: string;
  clientId: string;
  user: ConsentUser;
  scopes: string[];
  revoked: boolean;
}

interface Code {
  grant: Grant;
  redirectUri: string;
  challenge: string | null;
  expiresAt: number;
  used: boolean;
}

export interface OAuthRules {
  /** Access token lifetime (s): X 7200, LinkedIn 60 days. */
  accessTtlSecs: number;
  /** Refresh token lifetime (s) reported to the client (LinkedIn 365 days); none: X (no expiry given). */
  refreshTtlSecs: number | null;
  /** Every refresh answers a new refresh token and spends the old one (X). */
  rotateRefresh: boolean;
  /** PKCE S256 required on the authorization request (X). */
  pkce: boolean;
  /** A refresh token is issued only when this scope was granted (X `offline.access`); null: always. */
  refreshScope: string | null;
}

const token = (prefix: string) => `${prefix}${randomBytes(18).toString('base64url')}`;
export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const oauthError = (status: number, error: string, description: string): FakeReply => ({ status, body: { error, error_description: description } });

export class OAuthGrants {
  readonly clients = new Map<string, OAuthClient>();
  /** Users approving the next consents, in order; the last one stays. */
  consentQueue: ConsentUser[] = [];
  /** The fake's clock (ms); tests move it forward to expire tokens. */
  now: () => number = () => Date.now();
  /** What the token endpoint answered: refreshes counted per grant by tests. */
  readonly refreshes: Array<{ grantId: string; userId: string; at: number }> = [];
  private codes = new Map<string, Code>();
  private access = new Map<string, { grant: Grant; expiresAt: number }>();
  private refresh = new Map<string, { grant: Grant; spent: boolean; expiresAt: number | null }>();

  /** Mutable: a test may shorten token lifetimes. */
  constructor(readonly rules: OAuthRules) {}

  addClient(c: OAuthClient): void {
    this.clients.set(c.clientId, c);
  }

  /** The user the consent screen approves as (every following consent, until changed). */
  consentAs(user: ConsentUser): void {
    this.consentQueue = [user];
  }

  /** GET authorize: validates the request, "consents" and redirects back with a code. */
  authorize(req: Received): FakeReply {
    const q = req.query;
    const client = this.clients.get(q.get('client_id') ?? '');
    if (!client) return { status: 400, body: { error: 'invalid_client', error_description: 'unknown client_id' } };
    const redirectUri = q.get('redirect_uri') ?? '';
    // An unregistered redirect URI is refused on the page itself, never redirected to.
    if (!client.redirectUris.includes(redirectUri)) return { status: 400, body: { error: 'invalid_request', error_description: 'redirect_uri does not match a registered URI' } };
    const back = new URL(redirectUri);
    const state = q.get('state');
    if (state !== null) back.searchParams.set('state', state);
    const fail = (error: string, description: string): FakeReply => {
      back.searchParams.set('error', error);
      back.searchParams.set('error_description', description);
      return { status: 302, headers: { location: back.toString() } };
    };
    if (q.get('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    const scopes = (q.get('scope') ?? '').split(/[ ,]+/).filter(Boolean);
    if (!scopes.length) return fail('invalid_scope', 'scope is required');
    let challenge: string | null = null;
    if (this.rules.pkce) {
      challenge = q.get('code_challenge');
      if (!challenge || q.get('code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge with code_challenge_method=S256 is required');
    }
    const user = this.consentQueue.length > 1 ? this.consentQueue.shift()! : this.consentQueue[0];
    if (!user) return fail('access_denied', 'the user denied the request');
    const grant: Grant = { id: token('g-'), clientId: client.clientId, user, scopes, revoked: false };
    const code = token('code-');
    this.codes.set(code, { grant, redirectUri, challenge, expiresAt: this.now() + 30_000, used: false });
    back.searchParams.set('code', code);
    return { status: 302, headers: { location: back.toString() } };
  }

  /**
   * POST token (form-encoded). Client authentication: HTTP Basic or `client_id` + `client_secret`
   * in the form. Grants: `authorization_code` (with `code_verifier` when PKCE) and `refresh_token`.
   */
  token(req: Received): FakeReply {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return oauthError(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    const form = new URLSearchParams(req.raw.toString('utf8'));
    const client = this.authenticate(req, form);
    if (!client) return oauthError(401, 'invalid_client', 'client authentication failed');
    const type = form.get('grant_type');
    if (type === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      if (!code || code.used || code.expiresAt < this.now() || code.grant.clientId !== client.clientId) {
        // A replayed code revokes what it issued (RFC 6749 §4.1.2).
        if (code?.used) this.revokeGrant(code.grant);
        return oauthError(400, 'invalid_grant', 'authorization code is invalid, expired or already used');
      }
      if (form.get('redirect_uri') !== code.redirectUri) return oauthError(400, 'invalid_grant', 'redirect_uri does not match the authorization request');
      if (code.challenge !== null) {
        const verifier = form.get('code_verifier') ?? '';
        if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier) || s256(verifier) !== code.challenge) return oauthError(400, 'invalid_grant', 'code_verifier does not match the code_challenge');
      }
      code.used = true;
      return { status: 200, body: this.issue(code.grant, null) };
    }
    if (type === 'refresh_token') {
      const r = this.refresh.get(form.get('refresh_token') ?? '');
      if (!r || r.spent || r.grant.revoked || r.grant.clientId !== client.clientId || (r.expiresAt !== null && r.expiresAt < this.now())) {
        return oauthError(400, 'invalid_grant', 'Value passed for the token was invalid.');
      }
      this.refreshes.push({ grantId: r.grant.id, userId: r.grant.user.id, at: this.now() });
      const keep = this.rules.rotateRefresh ? null : form.get('refresh_token')!;
      if (this.rules.rotateRefresh) r.spent = true;
      return { status: 200, body: this.issue(r.grant, keep) };
    }
    return oauthError(400, 'unsupported_grant_type', `grant_type ${String(type)} is not supported`);
  }

  /** POST revoke: the token's whole grant ends (access and refresh tokens). */
  revokeRequest(req: Received): FakeReply {
    const form = new URLSearchParams(req.raw.toString('utf8'));
    if (!this.authenticate(req, form)) return oauthError(401, 'invalid_client', 'client authentication failed');
    const t = form.get('token') ?? '';
    const grant = this.access.get(t)?.grant ?? this.refresh.get(t)?.grant;
    if (grant) this.revokeGrant(grant);
    return { status: 200, body: { revoked: true } };
  }

  /** The user revoked the app on the network's settings page. */
  revokeUser(userId: string): void {
    for (const { grant } of this.access.values()) if (grant.user.id === userId) grant.revoked = true;
    for (const { grant } of this.refresh.values()) if (grant.user.id === userId) grant.revoked = true;
  }

  /** The grant of a live access token, or null (unknown, expired or revoked). */
  grantOf(accessToken: string | null): Grant | null {
    const a = this.access.get(accessToken ?? '');
    if (!a || a.grant.revoked || a.expiresAt <= this.now()) return null;
    return a.grant;
  }

  /** Whether this access token was issued here at all (live or not). */
  issued(accessToken: string | null): boolean {
    return this.access.has(accessToken ?? '');
  }

  private revokeGrant(g: Grant): void {
    g.revoked = true;
  }

  private authenticate(req: Received, form: URLSearchParams): OAuthClient | null {
    const basic = /^Basic (.+)$/.exec(String(req.headers.authorization ?? ''));
    let id = form.get('client_id') ?? '';
    let secret = form.get('client_secret');
    if (basic) {
      const [u, ...p] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
      id = decodeURIComponent(u ?? '');
      secret = decodeURIComponent(p.join(':'));
    }
    const c = this.clients.get(id);
    return c && secret === c.clientSecret ? c : null;
  }

  private issue(grant: Grant, keepRefresh: string | null): Record<string, unknown> {
    const accessToken = token('at-');
    this.access.set(accessToken, { grant, expiresAt: this.now() + this.rules.accessTtlSecs * 1000 });
    const body: Record<string, unknown> = { token_type: 'bearer', access_token: accessToken, expires_in: this.rules.accessTtlSecs, scope: grant.scopes.join(' ') };
    if (keepRefresh) {
      // LinkedIn answers a refresh with the same refresh token and what is left of its lifetime.
      const r = this.refresh.get(keepRefresh)!;
      body.refresh_token = keepRefresh;
      if (r.expiresAt !== null) body.refresh_token_expires_in = Math.floor((r.expiresAt - this.now()) / 1000);
    } else if (this.rules.refreshScope === null || grant.scopes.includes(this.rules.refreshScope)) {
      const refreshToken = token('rt-');
      const expiresAt = this.rules.refreshTtlSecs === null ? null : this.now() + this.rules.refreshTtlSecs * 1000;
      this.refresh.set(refreshToken, { grant, spent: false, expiresAt });
      body.refresh_token = refreshToken;
      if (this.rules.refreshTtlSecs !== null) body.refresh_token_expires_in = this.rules.refreshTtlSecs;
    }
    return body;
  }
}
