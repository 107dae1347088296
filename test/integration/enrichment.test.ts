/**
 * Enrichment through HTTP on the real stack: `POST /contacts/unified-data-api` → Temporal
 * workflow → fake HTTP providers (test/fakes/enrichmentProvider.ts) and the dataset tables →
 * `GET /jobs/{jobId}`, `GET /credits/balance` and the signed webhook.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import pg from 'pg';
import { MockActivityEnvironment } from '@temporalio/testing';
import { activityInterceptors } from '../../worker/worker.js';
import { v7 as uuidv7 } from 'uuid';
import { startTestApp, type TestApp } from '../harness.js';
import { startFakeEnrichmentProvider, type FakeEnrichmentProvider } from '../fakes/enrichmentProvider.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhookReceiver.js';
import { CREDIT_LOCK_TIMEOUT_MS, debitCredits } from '../../db/credits.js';
import { inWorkspaceScope } from '../../db/tenancy.js';
import { InsufficientCreditsError } from '../../domain/errors.js';
import { normalizeProfileUrl } from '../../domain/identity.js';
import { createEnrichmentActivities } from '../../activities/providers/enrichment.js';
import type { NewWorkspace } from '../../db/workspaces.js';
import type { EnrichmentResult } from '../../domain/enrichment.js';

let app: TestApp;
let alpha: FakeEnrichmentProvider;
let beta: FakeEnrichmentProvider;
let gamma: FakeEnrichmentProvider;
let hooks: WebhookReceiver;

beforeAll(async () => {
  [alpha, beta, gamma] = await Promise.all(['alpha', 'beta', 'gamma'].map((n) => startFakeEnrichmentProvider(n)));
  const env = { ENRICH_ALPHA_KEY: alpha.apiKey, ENRICH_BETA_KEY: beta.apiKey, ENRICH_GAMMA_KEY: gamma.apiKey };
  const http = (p: FakeEnrichmentProvider, extra: object = {}) => ({ type: 'http', baseUrl: p.baseUrl, apiKeyEnv: `ENRICH_${p.name.toUpperCase()}_KEY`, timeoutMs: 800, ...extra });
  const config = {
    providers: {
      dataset: { type: 'dataset' },
      alpha: http(alpha, { lookups: ['pronet', 'name_domain'] }),
      beta: http(beta),
      gamma: http(gamma, { slices: ['emails', 'phoneNumbers'] }),
    },
    waterfall: {
      basic_contact_data: ['dataset'],
      basic_company_data: ['dataset'],
      emails: ['alpha', 'beta', 'gamma', 'dataset'],
      phoneNumbers: ['alpha', 'beta', 'gamma'],
      pronetPosts: ['dataset', 'beta'],
    },
    retry: { maxAttempts: 3, initialIntervalMs: 100, maxIntervalMs: 1000, maxRetryAfterMs: 5000 },
  };
  app = await startTestApp({ env: { ...env, ENRICHMENT_CONFIG: JSON.stringify(config) } });

  hooks = await startWebhookReceiver();
});

afterAll(async () => {
  await app?.close();
  await Promise.all([alpha, beta, gamma].map((p) => p?.close()));
  await hooks?.close();
});

const person = (name: string) => `https://www.pronet.example/in/${name}-${randomBytes(4).toString('hex')}/`;

async function balance(ws: NewWorkspace): Promise<number> {
  const r = await app.http('GET', '/credits/balance', { apiKey: ws.apiKey });
  expect(r.status).toBe(200);
  return r.body.data.balance;
}

async function enrich(ws: NewWorkspace, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const r = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body, headers });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  expect(r.body.jobStatusEndpoint).toBe(`${app.url}/jobs/${r.body.jobId}`);
  expect(r.body.message).toMatch(/accepted/i);
  return r.body.jobId;
}

/** The job's charges (`debit` rows), or with `holds` also its hold and release. */
async function ledger(jobId: string, holds = false) {
  const r = await app.pool.query<{ amount: number; idempotency_key: string }>(
    `select amount, idempotency_key from credit_transactions where job_id = $1 ${holds ? '' : `and kind = 'debit'`} order by idempotency_key`,
    [jobId],
  );
  return r.rows.map((x) => ({ amount: x.amount, key: x.idempotency_key }));
}

