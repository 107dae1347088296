/**
 * Every outbound call of the service goes through the filtering agent and reaches a private
 * address only when the operator allow-list (OUTBOUND_ALLOW_LIST) names it: job webhooks, the
 * enrichment HTTP provider, the listening HTTP provider, the X adapter, the LinkedIn adapter
 * (including the upload URL LinkedIn hands back) and media import.
 *
 * The third parties run on 127.0.0.2 ("far"); the LinkedIn API itself and a redirector run on
 * 127.0.0.1 ("near"). Two instances of the service run side by side: `deny` allows 127.0.0.1
 * only, `allow` allows both. Each case shows the refusal (and that the far server received
 * nothing) on `deny`, then success on `allow`. Where the API checks an address before the worker
 * does, the worker's own check is shown by handing it the address directly (a job started on the
 * job path, an integration row written in SQL), as data stored before the allow-list changed
 * would reach it.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { startJob } from '../../api/jobs.js';
import { inWorkspaceScope } from '../../db/tenancy.js';
import { encryptCredentials } from '../../domain/credentials.js';
import { keyringOf } from '../../domain/keyring.js';
import { loadEnrichmentConfig } from '../../infra/enrichmentConfigFile.js';
import { planEnrichment } from '../../domain/enrichmentPlan.js';
import { OFFICIAL_PROVIDER_ORIGINS, providerBaseUrlAllowed, providerBaseUrlAllowList } from '../../infra/outbound.js';
import type { EnrichmentWorkflowInput } from '../../workflows/contract/enrichment.js';
import { startFakeEnrichmentProvider, type FakeEnrichmentProvider } from '../fakes/enrichmentProvider.js';
import { startFakeListeningProvider, type FakeListeningProvider } from '../fakes/listeningProvider.js';
import { FakeLinkedIn } from '../fakes/linkedin.js';
import { FakeX } from '../fakes/x.js';
import { startTestApp, type TestApp } from '../harness.js';
import { png } from '../png.js';

const NEAR = '127.0.0.1';
const FAR = '127.0.0.2';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inSecs = (s: number) => new Date(Date.now() + s * 1000).toISOString();

/** A small recording HTTP server: webhook receiver and file host. */
interface Recorder {
  url: string;
  received: Array<{ method: string; path: string; headers: IncomingHttpHeaders }>;
  server: Server;
}
async function recorder(host: string, answer: (path: string) => { status: number; headers?: Record<string, string>; body?: Buffer }): Promise<Recorder> {
  const received: Recorder['received'] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
      const a = answer(req.url ?? '');
      res.writeHead(a.status, a.headers).end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, received, server };
}


let hooks: Recorder;
let files: Recorder;
let redirector: Recorder;
let enrich: FakeEnrichmentProvider;
let listening: FakeListeningProvider;
const x = new FakeX();
const li = new FakeLinkedIn();
const image = png();

interface Instance {
  name: 'deny' | 'allow';
  app: TestApp;
  ws: { workspaceId: string; apiKey: string };
}
let deny: Instance;
let allow: Instance;

async function instance(name: Instance['name'], outboundAllowList: string): Promise<Instance> {
  const config = {
    providers: { far: { type: 'http', baseUrl: enrich.baseUrl, apiKeyEnv: 'ENRICH_FAR_KEY', timeoutMs: 2000 } },
    waterfall: { basic_contact_data: [], basic_company_data: [], emails: ['far'], phoneNumbers: [], pronetPosts: [] },
    retry: { maxAttempts: 2, initialIntervalMs: 100, maxIntervalMs: 200, maxRetryAfterMs: 1000 },
  };
  const app = await startTestApp({
    env: {
      OUTBOUND_ALLOW_LIST: outboundAllowList,
      // Both may name the fakes as integration base URLs: what differs is the address filter.
      PROVIDER_BASE_URL_ALLOW_LIST: `${NEAR},${FAR}`,
      PROVIDER_TIMEOUT_MS: '3000',
      ENRICHMENT_CONFIG: JSON.stringify(config),
      ENRICH_FAR_KEY: enrich.apiKey,
      LISTENING_PROVIDER: 'http',
      LISTENING_BASE_URL: listening.baseUrl,
      LISTENING_API_KEY: listening.apiKey,
      LISTENING_TIMEOUT_MS: '2000',
    },
  });
  return { name, app, ws: await app.createWorkspace({ plan: 'enterprise', credits: 10_000 }) };
}

