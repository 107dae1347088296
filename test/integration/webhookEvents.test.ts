/**
 * Workspace events on the real stack (API, worker, Temporal, PostgreSQL) against the fake X
 * network and a fake webhook receiver: subscription CRUD and validation; each delivery signed
 * (checked with the Standard Webhooks library), retried after a 5xx and recorded; 410 disables
 * the subscription; redelivery; one `post.published` per publish; a revoked grant gives one
 * `integration.reauth_required` and a `post.failed` with `integration_reauth_required` for every
 * post that hit it; the expiry sweep announces a grant once; a rotated secret signs beside the new one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startTestApp, type TestApp } from '../harness.js';
import { FakeX } from '../fakes/x.js';
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from '../fakes/webhookReceiver.js';
import { oauthConnect } from '../oauthFlow.js';
import { onClient, recordEvent } from '../../db/events.js';

const REDIRECT = 'https://app.example.com/integrations/oauth/callback';
let app: TestApp;
const x = new FakeX();
const receivers: WebhookReceiver[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inSecs = (s: number) => new Date(Date.now() + s * 1000).toISOString();

beforeAll(async () => {
  await x.listen();
  x.oauth.addClient({ clientId: 'op-x', clientSecret: 'op-x-secret', redirectUris: [REDIRECT] });
  app = await startTestApp({
    env: {
      PROVIDER_TIMEOUT_MS: '3000',
      OAUTH_REDIRECT_URL: REDIRECT,
      X_CLIENT_ID: 'op-x',
      X_CLIENT_SECRET: 'op-x-secret',
      X_AUTHORIZE_URL: `${x.url}/i/oauth2/authorize`,
      X_API_BASE_URL: x.url,
      INTEGRATION_EXPIRY_NOTICE_DAYS: '3',
    },
  });
});
afterAll(async () => {
  await app?.close();
  await x.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(opts: Parameters<typeof startWebhookReceiver>[0] = {}) {
  const r = await startWebhookReceiver(opts);
  receivers.push(r);
  return r;
}

async function subscribe(apiKey: string, url: string, eventTypes: string[] = ['post.published', 'post.failed', 'integration.reauth_required', 'integration.expires_soon']) {
  const r = await app.http('POST', '/webhook-subscriptions', { apiKey, body: { url, eventTypes } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { id: string; secret: string; status: string };
}

async function connect(apiKey: string, userId: string): Promise<string> {
  x.oauth.consentAs({ id: userId, name: `Brand ${userId}`, username: `brand${userId}` });
  const { res } = await oauthConnect(app, apiKey, 'microblog', REDIRECT);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.integration.id;
}

async function publish(apiKey: string, providerId: string, contents: string[], inS = 1): Promise<string[]> {
  const ids: string[] = [];
  for (const content of contents) {
    const r = await app.http('POST', '/v1/posts', { apiKey, body: { providerId, content } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids.push(r.body.data.id);
  }
  const r = await app.http('POST', '/v1/posts/bulk-schedule', {
    apiKey,
    body: { posts: ids.map((postId) => ({ postId, schedules: [{ providerId, scheduledTime: inSecs(inS) }] })) },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return ids;
}

async function settled(apiKey: string, id: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = (await app.http('GET', `/v1/posts/${id}`, { apiKey })).body.data;
    if (!['draft', 'scheduled', 'publishing'].includes(p.status)) return p;
    if (Date.now() > deadline) throw new Error(`post ${id} still ${p.status}`);
    await sleep(200);
  }
}

async function deliveries(apiKey: string, subscriptionId: string, query = '') {
  const r = await app.http('GET', `/webhook-subscriptions/${subscriptionId}/deliveries${query}`, { apiKey });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not met: ${JSON.stringify(v)}`);
    await sleep(200);
  }
}

/** The Standard Webhooks check a receiver runs: throws unless the signature matches. */
const verify = (secret: string, hook: ReceivedHook) =>
  new Webhook(secret).verify(hook.raw, {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  });

