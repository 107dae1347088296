/**
 * The token lifecycle on the real stack (API, worker, Temporal) against the fake X OAuth server:
 * the token is refreshed just in time, once for 20 concurrent publishes; a revoked grant makes
 * the integration `reauth_required` and the post fail with `integration_reauth_required`;
 * reconnecting keeps the id and the rescheduled post publishes.
 *
 * Deterministic, whatever the load: a connect gets a token that already ends within the refresh
 * margin (60 s against 600 s), and every token issued after it lives X's 2 hours, far outside the
 * margin. So the first publish must refresh and no later one may, however long the 20 take (the
 * earlier version gave 10 s tokens against a 5 s margin: publishes spread over more than 5 s
 * refreshed twice).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { FakeX } from '../fakes/x.js';
import { oauthConnect } from '../oauthFlow.js';

const REDIRECT = 'https://app.example.com/integrations/oauth/callback';
/** Lifetime of the connect's token (within the margin) and of every later one (X's own, outside it). */
const CONNECT_TTL_SECS = 60;
const REFRESHED_TTL_SECS = 7200;
const MARGIN_SECS = 600;
let app: TestApp;
const x = new FakeX();
let ws: { workspaceId: string; apiKey: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inSecs = (s: number) => new Date(Date.now() + s * 1000).toISOString();

beforeAll(async () => {
  await x.listen();
  x.oauth.addClient({ clientId: 'op-x', clientSecret: 'op-x-secret', redirectUris: [REDIRECT] });
  app = await startTestApp({
    env: {
      PROVIDER_TIMEOUT_MS: '3000',
      OAUTH_REDIRECT_URL: REDIRECT,
      OAUTH_REFRESH_MARGIN_SECS: String(MARGIN_SECS),
      X_CLIENT_ID: 'op-x',
      X_CLIENT_SECRET: 'op-x-secret',
      X_AUTHORIZE_URL: `${x.url}/i/oauth2/authorize`,
      X_API_BASE_URL: x.url,
    },
  });
  ws = await app.createWorkspace({ plan: 'enterprise' });
});
afterAll(async () => {
  await app?.close();
  await x.close();
});

/** Connects `user` over OAuth with a token that ends within the margin; tokens issued later live 2 hours. */
async function connect(user: { id: string; name: string; username: string }) {
  x.oauth.consentAs(user);
  x.oauth.rules.accessTtlSecs = CONNECT_TTL_SECS;
  try {
    return await oauthConnect(app, ws.apiKey, 'microblog', REDIRECT);
  } finally {
    x.oauth.rules.accessTtlSecs = REFRESHED_TTL_SECS;
  }
}

async function draft(providerId: string, content: string): Promise<string> {
  const r = await app.http('POST', '/v1/posts', { apiKey: ws.apiKey, body: { providerId, content } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.id;
}

async function schedule(rows: Array<{ postId: string; providerId: string; at: string }>) {
  const r = await app.http('POST', '/v1/posts/bulk-schedule', {
    apiKey: ws.apiKey,
    body: { posts: rows.map((row) => ({ postId: row.postId, schedules: [{ providerId: row.providerId, scheduledTime: row.at }] })) },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

async function settled(id: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = (await app.http('GET', `/v1/posts/${id}`, { apiKey: ws.apiKey })).body.data;
    if (!['draft', 'scheduled', 'publishing'].includes(p.status)) return p;
    if (Date.now() > deadline) throw new Error(`post ${id} still ${p.status}`);
    await sleep(200);
  }
}

describe('token lifecycle', () => {
  it('refreshes a token that ends before the publish, exactly once for 20 concurrent publishes', async () => {
    const { res } = await connect({ id: '7001', name: 'Busy brand', username: 'busy' });
    const integration = res.body.data.integration;
    const refreshesBefore = x.oauth.refreshes.length;
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => draft(integration.id, `concurrent ${i}`)));
    await schedule(ids.map((postId) => ({ postId, providerId: integration.id, at: inSecs(2) })));
    const posts = await Promise.all(ids.map((id) => settled(id)));
    for (const p of posts) expect(p.status, JSON.stringify(p.error)).toBe('published');
    expect(x.oauth.refreshes.length - refreshesBefore).toBe(1);
    expect(x.tweets.filter((t) => t.authorId === '7001')).toHaveLength(20);
    const got = (await app.http('GET', `/integrations/${integration.id}`, { apiKey: ws.apiKey })).body.data;
    expect(Date.parse(got.accessExpiresAt)).toBeGreaterThan(Date.parse(integration.accessExpiresAt));
    expect(got.status).toBe('connected');
  });

  it('a revoked grant: reauth_required, the post fails with integration_reauth_required; reconnect keeps the id and the rescheduled post publishes', async () => {
    const { res } = await connect({ id: '7002', name: 'Revoked brand', username: 'revoked' });
    const id = res.body.data.integration.id;
    x.oauth.revokeUser('7002');
    const postId = await draft(id, 'after the revocation');
    await schedule([{ postId, providerId: id, at: inSecs(1) }]);
    const failed = await settled(postId);
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('integration_reauth_required');
    const integ = (await app.http('GET', `/integrations/${id}`, { apiKey: ws.apiKey })).body.data;
    expect(integ.status).toBe('reauth_required');
    expect(x.tweets.filter((t) => t.authorId === '7002')).toHaveLength(0);

    const again = await connect({ id: '7002', name: 'Revoked brand', username: 'revoked' });
    expect(again.res.body.data).toMatchObject({ reconnected: true, integration: { id, status: 'connected' } });
    await schedule([{ postId, providerId: id, at: inSecs(1) }]);
    const published = await settled(postId);
    expect(published.status, JSON.stringify(published.error)).toBe('published');
    expect(x.tweets.filter((t) => t.authorId === '7002').map((t) => t.text)).toEqual(['after the revocation']);
  });

  it('a token endpoint answering 503 then 429 is retried: the post publishes, the integration stays connected', async () => {
    const { res } = await connect({ id: '7003', name: 'Patient brand', username: 'patient' });
    const id = res.body.data.integration.id;
    x.inject('POST /2/oauth2/token', { status: 503, body: { error: 'temporarily_unavailable' } });
    x.inject('POST /2/oauth2/token', { status: 429, body: { title: 'Too Many Requests' }, headers: { 'retry-after': '1' } });
    const tokenCalls = x.calls('POST /2/oauth2/token').length;
    const postId = await draft(id, 'despite a flaky token endpoint');
    await schedule([{ postId, providerId: id, at: inSecs(2) }]);
    const p = await settled(postId);
    expect(p.status, JSON.stringify(p.error)).toBe('published');
    expect(x.calls('POST /2/oauth2/token').length - tokenCalls).toBe(3);
    expect((await app.http('GET', `/integrations/${id}`, { apiKey: ws.apiKey })).body.data.status).toBe('connected');
  });
});