beforeAll(async () => {
  hooks = await recorder(FAR, () => ({ status: 204 }));
  files = await recorder(FAR, () => ({ status: 200, headers: { 'content-type': 'image/png' }, body: image }));
  redirector = await recorder(NEAR, (path) => ({ status: 302, headers: { location: `${files.url}${path}` } }));
  enrich = await startFakeEnrichmentProvider('far', { host: FAR });
  listening = await startFakeListeningProvider({ host: FAR });
  await x.listen(FAR);
  x.addUser('3001', 'x-token');
  await li.listen(NEAR);
  li.uploadBaseUrl = await li.listenAlso(FAR);
  li.addAccount('li-token', ['urn:li:person:carol']);
  [deny, allow] = await Promise.all([instance('deny', `${NEAR},::1`), instance('allow', `${NEAR},${FAR},::1`)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([deny?.app.close(), allow?.app.close()]);
  for (const r of [hooks, files, redirector]) r?.server.close();
  await Promise.all([enrich?.close(), listening?.close(), x.close(), li.close()]);
});

/** The 400 of an address the API refuses, naming the field. */
function expectUrlRefused(res: { status: number; body: any }, path: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('url_not_allowed');
  expect(res.body.error.details[0].path).toBe(path);
}

describe('job webhooks', () => {
  async function job(inst: Instance, url: string): Promise<string> {
    const plan = planEnrichment({ fields: ['emails'], pronet: `https://www.pronet.example/in/hook-${randomBytes(4).toString('hex')}/` } as never, loadEnrichmentConfig(inst.app.config.rootDir, inst.app.config.env));
    const args: EnrichmentWorkflowInput = { plan, billable: false };
    // As the route does it: in the workspace's scope (row-level security, db/tenancy.ts).
    return (await inWorkspaceScope(inst.ws.workspaceId, () => startJob(inst.app.deps, { workspaceId: inst.ws.workspaceId, job: 'enrichment', args, webhook: { url } }))).jobId;
  }
  async function deliveries(inst: Instance, jobId: string) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = await inst.app.pool.query<{ status_code: number | null; error: string | null }>(`select status_code, error from webhook_deliveries where job_id = $1 order by attempt`, [jobId]);
      if (r.rows.length) return r.rows;
      if (Date.now() > deadline) throw new Error(`no delivery for ${jobId}`);
      await sleep(100);
    }
  }

  it('are refused at the API and at delivery unless the allow-list names the address', async () => {
    const api = await deny.app.http('POST', '/contacts/unified-data-api', {
      apiKey: deny.ws.apiKey,
      body: { fields: ['emails'], pronet: 'https://www.pronet.example/in/x/', webhookConfiguration: { url: `${hooks.url}/api` } },
    });
    expectUrlRefused(api, '/webhookConfiguration/url');

    const denied = await job(deny, `${hooks.url}/denied`);
    expect((await deny.app.waitForJob(denied, deny.ws.apiKey)).jobStatus).toBe('completed');
    const rows = await deliveries(deny, denied);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status_code).toBeNull();
    expect(rows[0]!.error).toMatch(/private or reserved|not allowed/);

    const allowed = await job(allow, `${hooks.url}/allowed`);
    expect((await allow.app.waitForJob(allowed, allow.ws.apiKey)).jobStatus).toBe('completed');
    expect(await deliveries(allow, allowed)).toEqual([{ status_code: 204, error: null }]);
    expect(hooks.received.map((r) => r.path)).toEqual(['/allowed']);
  });
});

describe('enrichment HTTP provider', () => {
  it('is not called unless the allow-list names its address', async () => {
    const who = `https://www.pronet.example/in/enrich-${randomBytes(4).toString('hex')}/`;
    enrich.setData(who, 'emails', { emails: [{ email: 'found@far.example', status: 'valid' }] } as never);
    const run = async (inst: Instance) => {
      const r = await inst.app.http('POST', '/contacts/unified-data-api', { apiKey: inst.ws.apiKey, body: { fields: ['emails'], pronet: who } });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      return inst.app.waitForJob(r.body.jobId, inst.ws.apiKey, 30_000);
    };
    const denied = await run(deny);
    expect(denied.jobStatus).toBe('completed');
    const slice = denied.jobResponsePayload.slices.emails;
    expect(slice.status).not.toBe('found');
    expect(slice.attempts).toHaveLength(1);
    expect(slice.attempts[0].error).toMatch(/provider_rejected: far: address not allowed/);
    expect(enrich.requestsFor(who)).toHaveLength(0);

    const allowed = await run(allow);
    expect(allowed.jobResponsePayload.slices.emails.status).toBe('found');
    expect(allowed.jobResponsePayload.emails).toEqual([expect.objectContaining({ email: 'found@far.example' })]);
    expect(enrich.requestsFor(who)).toHaveLength(1);
  });
});