describe('webhook subscriptions API', () => {
  it('creates, lists, reads and deletes; the secret is answered once; bad input is a 400 naming the field', async () => {
    const ws = await app.createWorkspace();
    const other = await app.createWorkspace();
    const hook = await receiver();

    const bad = async (body: unknown, path: string, code = 'validation_failed') => {
      const r = await app.http('POST', '/webhook-subscriptions', { apiKey: ws.apiKey, body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.code).toBe(code);
      expect(JSON.stringify(r.body.error)).toContain(path);
    };
    await bad({ url: 'not a url', eventTypes: ['post.published'] }, '/url');
    await bad({ url: hook.url, eventTypes: ['post.deleted'] }, '/eventTypes/0');
    await bad({ url: hook.url, eventTypes: [] }, '/eventTypes');
    await bad({ url: hook.url, eventTypes: ['post.published'], extra: 1 }, 'extra');
    await bad({ url: 'http://10.1.2.3/hooks', eventTypes: ['post.published'] }, '/url', 'url_not_allowed');

    const created = await subscribe(ws.apiKey, hook.url, ['post.published']);
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.status).toBe('active');
    const second = await subscribe(ws.apiKey, hook.url, ['post.failed']);

    const page1 = await app.http('GET', '/webhook-subscriptions?limit=1', { apiKey: ws.apiKey });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((s: any) => s.id)).toEqual([created.id]);
    expect(page1.body.meta.totalRecords).toBe(2);
    expect(page1.body.data[0]).not.toHaveProperty('secret');
    const page2 = await app.http('GET', `/webhook-subscriptions?limit=1&paginationToken=${encodeURIComponent(page1.body.meta.nextToken)}`, { apiKey: ws.apiKey });
    expect(page2.body.data.map((s: any) => s.id)).toEqual([second.id]);
    expect((await app.http('GET', '/webhook-subscriptions?paginationToken=forged', { apiKey: ws.apiKey })).status).toBe(400);

    const got = await app.http('GET', `/webhook-subscriptions/${created.id}`, { apiKey: ws.apiKey });
    expect(got.body.data).toMatchObject({ id: created.id, url: hook.url, eventTypes: ['post.published'], status: 'active', disabledReason: null });
    expect(got.body.data).not.toHaveProperty('secret');
    // Another workspace sees nothing of it.
    expect((await app.http('GET', `/webhook-subscriptions/${created.id}`, { apiKey: other.apiKey })).status).toBe(404);
    expect((await app.http('DELETE', `/webhook-subscriptions/${created.id}`, { apiKey: other.apiKey })).status).toBe(404);
    expect((await app.http('GET', '/webhook-subscriptions', { apiKey: other.apiKey })).body.data).toEqual([]);
    expect((await app.http('GET', '/webhook-subscriptions/not-a-uuid', { apiKey: ws.apiKey })).status).toBe(404);

    const del = await app.http('DELETE', `/webhook-subscriptions/${created.id}`, { apiKey: ws.apiKey });
    expect(del.body).toEqual({ data: { id: created.id, deleted: true } });
    expect((await app.http('GET', `/webhook-subscriptions/${created.id}`, { apiKey: ws.apiKey })).status).toBe(404);
    expect((await app.http('DELETE', `/webhook-subscriptions/${created.id}`, { apiKey: ws.apiKey })).status).toBe(404);
  });
});

