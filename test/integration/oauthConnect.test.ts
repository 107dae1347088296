/**
 * OAuth connect over HTTP against the fake X and LinkedIn servers: authorization URL → the fake's
 * consent (a real redirect) → callback → integration; reconnect keeps the id; state is signed,
 * single-use and bound to its workspace; the PKCE verifier never leaves the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { FakeLinkedIn } from '../fakes/linkedin.js';
import { FakeX } from '../fakes/x.js';
import { decryptCredentials } from '../../domain/credentials.js';
import { keyringOf } from '../../domain/keyring.js';
import { consent as browserConsent, oauthConnect } from '../oauthFlow.js';

const REDIRECT = 'https://app.example.com/integrations/oauth/callback';
let app: TestApp;
const x = new FakeX();
const li = new FakeLinkedIn();

beforeAll(async () => {
  await x.listen();
  await li.listen();
  x.oauth.addClient({ clientId: 'op-x', clientSecret: 'op-x-secret', redirectUris: [REDIRECT] });
  x.oauth.addClient({ clientId: 'own-x', clientSecret: 'own-x-secret', redirectUris: [REDIRECT] });
  li.oauth.addClient({ clientId: 'op-li', clientSecret: 'op-li-secret', redirectUris: [REDIRECT] });
  app = await startTestApp({
    workerMode: 'none',
    env: {
      OAUTH_REDIRECT_URL: REDIRECT,
      X_CLIENT_ID: 'op-x',
      X_CLIENT_SECRET: 'op-x-secret',
      X_AUTHORIZE_URL: `${x.url}/i/oauth2/authorize`,
      X_API_BASE_URL: x.url,
      LINKEDIN_CLIENT_ID: 'op-li',
      LINKEDIN_CLIENT_SECRET: 'op-li-secret',
      LINKEDIN_AUTH_BASE_URL: li.url,
      LINKEDIN_API_BASE_URL: li.url,
    },
  });
});
afterAll(async () => {
  await app?.close();
  await x.close();
  await li.close();
});

const connect = (apiKey: string, provider: string) => oauthConnect(app, apiKey, provider, REDIRECT);

describe('OAuth connect', () => {
  it('connects an X account with PKCE, shows its grant but no token, and reconnects it under the same id', async () => {
    const ws = await app.createWorkspace();
    x.oauth.consentAs({ id: '9001', name: 'Brand on X', username: 'brand' });
    const { auth, res } = await connect(ws.apiKey, 'microblog');
    const url = new URL(auth.body.data.authorizationUrl);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('scope')).toContain('offline.access');
    expect(url.searchParams.get('client_id')).toBe('op-x');
    expect(res.status).toBe(200);
    const i = res.body.data.integration;
    expect(res.body.data.reconnected).toBe(false);
    expect(i).toMatchObject({ provider: 'microblog', externalAccountId: '9001', name: 'Brand on X', handle: 'brand', status: 'connected', apiBaseUrl: x.url });
    expect(i.scopes).toContain('offline.access');
    const ttl = Date.parse(i.accessExpiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(7100_000);
    expect(ttl).toBeLessThanOrEqual(7200_000);

    // The code exchange sent the verifier whose challenge the authorization URL carried; no response shows a token.
    const exchange = x.calls('POST /2/oauth2/token').at(-1)!;
    expect(new URLSearchParams(exchange.raw.toString()).get('code_verifier')).toMatch(/^[\w-]{43}$/);
    expect(auth.body.data.authorizationUrl).not.toContain(new URLSearchParams(exchange.raw.toString()).get('code_verifier'));
    const got = await app.http('GET', `/integrations/${i.id}`, { apiKey: ws.apiKey });
    expect(got.body.data).toEqual(i);
    expect(JSON.stringify(got.body)).not.toMatch(/at-|rt-/);
    const row = (await app.pool.query(`select credentials_encrypted from integrations where id = $1`, [i.id])).rows[0];
    const creds = decryptCredentials(row.credentials_encrypted, keyringOf(app.config), i.id);
    expect(creds).toMatchObject({ accessToken: expect.stringMatching(/^at-/), refreshToken: expect.stringMatching(/^rt-/), app: 'operator' });

    // The same X account again: same integration, new grant.
    const again = await connect(ws.apiKey, 'microblog');
    expect(again.res.body.data).toMatchObject({ reconnected: true, integration: { id: i.id, status: 'connected' } });
    const list = await app.http('POST', '/integrations/filter-integrations', { apiKey: ws.apiKey, body: {} });
    expect(list.body.data.map((d: any) => d.id)).toEqual([i.id]);
    const creds2 = decryptCredentials((await app.pool.query(`select credentials_encrypted from integrations where id = $1`, [i.id])).rows[0].credentials_encrypted, keyringOf(app.config), i.id);
    expect(creds2.refreshToken).not.toBe(creds.refreshToken);
  });

  it('refuses a reused, forged or expired state, and a denied consent, without creating anything', async () => {
    const ws = await app.createWorkspace();
    x.oauth.consentAs({ id: '9002', name: 'Other', username: 'other' });
    const { query, res } = await connect(ws.apiKey, 'microblog');
    expect(res.status).toBe(200);
    const reused = await app.http('GET', `/integrations/oauth/callback${query}`);
    expect(reused.status).toBe(400);
    expect(reused.body.error.code).toBe('oauth_state_invalid');

    const auth = await app.http('POST', '/integrations/oauth/authorize', { apiKey: ws.apiKey, body: { provider: 'microblog' } });
    const q = new URLSearchParams((await browserConsent(auth.body.data.authorizationUrl, REDIRECT)).slice(1));
    const [payload, sig] = q.get('state')!.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const other = await app.createWorkspace();
    const forged = Buffer.from(JSON.stringify({ ...claims, w: other.workspaceId })).toString('base64url');
    const f = await app.http('GET', `/integrations/oauth/callback?code=${q.get('code')}&state=${forged}.${sig}`);
    expect(f.status).toBe(400);
    expect(f.body.error.code).toBe('oauth_state_invalid');
    const none = await app.http('GET', `/integrations/oauth/callback?code=abc`);
    expect(none.body.error.code).toBe('oauth_state_invalid');

    const denied = await app.http('POST', '/integrations/oauth/authorize', { apiKey: ws.apiKey, body: { provider: 'microblog' } });
    const dq = new URLSearchParams({ state: new URL(denied.body.data.authorizationUrl).searchParams.get('state')!, error: 'access_denied' });
    const d = await app.http('GET', `/integrations/oauth/callback?${dq}`);
    expect(d.status).toBe(400);
    expect(d.body.error.code).toBe('oauth_denied');
    const count = (await app.pool.query(`select count(*)::int n from integrations where workspace_id = any($1)`, [[ws.workspaceId, other.workspaceId]])).rows[0].n;
    expect(count).toBe(1);
  });

  it('connects a LinkedIn member, lists the pages they administer and connects one', async () => {
    const ws = await app.createWorkspace();
    li.oauth.consentAs({ id: 'mem42', name: 'Ada Lovelace' });
    li.addOrganization('5550001', 'Analytical Engines', ['mem42']);
    const { res } = await connect(ws.apiKey, 'pronetPage');
    expect(res.status).toBe(200);
    expect(res.body.data.integration).toMatchObject({ provider: 'pronet', externalAccountId: 'mem42', name: 'Ada Lovelace' });
    expect(res.body.data.organizations).toEqual([{ id: '5550001', name: 'Analytical Engines' }]);
    expect(Date.parse(res.body.data.integration.grantExpiresAt) - Date.now()).toBeGreaterThan(364 * 86400_000);
    const memberId = res.body.data.integration.id;
    const notMine = await app.http('POST', `/integrations/${memberId}/pages`, { apiKey: ws.apiKey, body: { organizationId: '999' } });
    expect(notMine.status).toBe(400);
    expect(notMine.body.error.details[0].path).toBe('/organizationId');
    const page = await app.http('POST', `/integrations/${memberId}/pages`, { apiKey: ws.apiKey, body: { organizationId: '5550001' } });
    expect(page.status).toBe(200);
    expect(page.body.data).toMatchObject({ provider: 'pronetPage', externalAccountId: '5550001', name: 'Analytical Engines', status: 'connected' });
  });

  it("uses the workspace's own app when it registered one, never returning its secret", async () => {
    const ws = await app.createWorkspace();
    const put = await app.http('PUT', '/integrations/oauth/apps/microblog', { apiKey: ws.apiKey, body: { clientId: 'own-x', clientSecret: 'own-x-secret' } });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ network: 'microblog', clientId: 'own-x' });
    const listed = await app.http('GET', '/integrations/oauth/apps', { apiKey: ws.apiKey });
    expect(JSON.stringify(listed.body)).not.toContain('own-x-secret');
    expect(listed.body.data).toHaveLength(1);
    x.oauth.consentAs({ id: '9003', name: 'Own app user', username: 'own' });
    const { auth, res } = await connect(ws.apiKey, 'microblog');
    expect(new URL(auth.body.data.authorizationUrl).searchParams.get('client_id')).toBe('own-x');
    expect(res.status).toBe(200);
    const exchange = x.calls('POST /2/oauth2/token').at(-1)!;
    expect(Buffer.from(String(exchange.headers.authorization).slice(6), 'base64').toString()).toBe('own-x:own-x-secret');
    expect((await app.http('DELETE', '/integrations/oauth/apps/microblog', { apiKey: ws.apiKey })).status).toBe(200);
    expect((await app.http('DELETE', '/integrations/oauth/apps/microblog', { apiKey: ws.apiKey })).status).toBe(404);
  });
});