describe('listening HTTP provider', () => {
  it('is not called unless the allow-list names its address', async () => {
    const id = `https://www.pronet.com/in/far-owner-${randomBytes(3).toString('hex')}`;
    listening.setAudience(id, [
      {
        pronet: 'https://www.pronet.com/in/far-fan',
        firstName: 'Far',
        lastName: 'Fan',
        interaction: { type: 'like', postUrl: null, occurredAt: new Date(Date.now() - 3600_000).toISOString() },
      },
    ]);
    const run = async (inst: Instance) => {
      const src = await inst.app.http('POST', '/sources', { apiKey: inst.ws.apiKey, body: { sourceType: 'pronetInbound', sourceIdentifier: id } });
      expect(src.status, JSON.stringify(src.body)).toBe(200);
      const r = await inst.app.http('POST', `/sources/pull-contacts-from-source/${src.body.data.id}`, { apiKey: inst.ws.apiKey, body: {} });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      return inst.app.waitForJob(r.body.jobId, inst.ws.apiKey, 30_000);
    };
    const before = listening.requests.length;
    const denied = await run(deny);
    expect(denied.jobStatus).toBe('failed');
    expect(denied.error.code).toBe('provider_rejected_query');
    expect(denied.error.message).toMatch(/address is not allowed/);
    expect(listening.requests.length).toBe(before);

    const allowed = await run(allow);
    expect(allowed.jobStatus, JSON.stringify(allowed)).toBe('completed');
    expect(allowed.jobResponsePayload).toMatchObject({ provider: 'http', fetched: 1, created: 1 });
    expect(listening.requests.length).toBe(before + 1);
  });
});