const outcomes = (slice: { attempts: Array<{ provider: string; outcome: string }> }) => slice.attempts.map((a) => `${a.provider}:${a.outcome}`);

describe('POST /contacts/unified-data-api validation', () => {
  it('answers 400 naming the rule, 401 without a key, and starts nothing', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const post = (body: unknown) => app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body });
    const empty = await post({ fields: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ code: 'validation_failed' });
    // The schema also says pronet (or a name for emails) is needed: /fields is one of the details.
    expect(empty.body.error.details.map((d: { path: string }) => d.path)).toContain('/fields');
    const unknown = await post({ fields: ['emails', 'salary'], pronet: person('x') });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0].path).toBe('/fields/1');
    const extra = await post({ fields: ['emails'], pronet: person('x'), nickname: 'x' });
    expect(extra.body.error.details[0]).toMatchObject({ path: '/nickname', message: 'is not a known property' });
    const noPronet = await post({ fields: ['basic_contact_data', 'phoneNumbers', 'emails'], fullName: 'Jane Doe', companyWebsite: 'acme.com' });
    expect(noPronet.status).toBe(400);
    expect(noPronet.body.error).toMatchObject({ code: 'pronet_required', message: 'pronet is required for basic_contact_data, phoneNumbers' });
    const websiteOnly = await post({ fields: ['emails'], companyWebsite: 'acme.com' });
    expect(websiteOnly.body.error).toMatchObject({ code: 'pronet_required', details: [{ path: '/fullName' }] });
    const badUrl = await post({ fields: ['emails'], pronet: 'jane doe' });
    expect(badUrl.body.error.details[0].path).toBe('/pronet');
    const privateHook = await post({ fields: ['emails'], pronet: person('x'), webhookConfiguration: { url: 'http://10.1.2.3/hook' } });
    expect(privateHook.status).toBe(400);
    expect(privateHook.body.error).toMatchObject({ code: 'url_not_allowed' });
    expect(privateHook.body.error.details[0].path).toBe('/webhookConfiguration/url');
    const noKey = await app.http('POST', '/contacts/unified-data-api', { body: { fields: ['emails'], pronet: person('x') } });
    expect(noKey.status).toBe(401);
    const jobs = await app.pool.query(`select count(*)::int as n from jobs where workspace_id = $1`, [ws.workspaceId]);
    expect(jobs.rows[0].n).toBe(0);
  });

  it('answers 402 when the balance cannot cover the maximum price, before any provider is called', async () => {
    const ws = await app.createWorkspace({ credits: 35 });
    const who = person('poor');
    // emails at most 6, phoneNumbers at most 30 → 36 > 35
    const r = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['emails', 'phoneNumbers'], pronet: who } });
    expect(r.status).toBe(402);
    expect(r.body.error).toMatchObject({ code: 'insufficient_credits', message: 'This request needs 36 credits; the balance is 35' });
    expect(await balance(ws)).toBe(35);
    expect(alpha.requestsFor(who)).toHaveLength(0);
    // A session key (an unbilled preview) starts no job: before, it enriched for free whatever the balance.
    const session = await app.createApiKey(ws.workspaceId, 'session');
    alpha.setData(who, 'emails', { emails: [{ email: 'poor@acme.com', status: 'valid' }] });
    const s = await app.http('POST', '/contacts/unified-data-api', { apiKey: session, body: { fields: ['emails'], pronet: who } });
    expect(s.status, JSON.stringify(s.body)).toBe(403);
    expect(s.body.error.code).toBe('session_key_not_allowed');
    expect(alpha.requestsFor(who)).toHaveLength(0);
    expect(await balance(ws)).toBe(35);
  });
});