describe('event deliveries', () => {
  it('a publish sends one signed post.published; the delivery is listed as delivered', async () => {
    const ws = await app.createWorkspace();
    const hook = await receiver();
    const sub = await subscribe(ws.apiKey, hook.url);
    const integrationId = await connect(ws.apiKey, '8101');
    const [postId] = await publish(ws.apiKey, integrationId, ['events: published']);
    expect((await settled(ws.apiKey, postId!)).status).toBe('published');

    const got = await hook.waitFor((b) => b.type === 'post.published' && b.data.postId === postId);
    expect(() => verify(sub.secret, got)).not.toThrow();
    expect(() => verify(`whsec_${Buffer.from('another secret entirely!').toString('base64')}`, got)).toThrow();
    expect(got.body).toMatchObject({ type: 'post.published', data: { postId, integrationId, externalId: expect.any(String) } });
    expect(got.headers['webhook-id']).toBe(`msg_${got.body.id}`);
    // No post text in the event: a receiver reads the post for it.
    expect(got.raw).not.toContain('events: published');

    const list = await until(() => deliveries(ws.apiKey, sub.id), (b) => b.data[0]?.status === 'delivered');
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ eventId: got.body.id, eventType: 'post.published', status: 'delivered', attempts: 1, responseCode: 204, lastError: null });
    await sleep(1000);
    expect(hook.received.filter((h) => h.body.type === 'post.published')).toHaveLength(1);
  });

  it('a 5xx is retried: the second attempt delivers, and the record shows 2 attempts', async () => {
    const ws = await app.createWorkspace();
    const hook = await receiver({ answer: (n) => (n === 0 ? 503 : 204) });
    const sub = await subscribe(ws.apiKey, hook.url, ['post.published']);
    const integrationId = await connect(ws.apiKey, '8102');
    const [postId] = await publish(ws.apiKey, integrationId, ['events: retried']);
    await settled(ws.apiKey, postId!);
    const list = await until(() => deliveries(ws.apiKey, sub.id), (b) => b.data[0]?.status === 'delivered', 40_000);
    expect(list.data[0]).toMatchObject({ status: 'delivered', attempts: 2, responseCode: 204 });
    expect(hook.received).toHaveLength(2);
    // The same message both times: a receiver deduplicates on webhook-id.
    expect(hook.received[0]!.headers['webhook-id']).toBe(hook.received[1]!.headers['webhook-id']);
    for (const h of hook.received) expect(() => verify(sub.secret, h)).not.toThrow();
  });

  it('410 disables the subscription; a redelivery after enabling it sends the same event again', async () => {
    const ws = await app.createWorkspace();
    let gone = true;
    const hook = await receiver({ answer: () => (gone ? 410 : 204) });
    const sub = await subscribe(ws.apiKey, hook.url, ['post.published']);
    const integrationId = await connect(ws.apiKey, '8103');
    const [first] = await publish(ws.apiKey, integrationId, ['events: gone']);
    await settled(ws.apiKey, first!);
    const disabled = await until(
      async () => (await app.http('GET', `/webhook-subscriptions/${sub.id}`, { apiKey: ws.apiKey })).body.data,
      (s) => s.status === 'disabled',
    );
    expect(disabled).toMatchObject({ status: 'disabled', disabledReason: 'receiver_gone', disabledAt: expect.any(String) });
    const [failed] = (await until(() => deliveries(ws.apiKey, sub.id), (b) => b.data[0]?.status === 'failed')).data;
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, responseCode: 410 });
    expect(hook.received).toHaveLength(1);

    // While disabled: no delivery for a new event, and no redelivery.
    const [second] = await publish(ws.apiKey, integrationId, ['events: while disabled']);
    await settled(ws.apiKey, second!);
    await sleep(1000);
    expect((await deliveries(ws.apiKey, sub.id)).data).toHaveLength(1);
    const refused = await app.http('POST', `/webhook-subscriptions/${sub.id}/deliveries/${failed.id}/redeliver`, { apiKey: ws.apiKey });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('subscription_disabled');

    gone = false;
    const enabled = await app.http('POST', `/webhook-subscriptions/${sub.id}/enable`, { apiKey: ws.apiKey });
    expect(enabled.body.data).toMatchObject({ status: 'active', disabledReason: null });
    const again = await app.http('POST', `/webhook-subscriptions/${sub.id}/deliveries/${failed.id}/redeliver`, { apiKey: ws.apiKey });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data).toMatchObject({ redeliveryOf: failed.id, eventId: failed.eventId, status: 'pending' });
    const list = await until(() => deliveries(ws.apiKey, sub.id), (b) => b.data[0]?.status === 'delivered');
    expect(list.data.map((d: any) => d.id)).toEqual([again.body.data.id, failed.id]);
    expect(hook.received).toHaveLength(2);
    expect(hook.received[1]!.raw).toBe(hook.received[0]!.raw);
    expect(hook.received[1]!.headers['webhook-id']).toBe(hook.received[0]!.headers['webhook-id']);
    expect(() => verify(sub.secret, hook.received[1]!)).not.toThrow();
    expect((await app.http('POST', `/webhook-subscriptions/${sub.id}/deliveries/${crypto.randomUUID()}/redeliver`, { apiKey: ws.apiKey })).status).toBe(404);
  });

  it('a revoked grant: one integration.reauth_required, and a post.failed with integration_reauth_required for each post that hit it', async () => {
    const ws = await app.createWorkspace();
    const hook = await receiver();
    await subscribe(ws.apiKey, hook.url);
    // The fake's tokens live 2 h: the revoked access token is refused (401), its refresh answers invalid_grant.
    const integrationId = await connect(ws.apiKey, '8104');
    x.oauth.revokeUser('8104');
    const postIds = await publish(ws.apiKey, integrationId, ['revoked 1', 'revoked 2', 'revoked 3']);
    for (const id of postIds) expect((await settled(ws.apiKey, id)).error.code).toBe('integration_reauth_required');
    for (const id of postIds) await hook.waitFor((b) => b.type === 'post.failed' && b.data.postId === id);
    await hook.waitFor((b) => b.type === 'integration.reauth_required');
    await sleep(2000);
    const reauth = hook.received.filter((h) => h.body.type === 'integration.reauth_required');
    expect(reauth).toHaveLength(1);
    expect(reauth[0]!.body.data).toEqual({ integrationId, provider: 'microblog', status: 'reauth_required' });
    const failed = hook.received.filter((h) => h.body.type === 'post.failed');
    expect(failed.map((h) => h.body.data.postId).sort()).toEqual([...postIds].sort());
    for (const h of failed) expect(h.body.data.error).toEqual({ code: 'integration_reauth_required' });
  });

  it('the expiry sweep announces a grant ending within N days once; a rotated secret keeps signing beside the new one', async () => {
    const ws = await app.createWorkspace();
    const hook = await receiver();
    const sub = await subscribe(ws.apiKey, hook.url, ['integration.expires_soon']);
    const integrationId = await connect(ws.apiKey, '8105');
    const later = await connect(ws.apiKey, '8106');
    await app.pool.query(`update integrations set grant_expires_at = now() + interval '2 days' where id = $1`, [integrationId]);
    await app.pool.query(`update integrations set grant_expires_at = now() + interval '10 days' where id = $1`, [later]);

    const rotated = await app.http('POST', `/webhook-subscriptions/${sub.id}/rotate-secret`, { apiKey: ws.apiKey });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(sub.secret);
    expect(Date.parse(rotated.body.data.previousSecretExpiresAt)).toBeGreaterThan(Date.now() + 23 * 3600_000);

    const sweep = () =>
      app.deps.temporal.workflow.execute('workspaceEventsSweepWorkflow', { taskQueue: app.config.temporal.taskQueue, workflowId: `sweep-${crypto.randomUUID()}`, args: [] });
    await sweep();
    await sweep();
    const got = await hook.waitFor((b) => b.type === 'integration.expires_soon');
    await sleep(1500);
    const notices = hook.received.filter((h) => h.body.type === 'integration.expires_soon' && h.body.data.integrationId === integrationId);
    expect(notices).toHaveLength(1);
    expect(hook.received.filter((h) => h.body.data.integrationId === later)).toHaveLength(0);
    expect(got.body.data).toMatchObject({ integrationId, provider: 'microblog', grantExpiresAt: expect.any(String) });
    // Both secrets verify during the grace period.
    expect(() => verify(rotated.body.data.secret, got)).not.toThrow();
    expect(() => verify(sub.secret, got)).not.toThrow();
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
  });

  it('recording the same state change twice records one event and one delivery per subscription', async () => {
    const ws = await app.createWorkspace();
    const hook = await receiver();
    const sub = await subscribe(ws.apiKey, hook.url, ['post.failed']);
    const event = { workspaceId: ws.workspaceId, type: 'post.failed' as const, stateKey: `post.failed:${crypto.randomUUID()}`, data: { postId: crypto.randomUUID() } };
    const first = await recordEvent(onClient(app.pool), event);
    const second = await recordEvent(onClient(app.pool), event);
    expect(first?.deliveries).toHaveLength(1);
    expect(second).toBeNull();
    const { rows } = await app.pool.query('select count(*)::int as n from webhook_event_deliveries where subscription_id = $1', [sub.id]);
    expect(rows[0].n).toBe(1);
  });

  it('every body received matches its schema in the OpenAPI document\'s webhooks', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, validateSchema: false });
    (addFormatsModule as unknown as (a: Ajv2020) => Ajv2020)(ajv);
    const bodies = receivers.flatMap((r) => r.received.map((h) => h.body));
    const types = new Set(bodies.map((b) => b.type));
    expect([...types].sort()).toEqual(['integration.expires_soon', 'integration.reauth_required', 'post.failed', 'post.published']);
    for (const body of bodies) {
      const ref: string = doc.webhooks[body.type].post.requestBody.content['application/json'].schema.$ref;
      const validate = ajv.getSchema(ref) ?? (ajv.addSchema(doc.components.schemas[ref.split('/').pop()!], ref), ajv.getSchema(ref)!);
      expect(validate(body), `${body.type}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(validate({ ...body, data: { ...body.data, extra: 1 } })).toBe(false);
    }
  });
});