describe('social adapters', () => {
  async function connect(inst: Instance, provider: string, externalAccountId: string, token: string, apiBaseUrl: string) {
    return inst.app.http('POST', '/integrations', {
      apiKey: inst.ws.apiKey,
      body: { provider, name: `${provider} ${externalAccountId}`, externalAccountId, credentials: { accessToken: token }, apiBaseUrl },
    });
  }
  /** An integration row as stored before the allow-list was narrowed (the API would refuse it now). */
  async function storedIntegration(inst: Instance, provider: string, externalAccountId: string, token: string, apiBaseUrl: string): Promise<string> {
    const id = uuidv7();
    await inst.app.pool.query(
      `insert into integrations (id, workspace_id, provider, name, external_account_id, credentials_encrypted, api_base_url, status, created_at)
       values ($1, $2, $3, $4, $5, $6, $7, 'connected', now())`,
      [id, inst.ws.workspaceId, provider, `${provider} stored`, externalAccountId, encryptCredentials({ accessToken: token }, keyringOf(inst.app.config), id), apiBaseUrl],
    );
    return id;
  }
  async function publish(inst: Instance, providerId: string, content: string, media: Array<{ fileName: string }> = []) {
    const d = await inst.app.http('POST', '/v1/posts', { apiKey: inst.ws.apiKey, body: { providerId, content, ...(media.length ? { media } : {}) } });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    const id = d.body.data.id as string;
    const b = await inst.app.http('POST', '/v1/posts/bulk-schedule', { apiKey: inst.ws.apiKey, body: { posts: [{ postId: id, schedules: [{ providerId, scheduledTime: inSecs(1) }] }] } });
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    const deadline = Date.now() + 40_000;
    for (;;) {
      const p = (await inst.app.http('GET', `/v1/posts/${id}`, { apiKey: inst.ws.apiKey })).body.data;
      if (!['draft', 'scheduled', 'publishing'].includes(p.status)) return p;
      if (Date.now() > deadline) throw new Error(`post ${id} still ${p.status}`);
      await sleep(200);
    }
  }
  async function upload(inst: Instance): Promise<string> {
    const form = new FormData();
    form.set('file', new Blob([image], { type: 'image/png' }), 'pic.png');
    const up = await inst.app.http('POST', '/v1/media/upload', { apiKey: inst.ws.apiKey, rawBody: form });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    return up.body.data?.fileName ?? up.body.fileName;
  }

  it('X adapter: the API refuses the base URL, the worker refuses the address, unless allowed', async () => {
    expectUrlRefused(await connect(deny, 'microblog', '3001', 'x-token', x.url), '/apiBaseUrl');
    const stored = await storedIntegration(deny, 'microblog', '3001', 'x-token', x.url);
    const before = x.received.length;
    const denied = await publish(deny, stored, 'far tweet (denied)');
    expect(denied.status).toBe('failed');
    expect(denied.error).toMatchObject({ code: 'provider_address_not_allowed' });
    expect(x.received.length).toBe(before);

    const c = await connect(allow, 'microblog', '3001', 'x-token', x.url);
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    const allowed = await publish(allow, c.body.data.id, 'far tweet (allowed)');
    expect(allowed.status, JSON.stringify(allowed)).toBe('published');
    expect(x.tweets.map((t) => t.text)).toEqual(['far tweet (allowed)']);
  });

  it('LinkedIn adapter: the upload URL it hands back is refused unless allowed', async () => {
    const uploadsOnFar = () => li.received.filter((r) => r.method === 'PUT' && String(r.headers.host).startsWith(`${FAR}:`));
    const run = async (inst: Instance) => {
      const c = await connect(inst, 'pronet', 'carol', 'li-token', li.url);
      expect(c.status, JSON.stringify(c.body)).toBe(200);
      return publish(inst, c.body.data.id, `pronet with image (${inst.name})`, [{ fileName: await upload(inst) }]);
    };
    const denied = await run(deny);
    expect(denied.status).toBe('failed');
    expect(denied.error).toMatchObject({ code: 'provider_address_not_allowed' });
    expect(li.calls('POST /rest/{media}').length).toBeGreaterThanOrEqual(1); // the API itself (near) was reached
    expect(uploadsOnFar()).toHaveLength(0);
    expect(li.posts).toHaveLength(0);

    const allowed = await run(allow);
    expect(allowed.status, JSON.stringify(allowed)).toBe('published');
    expect(uploadsOnFar()).toHaveLength(1);
    expect(li.posts.map((p) => p.commentary)).toEqual(['pronet with image \\(allow\\)']);
  });

  it('a stored base URL the operator no longer allows is not called with the token', async () => {
    const other = await recorder(NEAR, () => ({ status: 500 }));
    try {
      // `localhost` reaches an allowed address, but PROVIDER_BASE_URL_ALLOW_LIST does not name it.
      const unlisted = other.url.replace(NEAR, 'localhost');
      expectUrlRefused(await connect(allow, 'microblog', '3001', 'x-token', unlisted), '/apiBaseUrl');
      const stored = await storedIntegration(allow, 'microblog', '3001', 'x-token', unlisted);
      const p = await publish(allow, stored, 'to an unlisted base URL');
      expect(p.status).toBe('failed');
      expect(p.error).toMatchObject({ code: 'provider_address_not_allowed' });
      expect(other.received).toHaveLength(0);
    } finally {
      other.server.close();
    }
  });
});