describe('provider waterfall', () => {
  it('first provider hit: charged 4 for emails, later providers never asked', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('first');
    alpha.setData(who, 'emails', { emails: [{ email: 'first@acme.com', status: 'valid' }] });
    beta.setData(who, 'emails', { emails: [{ email: 'other@acme.com', status: 'valid' }] });
    const jobId = await enrich(ws, { fields: ['emails'], pronet: who });
    const job = await app.waitForJob(jobId, ws.apiKey);
    expect(job.jobStatus).toBe('completed');
    const p = job.jobResponsePayload;
    expect(p.emails).toEqual([{ email: 'first@acme.com', status: 'valid', provider: 'alpha' }]);
    expect(p.slices.emails).toMatchObject({ status: 'found', provider: 'alpha', credits: 4 });
    expect(outcomes(p.slices.emails)).toEqual(['alpha:found']);
    expect(p.slices.emails.attempts[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(p.creditsCharged).toBe(4);
    expect(p).toMatchObject({ contact: null, company: null, phoneNumbers: [], pronetPosts: [] });
    expect(await balance(ws)).toBe(96);
    expect(await ledger(jobId)).toEqual([{ amount: -4, key: `enrich:${jobId}:emails` }]);
    expect(beta.requestsFor(who)).toHaveLength(0);
    const req = alpha.requestsFor(who)[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${alpha.apiKey}`);
    expect(req.headers['x-request-id']).toBe(`${jobId}:emails`);
    expect(req.body).toMatchObject({ slice: 'emails', lookup: { pronet: who.trim() } });
    expect(job.progress).toMatchObject({ completed: 1, total: 1, percent: 100 });
    await app.recordHistory(`enrichment-${jobId}`, 'enrichment/first-provider-hit');
  });

  it('second provider hit after a not-found, in waterfall order: charged 5', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('second');
    beta.setData(who, 'emails', { emails: [{ email: 'second@acme.com', status: 'risky' }] });
    gamma.setData(who, 'emails', { emails: [{ email: 'never@acme.com', status: 'valid' }] });
    const jobId = await enrich(ws, { fields: ['emails'], pronet: who });
    const p = (await app.waitForJob(jobId, ws.apiKey)).jobResponsePayload;
    expect(outcomes(p.slices.emails)).toEqual(['alpha:not_found', 'beta:found']);
    expect(p.emails).toEqual([{ email: 'second@acme.com', status: 'risky', provider: 'beta' }]);
    expect(p.slices.emails).toMatchObject({ status: 'found', provider: 'beta', credits: 5 });
    expect(alpha.requestsFor(who)[0]!.at).toBeLessThanOrEqual(beta.requestsFor(who)[0]!.at);
    expect(gamma.requestsFor(who)).toHaveLength(0);
    expect(await balance(ws)).toBe(95);
    await app.recordHistory(`enrichment-${jobId}`, 'enrichment/second-provider-hit');
  });

  it('third provider after a not-found and a 4xx (skipped without retry): phoneNumbers charged 30', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('third');
    beta.script('phoneNumbers', { status: 422, body: { error: { code: 'unsupported_profile' } } });
    gamma.setData(who, 'phoneNumbers', { phoneNumbers: [{ number: '+1 555 0100', type: 'mobile' }] });
    const jobId = await enrich(ws, { fields: ['phoneNumbers'], pronet: who });
    const p = (await app.waitForJob(jobId, ws.apiKey)).jobResponsePayload;
    expect(outcomes(p.slices.phoneNumbers)).toEqual(['alpha:not_found', 'beta:rejected', 'gamma:found']);
    expect(p.slices.phoneNumbers.attempts[1].error).toMatch(/provider_rejected.*422/);
    expect(beta.requestsFor(who)).toHaveLength(1);
    expect(p.phoneNumbers).toEqual([{ number: '+1 555 0100', type: 'mobile', provider: 'gamma' }]);
    expect(p.creditsCharged).toBe(30);
    expect(await balance(ws)).toBe(70);
    const order = [alpha, beta, gamma].map((f) => f.requestsFor(who)[0]!.at);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    await app.recordHistory(`enrichment-${jobId}`, 'enrichment/third-provider-after-4xx');
  });

  it('an answer that breaks the contract skips the provider: emails found third, charged 6', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('garbled');
    beta.script('emails', { status: 200, body: { found: true, data: { emails: [{ mail: 'x@acme.com' }] } } });
    gamma.setData(who, 'emails', { emails: [{ email: 'garbled@acme.com', status: 'valid' }] });
    const jobId = await enrich(ws, { fields: ['emails'], pronet: who });
    const p = (await app.waitForJob(jobId, ws.apiKey)).jobResponsePayload;
    expect(outcomes(p.slices.emails)).toEqual(['alpha:not_found', 'beta:rejected', 'gamma:found']);
    expect(p.slices.emails.attempts[1].error).toMatch(/provider_bad_response: beta: invalid emails data/);
    expect(beta.requestsFor(who)).toHaveLength(1);
    expect(p.creditsCharged).toBe(6);
    expect(await balance(ws)).toBe(94);
  });

  it('no hit anywhere: not_found, nothing charged', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('nobody');
    const jobId = await enrich(ws, { fields: ['emails', 'phoneNumbers'], pronet: who });
    const job = await app.waitForJob(jobId, ws.apiKey);
    expect(job.jobStatus).toBe('completed');
    const p = job.jobResponsePayload;
    expect(outcomes(p.slices.emails)).toEqual(['alpha:not_found', 'beta:not_found', 'gamma:not_found', 'dataset:not_found']);
    expect(outcomes(p.slices.phoneNumbers)).toEqual(['alpha:not_found', 'beta:not_found', 'gamma:not_found']);
    expect(p.slices.emails).toMatchObject({ status: 'not_found', provider: null, credits: 0 });
    expect(p).toMatchObject({ emails: [], phoneNumbers: [], creditsCharged: 0 });
    expect(await balance(ws)).toBe(100);
    expect(await ledger(jobId)).toEqual([]);
    // The maximum price held at acceptance came back in full.
    expect((await ledger(jobId, true)).map((r) => r.amount)).toEqual([-36, 36]);
    await app.recordHistory(`enrichment-${jobId}`, 'enrichment/no-hit');
  });

  it('provider 500 then success: retried, found by the same provider, charged 4', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('flaky');
    alpha.script('emails', { status: 500 }, { status: 502 });
    alpha.setData(who, 'emails', { emails: [{ email: 'flaky@acme.com', status: 'valid' }] });
    const jobId = await enrich(ws, { fields: ['emails'], pronet: who });
    const p = (await app.waitForJob(jobId, ws.apiKey)).jobResponsePayload;
    expect(outcomes(p.slices.emails)).toEqual(['alpha:found']);
    expect(alpha.requestsFor(who).map((r) => r.answeredWith)).toEqual([500, 502, 200]);
    expect(beta.requestsFor(who)).toHaveLength(0);
    expect(p.creditsCharged).toBe(4);
    expect(await balance(ws)).toBe(96);
    await app.recordHistory(`enrichment-${jobId}`, 'enrichment/500-then-success');
  });

  it('429 with Retry-After: waits as told, then succeeds; a provider that keeps failing is skipped', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('limited');
    alpha.script('emails', { status: 429, retryAfter: '1' });
    alpha.setData(who, 'emails', { emails: [{ email: 'limited@acme.com', status: 'valid' }] });
    // phoneNumbers: alpha 503 on every attempt (3) → skipped; beta finds them (2nd provider: 20).
    alpha.script('phoneNumbers', { status: 503 }, { status: 503 }, { status: 503 });
    beta.setData(who, 'phoneNumbers', { phoneNumbers: [{ number: '+44 20 7946 0000', type: 'work' }] });
    const jobId = await enrich(ws, { fields: ['emails', 'phoneNumbers'], pronet: who });
    const p = (await app.waitForJob(jobId, ws.apiKey)).jobResponsePayload;
    const emailCalls = alpha.requestsFor(who).filter((r) => r.body?.slice === 'emails');
    expect(emailCalls.map((r) => r.answeredWith)).toEqual([429, 200]);
    expect(emailCalls[1]!.at - emailCalls[0]!.at).toBeGreaterThanOrEqual(950);
    expect(outcomes(p.slices.emails)).toEqual(['alpha:found']);
    expect(outcomes(p.slices.phoneNumbers)).toEqual(['alpha:unavailable', 'beta:found']);
    expect(p.slices.phoneNumbers.attempts[0].error).toMatch(/provider_unavailable.*503/);
    expect(alpha.requestsFor(who).filter((r) => r.body?.slice === 'phoneNumbers')).toHaveLength(3);
    expect(p.creditsCharged).toBe(4 + 20);
    expect(await balance(ws)).toBe(76);
    expect(await ledger(jobId)).toEqual([
      { amount: -4, key: `enrich:${jobId}:emails` },
      { amount: -20, key: `enrich:${jobId}:phoneNumbers` },
    ]);
    await app.recordHistory(`enrichment-${jobId}`, 'enrichment/429-retry-after');
  });

  it('a Retry-After beyond the bound skips the provider at once', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('patient');
    alpha.script('emails', { status: 429, retryAfter: '3600' });
    beta.setData(who, 'emails', { emails: [{ email: 'patient@acme.com', status: 'valid' }] });
    const jobId = await enrich(ws, { fields: ['emails'], pronet: who });
    const p = (await app.waitForJob(jobId, ws.apiKey)).jobResponsePayload;
    expect(outcomes(p.slices.emails)).toEqual(['alpha:unavailable', 'beta:found']);
    expect(alpha.requestsFor(who)).toHaveLength(1);
    expect(p.creditsCharged).toBe(5);
  });

  it('timeouts: retried, then skipped; progress is visible while the job runs', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('slow');
    await insertPerson(who, { fullName: 'Slow Person' });
    alpha.script('emails', { delayMs: 1500 }, { delayMs: 1500 }, { delayMs: 1500 });
    beta.setData(who, 'emails', { emails: [{ email: 'slow@acme.com', status: 'valid' }] });
    const jobId = await enrich(ws, { fields: ['basic_contact_data', 'emails'], pronet: who });
    // The dataset slice finishes long before the slow one: 1 of 2 while running.
    let seen: any;
    for (let i = 0; i < 100; i++) {
      const r = await app.http('GET', `/jobs/${jobId}`, { apiKey: ws.apiKey });
      seen = r.body.data;
      if (seen.jobStatus === 'running' && seen.progress?.completed === 1) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(seen).toMatchObject({ jobStatus: 'running', progress: { completed: 1, total: 2, percent: 50 } });
    const p = (await app.waitForJob(jobId, ws.apiKey)).jobResponsePayload;
    expect(outcomes(p.slices.emails)).toEqual(['alpha:unavailable', 'beta:found']);
    expect(p.slices.emails.attempts[0].error).toMatch(/provider_timeout/);
    expect(p.slices.emails.attempts[0].durationMs).toBeGreaterThanOrEqual(3 * 800);
    expect(alpha.requestsFor(who)).toHaveLength(3);
    expect(p.contact).toMatchObject({ fullName: 'Slow Person' });
    expect(p.creditsCharged).toBe(1 + 5);
    expect(await balance(ws)).toBe(94);
    await app.recordHistory(`enrichment-${jobId}`, 'enrichment/timeouts');
  });
});

async function insertPerson(url: string, o: { fullName: string; emails?: unknown[]; phones?: unknown[]; company?: { url: string; name: string; website: string } }) {
  const key = normalizeProfileUrl(url)!;
  let companyId: string | null = null;
  if (o.company) {
    companyId = uuidv7();
    await app.pool.query(
      `insert into ds_companies (id, company_pronet_url, company_name, company_website, company_domain, industry, size_range, employee_count, hq_city, hq_country, technologies)
       values ($1, $2, $3, $4, $5, 'Software', '51-200', 120, 'Berlin', 'Germany', '{postgres,temporal}')`,
      [companyId, o.company.url, o.company.name, o.company.website, o.company.website.replace(/^https?:\/\/(www\.)?/, '').replace(/\/.*$/, '')],
    );
  }
  const [first, ...rest] = o.fullName.split(' ');
  await app.pool.query(
    `insert into ds_people (id, member_pronet_url, member_full_name, member_first_name, member_last_name, member_job_title, member_emails, member_phones, company_pronet_url, company_id, member_skills)
     values ($1, $2, $3, $4, $5, 'Engineer', $6, $7, $8, $9, '{typescript}')`,
    [uuidv7(), key, o.fullName, first, rest.join(' '), JSON.stringify(o.emails ?? []), JSON.stringify(o.phones ?? []), o.company?.url ?? null, companyId],
  );
  return key;
}

describe('dataset provider', () => {
  it('answers contact, company and posts by pronet URL, and emails by name + company website', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('dana');
    const tag = randomBytes(3).toString('hex');
    const key = await insertPerson(who, {
      fullName: `Dana Data${tag}`,
      emails: [{ email: `dana${tag}@dataco.example`, status: 'valid' }],
      phones: [{ number: '+49 30 1234567', type: 'work' }],
      company: { url: `pronet.example/company/dataco-${tag}`, name: 'DataCo', website: `https://www.dataco-${tag}.example` },
    });
    for (let i = 0; i < 3; i++) {
      await app.pool.query(
        `insert into ds_posts (id, member_pronet_url, post_url, text, posted_at, likes, comments) values ($1, $2, $3, $4, $5, $6, $7)`,
        [uuidv7(), key, `https://pronet.example/posts/${tag}-${i}`, `post ${i}`, new Date(Date.UTC(2026, 10, 1 + i)), 10 * i, i],
      );
    }
    const jobId = await enrich(ws, { fields: ['basic_contact_data', 'basic_company_data', 'pronetPosts'], pronet: who });
    const p = (await app.waitForJob(jobId, ws.apiKey)).jobResponsePayload;
    expect(p.contact).toMatchObject({ fullName: `Dana Data${tag}`, firstName: 'Dana', title: 'Engineer', pronet: `https://${key}`, skills: ['typescript'] });
    expect(p.company).toMatchObject({ companyName: 'DataCo', companyWebsite: `https://www.dataco-${tag}.example`, companyIndustry: 'Software', companyHeadcount: '51-200', companyCountry: 'Germany' });
    expect(p.pronetPosts.map((x: any) => x.text)).toEqual(['post 2', 'post 1', 'post 0']);
    expect(p.pronetPosts[0]).toMatchObject({ postUrl: `https://pronet.example/posts/${tag}-2`, likes: 20, comments: 2, provider: 'dataset', postedAt: '2026-11-03T00:00:00.000Z' });
    expect(p.slices).toMatchObject({ basic_contact_data: { status: 'found', credits: 1 }, basic_company_data: { status: 'found', credits: 1 }, pronetPosts: { status: 'found', credits: 10 } });
    expect(p.creditsCharged).toBe(12);
    expect(await balance(ws)).toBe(88);
    await app.recordHistory(`enrichment-${jobId}`, 'enrichment/dataset');

    // Emails without pronet: only name-capable providers are planned (alpha, then dataset).
    const byName = await enrich(ws, { fields: ['emails'], firstName: 'Dana', lastName: `Data${tag}`, companyWebsite: `dataco-${tag}.example` });
    const q = (await app.waitForJob(byName, ws.apiKey)).jobResponsePayload;
    expect(outcomes(q.slices.emails)).toEqual(['alpha:not_found', 'dataset:found']);
    expect(q.emails).toEqual([{ email: `dana${tag}@dataco.example`, status: 'valid', provider: 'dataset' }]);
    expect(q.creditsCharged).toBe(5);
    expect(alpha.requests.find((r) => r.headers['x-request-id'] === `${byName}:emails`)!.body!.lookup).toEqual({
      fullName: `Dana Data${tag}`,
      firstName: 'Dana',
      lastName: `Data${tag}`,
      companyDomain: `dataco-${tag}.example`,
    });
    expect(await balance(ws)).toBe(83);
  });
});

