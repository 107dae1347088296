/**
 * The OAuth `state` parameter: `<payload>.<mac>`, the payload (base64url JSON: pending row id,
 * workspace, provider, expiry) signed with HMAC-SHA256 under the server secret. The signature
 * binds the state to its workspace (the callback, which carries no API key, learns the
 * workspace from it); single use and the PKCE verifier are the pending row's (db/oauth.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Provider } from './social.js';

export interface OAuthStatePayload {
  /** The pending authorization's row id. */
  id: string;
  workspaceId: string;
  provider: Provider;
  /** Expiry, epoch milliseconds. */
  exp: number;
}

/** How long a user has to consent: 10 minutes. */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;

const mac = (secret: string, payload: string) => createHmac('sha256', secret).update(`oauth-state:${payload}`).digest('base64url');

export function signOAuthState(secret: string, p: OAuthStatePayload): string {
  const payload = Buffer.from(JSON.stringify({ i: p.id, w: p.workspaceId, p: p.provider, e: p.exp })).toString('base64url');
  return `${payload}.${mac(secret, payload)}`;
}

/** The payload of a state this server signed and that has not expired, else null. */
export function verifyOAuthState(secret: string, state: string, now = Date.now()): OAuthStatePayload | null {
  const [payload, sig, ...rest] = state.split('.');
  if (!payload || !sig || rest.length) return null;
  const want = Buffer.from(mac(secret, payload));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
  try {
    const j = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { i?: unknown; w?: unknown; p?: unknown; e?: unknown };
    if (typeof j.i !== 'string' || typeof j.w !== 'string' || typeof j.p !== 'string' || typeof j.e !== 'number') return null;
    if (j.e <= now) return null;
    return { id: j.i, workspaceId: j.w, provider: j.p as Provider, exp: j.e };
  } catch {
    return null;
  }
}