describe('media import', () => {
  it('downloads from an address only when allowed, also after a redirect', async () => {
    const direct = `${files.url}/direct.png`;
    const viaRedirect = `${redirector.url}/redirected.png`;
    expectUrlRefused(await deny.app.http('POST', '/v1/media/import-from-url', { apiKey: deny.ws.apiKey, body: { url: direct } }), '/url');
    expectUrlRefused(await deny.app.http('POST', '/v1/media/import-from-url', { apiKey: deny.ws.apiKey, body: { url: viaRedirect } }), '/url');
    expect(redirector.received.map((r) => r.path)).toEqual(['/redirected.png']); // near was allowed, the hop to far was not
    expect(files.received).toHaveLength(0);

    for (const url of [direct, viaRedirect]) {
      const r = await allow.app.http('POST', '/v1/media/import-from-url', { apiKey: allow.ws.apiKey, body: { url } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    expect(files.received.map((r) => r.path)).toEqual(['/direct.png', '/redirected.png']);
  });
});

describe('PROVIDER_BASE_URL_ALLOW_LIST', () => {
  it('defaults to the official API origins and matches origins, hosts and IPs', () => {
    expect(providerBaseUrlAllowList({})).toEqual(OFFICIAL_PROVIDER_ORIGINS);
    const official = providerBaseUrlAllowList({});
    expect(providerBaseUrlAllowed('https://api.x.com', official)).toBe(true);
    expect(providerBaseUrlAllowed('https://api.linkedin.com/', official)).toBe(true);
    expect(providerBaseUrlAllowed('http://api.x.com', official)).toBe(false);
    expect(providerBaseUrlAllowed('https://api.x.com.evil.example', official)).toBe(false);
    expect(providerBaseUrlAllowed('https://169.254.169.254', official)).toBe(false);
    expect(providerBaseUrlAllowed('http://127.0.0.1:8080/x', ['127.0.0.1'])).toBe(true);
    expect(providerBaseUrlAllowed('http://[::1]:8080', ['::1'])).toBe(true);
    expect(providerBaseUrlAllowed('http://127.0.0.1:8080', ['127.0.0.1:9090'])).toBe(false);
    expect(providerBaseUrlAllowed('http://fake.test:9090', ['fake.test:9090'])).toBe(true);
    expect(providerBaseUrlAllowed('not a url', ['127.0.0.1'])).toBe(false);
  });
});

describe('provider error bodies', () => {
  const LEAK = '<html><body>Internal error: db=postgres://admin:hunter2@10.0.0.5/prod\n  at Handler.run (/srv/app.js:10)</body></html>';

  it('reach a failed post as a code and a short reason, never as the raw body', async () => {
    const c = await allow.app.http('POST', '/integrations', {
      apiKey: allow.ws.apiKey,
      body: { provider: 'microblog', name: 'errors', externalAccountId: '3001', credentials: { accessToken: 'x-token' }, apiBaseUrl: x.url },
    });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    const post = async (content: string) => {
      const d = await allow.app.http('POST', '/v1/posts', { apiKey: allow.ws.apiKey, body: { providerId: c.body.data.id, content } });
      const id = d.body.data.id as string;
      await allow.app.http('POST', '/v1/posts/bulk-schedule', { apiKey: allow.ws.apiKey, body: { posts: [{ postId: id, schedules: [{ providerId: c.body.data.id, scheduledTime: inSecs(1) }] }] } });
      const deadline = Date.now() + 30_000;
      for (;;) {
        const p = (await allow.app.http('GET', `/v1/posts/${id}`, { apiKey: allow.ws.apiKey })).body.data;
        if (!['draft', 'scheduled', 'publishing'].includes(p.status)) return p;
        if (Date.now() > deadline) throw new Error(`post ${id} still ${p.status}`);
        await sleep(200);
      }
    };
    x.inject('POST /2/tweets', { status: 400, body: Buffer.from(LEAK), headers: { 'content-type': 'text/html' } });
    const html = await post('answered with an HTML page');
    expect(html.status).toBe('failed');
    expect(html.error).toMatchObject({ code: 'provider_rejected', message: '400 Bad Request' });

    x.inject('POST /2/tweets', { status: 400, body: { title: 'Invalid Request', detail: `${'very long reason '.repeat(300)}\u0007\r\nX-Injected: 1` } });
    const long = await post('answered with a very long reason');
    expect(long.status).toBe('failed');
    expect(long.error.code).toBe('provider_rejected');
    expect(long.error.message).toMatch(/^400 Invalid Request: very long reason/);
    expect(long.error.message.length).toBeLessThanOrEqual(210);
    expect(long.error.message).not.toMatch(/[\u0000-\u001f]/);
  });

  it('reach an enrichment attempt as the provider reason or the HTTP reason phrase only', async () => {
    const who = `https://www.pronet.example/in/errors-${randomBytes(4).toString('hex')}/`;
    enrich.script('emails', { status: 422, body: LEAK });
    const r = await allow.app.http('POST', '/contacts/unified-data-api', { apiKey: allow.ws.apiKey, body: { fields: ['emails'], pronet: who } });
    expect(r.status).toBe(202);
    const job = await allow.app.waitForJob(r.body.jobId, allow.ws.apiKey);
    const attempt = job.jobResponsePayload.slices.emails.attempts[0];
    expect(attempt.error).toBe('provider_rejected: far: HTTP 422 Unprocessable Entity');
    expect(JSON.stringify(job)).not.toContain('hunter2');
  });
});