describe('credits and webhooks', () => {
  it('answers 503 credits_busy with Retry-After when the account stays locked past the lock timeout, and holds nothing', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    // Another session holds the account row (as a long debit would), longer than CREDIT_LOCK_TIMEOUT_MS.
    const blocker = new pg.Client({ connectionString: app.config.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from credit_accounts where workspace_id = $1 for update', [ws.workspaceId]);
      const started = Date.now();
      const r = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['emails'], pronet: person('busy') } });
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.body.error.code).toBe('credits_busy');
      expect(r.headers.get('retry-after')).toBe('1');
      expect(Date.now() - started).toBeGreaterThanOrEqual(CREDIT_LOCK_TIMEOUT_MS - 100);
    } finally {
      await blocker.query('rollback').catch(() => {});
      await blocker.end();
    }
    expect(await balance(ws)).toBe(10);
    expect((await app.http('GET', '/credits/transactions', { apiKey: ws.apiKey })).body.data.map((t: { kind: string }) => t.kind)).toEqual(['grant']);
  });

  it('holds the maximum price at acceptance: a balance spent meanwhile cannot touch it; settling releases the hold and debits the real price', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    const who = person('held');
    alpha.setData(who, 'emails', { emails: [{ email: 'held@acme.com', status: 'valid' }] });
    await app.killWorker();
    let jobId: string;
    try {
      jobId = await enrich(ws, { fields: ['emails'], pronet: who, webhookConfiguration: { url: hooks.url, headers: { 'x-caller': 'held' } } });
      // emails costs at most 6: reserved, so only 4 of the 10 can be spent elsewhere.
      expect(await balance(ws)).toBe(4);
      const tx = (await app.http('GET', '/credits/transactions', { apiKey: ws.apiKey })).body.data;
      expect(tx[0]).toMatchObject({ kind: 'hold', amount: -6, balanceAfter: 4, jobId });
      await expect(inWorkspaceScope(ws.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: ws.workspaceId, amount: 5, idempotencyKey: 'spent-elsewhere', reason: 'test' }))).rejects.toBeInstanceOf(InsufficientCreditsError);
      await inWorkspaceScope(ws.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: ws.workspaceId, amount: 4, idempotencyKey: 'spent-elsewhere', reason: 'test' }));
      expect(await balance(ws)).toBe(0);
    } finally {
      await app.startWorker();
    }
    const job = await app.waitForJob(jobId!, ws.apiKey);
    expect(job.jobStatus).toBe('completed');
    expect(job.jobResponsePayload.emails).toEqual([{ email: 'held@acme.com', status: 'valid', provider: 'alpha' }]);
    expect(job.jobResponsePayload.creditsCharged).toBe(4);
    // 6 held, 6 released, 4 charged: 2 back on the balance.
    expect(await balance(ws)).toBe(2);
    expect(await ledger(jobId!, true)).toEqual([
      { amount: -4, key: `enrich:${jobId!}:emails` },
      { amount: -6, key: `hold:${jobId!}` },
      { amount: 6, key: `release:${jobId!}` },
    ]);
    const kinds = (await app.http('GET', '/credits/transactions', { apiKey: ws.apiKey })).body.data.filter((t: any) => t.jobId === jobId!).map((t: any) => t.kind);
    expect(kinds.sort()).toEqual(['debit', 'hold', 'release']);
    const hook = await hooks.waitFor((b) => b.jobId === jobId!);
    expect(hook.body).toMatchObject({ type: 'job.completed', jobStatus: 'completed', jobType: 'enrichment' });
    expect(hook.headers['x-caller']).toBe('held');
    await app.recordHistory(`enrichment-${jobId!}`, 'enrichment/credit-hold');
  });

  it('lets only as many concurrent requests through as the balance covers', async () => {
    const ws = await app.createWorkspace({ credits: 6 });
    const who = person('racer');
    alpha.setData(who, 'emails', { emails: [{ email: 'racer@acme.com', status: 'valid' }] });
    const both = await Promise.all(
      [1, 2].map(() => app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['emails'], pronet: who } })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([202, 402]);
    const accepted = both.find((r) => r.status === 202)!;
    const job = await app.waitForJob(accepted.body.jobId, ws.apiKey);
    expect(job.jobResponsePayload.creditsCharged).toBe(4);
    expect(alpha.requestsFor(who)).toHaveLength(1);
    expect(await balance(ws)).toBe(2);
  });

  it('releases the whole hold when the job ends without settling (cancelled)', async () => {
    const ws = await app.createWorkspace({ credits: 40 });
    const who = person('cancelled');
    alpha.script('phoneNumbers', { delayMs: 3000 });
    const jobId = await enrich(ws, { fields: ['phoneNumbers'], pronet: who });
    expect(await balance(ws)).toBe(10);
    const deadline = Date.now() + 10_000;
    while (alpha.requestsFor(who).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const c = await app.http('POST', `/jobs/${jobId}/cancel`, { apiKey: ws.apiKey });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    const job = await app.waitForJob(jobId, ws.apiKey);
    expect(job.jobStatus).toBe('cancelled');
    const until = Date.now() + 10_000;
    while ((await balance(ws)) !== 40 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(await balance(ws)).toBe(40);
    expect(await ledger(jobId, true)).toEqual([
      { amount: -30, key: `hold:${jobId}` },
      { amount: 30, key: `release:${jobId}` },
    ]);
  });

  it('delivers a Standard Webhooks signed job.completed with the caller headers and the same payload as GET /jobs', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('hooked');
    alpha.setData(who, 'emails', { emails: [{ email: 'hooked@acme.com', status: 'valid' }] });
    const jobId = await enrich(ws, { fields: ['emails', 'phoneNumbers'], pronet: who, webhookConfiguration: { url: hooks.url, headers: { 'x-caller': 'abc', authorization: 'Token t1' } } });
    const job = await app.waitForJob(jobId, ws.apiKey);
    const hook = await hooks.waitFor((b) => b.jobId === jobId);
    const verified = new Webhook(ws.webhookSecret).verify(hook.raw, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    }) as any;
    expect(verified.jobId).toBe(jobId);
    expect(hook.headers['x-caller']).toBe('abc');
    expect(hook.headers.authorization).toBe('Token t1');
    expect(hook.body).toMatchObject({ type: 'job.completed', jobType: 'enrichment', jobStatus: 'completed' });
    expect(hook.body.jobResponsePayload).toEqual(job.jobResponsePayload);
    expect(job.jobResponsePayload.creditsCharged).toBe(4);
    // The job shows the delivery.
    const again = (await app.http('GET', `/jobs/${jobId}`, { apiKey: ws.apiKey })).body.data;
    expect(again.webhookDeliveries[0]).toMatchObject({ attempt: 1, statusCode: 204, error: null });
  });

  it('Idempotency-Key replays the 202 without a second job or charge', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const who = person('idem');
    alpha.setData(who, 'emails', { emails: [{ email: 'idem@acme.com', status: 'valid' }] });
    const body = { fields: ['emails'], pronet: who };
    const first = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body, headers: { 'idempotency-key': 'enrich-1' } });
    expect(first.status).toBe(202);
    await app.waitForJob(first.body.jobId, ws.apiKey);
    const second = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body, headers: { 'idempotency-key': 'enrich-1' } });
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.jobId).toBe(first.body.jobId);
    const other = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { ...body, fields: ['phoneNumbers'] }, headers: { 'idempotency-key': 'enrich-1' } });
    expect(other.status).toBe(422);
    expect(alpha.requestsFor(who)).toHaveLength(1);
    expect(await balance(ws)).toBe(96);
  });

  it('settling twice (a retried activity) charges each slice once; a balance spent meanwhile withholds the data', async () => {
    const ws = await app.createWorkspace({ credits: 25 });
    const acts = createEnrichmentActivities(app.deps);
    // As the worker runs it: through its interceptors (the input's workspace scopes the database).
    const env = new MockActivityEnvironment(undefined, { interceptors: activityInterceptors({ orm: app.deps.orm }) });
    const jobId = uuidv7();
    const input = {
      workspaceId: ws.workspaceId,
      jobId,
      billable: true,
      slices: [
        {
          slice: 'phoneNumbers' as const,
          attempts: [
            { provider: 'alpha', outcome: 'not_found' as const, durationMs: 3 },
            { provider: 'beta', outcome: 'found' as const, durationMs: 4 },
          ],
          data: { phoneNumbers: [{ number: '+1 555 0101', type: 'mobile' }] },
        },
        { slice: 'emails' as const, attempts: [{ provider: 'alpha', outcome: 'found' as const, durationMs: 2 }], data: { emails: [{ email: 'a@b.example', status: 'valid' }] } },
      ],
    };
    const first = (await env.run(acts.enrichmentSettle, input)) as EnrichmentResult;
    expect(first.slices.phoneNumbers).toMatchObject({ status: 'found', provider: 'beta', credits: 20 });
    // 25 - 20 leaves 5: emails (4) is still covered.
    expect(first.creditsCharged).toBe(24);
    const again = await env.run(acts.enrichmentSettle, input);
    expect(again).toEqual(first);
    expect(await balance(ws)).toBe(1);
    expect(await ledger(jobId)).toEqual([
      { amount: -4, key: `enrich:${jobId}:emails` },
      { amount: -20, key: `enrich:${jobId}:phoneNumbers` },
    ]);

    const other = uuidv7();
    const short = (await env.run(acts.enrichmentSettle, { ...input, jobId: other })) as EnrichmentResult;
    expect(short.slices.phoneNumbers).toMatchObject({ status: 'failed', provider: null, credits: 0, error: { code: 'insufficient_credits' } });
    expect(short.phoneNumbers).toEqual([]);
    expect(short.creditsCharged).toBe(0);
    expect(await ledger(other)).toEqual([]);
  });
});
