/** The fake X and LinkedIn OAuth servers keep the networks' semantics (what the OAuth tests rely on). */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLinkedIn } from '../fakes/linkedin.js';
import { s256 } from '../fakes/oauthGrants.js';
import { FakeX } from '../fakes/x.js';

const x = new FakeX();
const li = new FakeLinkedIn();
const REDIRECT = 'http://127.0.0.1:1/callback';
beforeAll(async () => {
  await x.listen();
  await li.listen();
  x.oauth.addClient({ clientId: 'x-client', clientSecret: 'x-secret', redirectUris: [REDIRECT] });
  li.oauth.addClient({ clientId: 'li-client', clientSecret: 'li-secret', redirectUris: [REDIRECT] });
});
afterAll(async () => {
  await x.close();
  await li.close();
});

const form = (f: Record<string, string>) => new URLSearchParams(f).toString();
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function xToken(f: Record<string, string>) {
  const res = await fetch(`${x.url}/2/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('x-client', 'x-secret') }, body: form(f) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function xCode(verifier: string): Promise<string> {
  const u = new URL(`${x.url}/i/oauth2/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: 'x-client', redirect_uri: REDIRECT, scope: 'tweet.read tweet.write users.read offline.access', state: 's1', code_challenge: s256(verifier), code_challenge_method: 'S256' })) u.searchParams.set(k, v);
  const res = await fetch(u, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get('location')!);
  expect(back.searchParams.get('state')).toBe('s1');
  return back.searchParams.get('code')!;
}

describe('fake X OAuth 2.0', () => {
  it('checks PKCE, issues 2-hour tokens, rotates refresh tokens, refuses a spent one, revokes, expires', async () => {
    x.oauth.consentAs({ id: '4242', name: 'Brand', username: 'brand' });
    const verifier = randomBytes(32).toString('base64url');
    const code = await xCode(verifier);
    const wrong = await xToken({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: randomBytes(32).toString('base64url') });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const first = await xToken({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'bearer', expires_in: 7200 });
    expect(first.body.refresh_token).toBeTruthy();

    const me = await fetch(`${x.url}/2/users/me`, { headers: { authorization: `Bearer ${first.body.access_token}` } });
    expect(await me.json()).toEqual({ data: { id: '4242', name: 'Brand', username: 'brand' } });

    const rotated = await xToken({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(await xToken({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    // 2 hours later the access token answers 401.
    const start = Date.now();
    x.oauth.now = () => start + 7200_000 + 1;
    expect((await fetch(`${x.url}/2/users/me`, { headers: { authorization: `Bearer ${rotated.body.access_token}` } })).status).toBe(401);
    x.oauth.now = () => Date.now();

    const revoke = await fetch(`${x.url}/2/oauth2/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('x-client', 'x-secret') }, body: form({ token: rotated.body.refresh_token, token_type_hint: 'refresh_token' }) });
    expect(revoke.status).toBe(200);
    expect((await xToken({ grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token })).body.error).toBe('invalid_grant');
    expect((await fetch(`${x.url}/2/users/me`, { headers: { authorization: `Bearer ${rotated.body.access_token}` } })).status).toBe(401);
  });

  it('answers a replayed code with invalid_grant and revokes what it issued', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const code = await xCode(verifier);
    const first = await xToken({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
    expect((await xToken({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier })).body.error).toBe('invalid_grant');
    expect((await fetch(`${x.url}/2/users/me`, { headers: { authorization: `Bearer ${first.body.access_token}` } })).status).toBe(401);
  });

  it('refuses an unregistered redirect URI and a missing PKCE challenge', async () => {
    const u = new URL(`${x.url}/i/oauth2/authorize?response_type=code&client_id=x-client&scope=tweet.read&state=s`);
    u.searchParams.set('redirect_uri', 'http://127.0.0.1:2/evil');
    expect((await fetch(u, { redirect: 'manual' })).status).toBe(400);
    u.searchParams.set('redirect_uri', REDIRECT);
    const res = await fetch(u, { redirect: 'manual' });
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('fake LinkedIn OAuth', () => {
  it('issues 60-day tokens, keeps the refresh token, answers userinfo and the pages a member administers', async () => {
    li.oauth.consentAs({ id: 'abc123', name: 'Ada Lovelace' });
    li.addOrganization('777', 'Analytical Engines', ['abc123']);
    li.addOrganization('888', 'Someone Else Ltd', ['zzz']);
    const u = new URL(`${li.url}/oauth/v2/authorization`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: 'li-client', redirect_uri: REDIRECT, scope: 'openid profile w_member_social w_organization_social rw_organization_admin', state: 's2' })) u.searchParams.set(k, v);
    const code = new URL((await fetch(u, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
    const res = await fetch(`${li.url}/oauth/v2/accessToken`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: 'li-client', client_secret: 'li-secret' }),
    });
    const tok = (await res.json()) as Record<string, any>;
    expect(tok).toMatchObject({ expires_in: 5184000, refresh_token_expires_in: 31536000 });
    const auth = { authorization: `Bearer ${tok.access_token}`, 'linkedin-version': '202506', 'x-restli-protocol-version': '2.0.0' };
    expect(await (await fetch(`${li.url}/v2/userinfo`, { headers: auth })).json()).toMatchObject({ sub: 'abc123', name: 'Ada Lovelace' });
    const acls = (await (await fetch(`${li.url}/rest/organizationAcls?q=roleAssignee&role=ADMINISTRATOR&state=APPROVED`, { headers: auth })).json()) as any;
    expect(acls.elements.map((e: any) => e.organization)).toEqual(['urn:li:organization:777']);
    const refreshed = await fetch(`${li.url}/oauth/v2/accessToken`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ grant_type: 'refresh_token', refresh_token: tok.refresh_token, client_id: 'li-client', client_secret: 'li-secret' }),
    });
    const r2 = (await refreshed.json()) as Record<string, any>;
    expect(r2.refresh_token).toBe(tok.refresh_token);
    expect(r2.access_token).not.toBe(tok.access_token);
  });
});
