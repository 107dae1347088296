/** The browser's part of an OAuth connect, for tests: authorize → the fake's consent → callback. */
import { expect } from 'vitest';
import type { HttpResponse, TestApp } from './harness.js';

/** Follows the consent page's redirect; answers the callback URL's query string (`?code=…&state=…`). */
export async function consent(authorizationUrl: string, redirectUri: string): Promise<string> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get('location')!);
  expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
  return back.search;
}

/** A whole connect over HTTP: the authorize answer, the callback's query string and the callback's answer. */
export async function oauthConnect(app: TestApp, apiKey: string, provider: string, redirectUri: string): Promise<{ auth: HttpResponse; query: string; res: HttpResponse }> {
  const auth = await app.http('POST', '/integrations/oauth/authorize', { apiKey, body: { provider } });
  expect(auth.status, JSON.stringify(auth.body)).toBe(200);
  const query = await consent(auth.body.data.authorizationUrl, redirectUri);
  return { auth, query, res: await app.http('GET', `/integrations/oauth/callback${query}`) };
}
