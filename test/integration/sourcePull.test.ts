/**
 * Source pulls end to end: `POST /sources/pull-contacts-from-source/{id}` → job → contacts.
 * The `dataset` provider answers from ds_* rows seeded here; the `http` provider talks to the
 * fake listening provider, including its failures (401, 429 + Retry-After, 500, timeout).
 * Scheduled pulls run through the source's Temporal Schedule (triggered now).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import type { ListeningPerson } from '../../activities/providers/listening.js';
import { createDatasetListeningProvider } from '../../activities/providers/listeningDataset.js';
import { startFakeListeningProvider, type FakeListeningProvider } from '../fakes/listeningProvider.js';
import { startTestApp, type TestApp } from '../harness.js';
import type { sourceRefreshWorkflow } from '../../workflows/sourcePull.js';

const HOUR = 3600_000;
const ago = (h: number) => new Date(Date.now() - h * HOUR).toISOString();

async function pull(app: TestApp, key: string, sourceId: string, body: Record<string, unknown> = {}) {
  const res = await app.http('POST', `/sources/pull-contacts-from-source/${sourceId}`, { apiKey: key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body).toMatchObject({ message: expect.any(String), jobId: expect.any(String), jobStatusEndpoint: `${app.url}/jobs/${res.body.jobId}` });
  return { jobId: res.body.jobId as string, job: await app.waitForJob(res.body.jobId, key, 60_000) };
}

async function createSource(app: TestApp, key: string, body: Record<string, unknown>): Promise<string> {
  const r = await app.http('POST', '/sources', { apiKey: key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.id;
}

async function contactsOf(app: TestApp, workspaceId: string, sourceId: string) {
  const r = await app.pool.query<{ id: string; pronet_key: string; full_name: string; title: string; status: string; company_name: string | null }>(
    `select c.id, c.pronet_key, c.full_name, c.title, c.status, co.company_name
       from contacts c
       join contact_sources cs on cs.contact_id = c.id and cs.source_id = $2
       left join companies co on co.id = c.primary_company_id
      where c.workspace_id = $1 order by c.pronet_key`,
    [workspaceId, sourceId],
  );
  return r.rows;
}

describe('dataset provider', () => {
  let app: TestApp;
  let key: string;
  let ws: string;
  let otherKey: string;

  const P = (slug: string) => `pronet.com/in/${slug}`;
  const OWNER = P('owner-a');

  beforeAll(async () => {
    app = await startTestApp();
    const w = await app.createWorkspace();
    key = w.apiKey;
    ws = w.workspaceId;
    otherKey = (await app.createWorkspace()).apiKey;
    const companyId = uuidv7();
    await app.pool.query(
      `insert into ds_companies (id, company_pronet_url, company_name, company_website, company_domain, industry, size_range)
       values ($1, 'pronet.com/company/acme', 'Acme', 'https://acme.com', 'acme.com', 'Software Development', '51-200')`,
      [companyId],
    );
    const people: [string, string, string, string | null, string, string][] = [
      // slug, first, last, company, title, city
      ['fan-1', 'Ann', 'Fan', companyId, 'Software Engineer', 'Berlin'],
      ['fan-2', 'Bob', 'Fan', null, 'Sales Manager', 'Paris'],
      ['fan-3', 'Cid', 'Old', null, 'CTO', 'Berlin'],
      ['author-k', 'Kay', 'Writer', companyId, 'Chief Technology Officer', 'Berlin'],
      ['author-j', 'Jo', 'Hirer', null, 'Engineering Manager', 'Munich'],
      ['owner-a', 'Owen', 'Owner', null, 'Founder', 'Berlin'],
    ];
    for (const [slug, first, last, company, title, city] of people) {
      await app.pool.query(
        `insert into ds_people (id, member_pronet_url, member_full_name, member_first_name, member_last_name, member_job_title, member_location_city,
                                member_location_country, company_pronet_url, company_id)
         values ($1, $2, $3, $4, $5, $6, $7, 'Germany', $8, $9)`,
        [uuidv7(), P(slug), `${first} ${last}`, first, last, title, city, company ? 'pronet.com/company/acme' : null, company],
      );
    }
    const posts: [string, string, string | null, string | null, number, string][] = [
      // member, post_url, interaction, author, hours ago, text
      [OWNER, 'pronet.com/posts/owner-a-1', null, OWNER, 30, 'Our launch'],
      [P('fan-1'), 'pronet.com/posts/owner-a-1/reactions/fan-1', 'like', OWNER, 2, 'Liked a post'],
      [P('fan-2'), 'pronet.com/posts/owner-a-1/comments/1', 'comment', OWNER, 5, 'Commented on a post'],
      [P('fan-3'), 'pronet.com/posts/owner-a-1/reactions/fan-3', 'like', OWNER, 72, 'Liked a post'],
      [OWNER, 'pronet.com/posts/owner-a-1/comments/2', 'comment', OWNER, 1, 'Replying to my own post'],
      [P('author-k'), 'pronet.com/posts/author-k-1', null, P('author-k'), 3, 'We closed our Series A funding round!'],
      [P('fan-2'), 'pronet.com/posts/fan-2-1', null, P('fan-2'), 4, 'Thoughts on the series a market'],
      [P('author-j'), 'pronet.com/posts/author-j-1', null, P('author-j'), 6, 'We are hiring a Backend Engineer in Munich'],
    ];
    for (const [member, url, interaction, author, h, text] of posts) {
      await app.pool.query(
        `insert into ds_posts (id, member_pronet_url, post_url, text, posted_at, likes, comments, interaction_type, author_pronet_url)
         values ($1, $2, $3, $4, $5, 0, 0, $6, $7)`,
        [uuidv7(), member, url, text, ago(h), interaction, author],
      );
    }
  });
  afterAll(() => app?.close());

  it('pulls the audience of a profile for the last day, then a week, attributed to a segment', async () => {
    const sourceId = await createSource(app, key, { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/owner-a/' });
    const { jobId, job } = await pull(app, key, sourceId);
    expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
    expect(job.type).toBe('source-pull');
    expect(job.jobResponsePayload).toMatchObject({ sourceId, provider: 'dataset', numberOfPastDaysToSync: 1, fetched: 2, created: 2, updated: 0, skipped: 0, pages: 1 });
    const rows = await contactsOf(app, ws, sourceId);
    expect(rows.map((r) => [r.pronet_key, r.full_name, r.title, r.company_name])).toEqual([
      ['pronet.com/in/fan-1', 'Ann Fan', 'Software Engineer', 'Acme'],
      ['pronet.com/in/fan-2', 'Bob Fan', 'Sales Manager', null],
    ]);
    expect((await app.http('GET', `/sources/${sourceId}`, { apiKey: key })).body.data.attributes.refreshStatus).toBe('succeeded');
    await app.recordHistory(`source-pull-${jobId}`, 'sourcePull/dataset-inbound');

    const seg = (await app.http('POST', '/segments', { apiKey: key, body: { name: 'Fans' } })).body.data.id;
    const week = await pull(app, key, sourceId, { numberOfPastDaysToSync: 7, segmentId: seg });
    expect(week.job.jobResponsePayload).toMatchObject({ numberOfPastDaysToSync: 7, fetched: 3, created: 1, updated: 2 });
    const since = Date.parse(week.job.jobResponsePayload.window.since);
    const until = Date.parse(week.job.jobResponsePayload.window.until);
    expect(until - since).toBe(7 * 24 * HOUR);
    expect((await contactsOf(app, ws, sourceId)).map((r) => r.pronet_key)).toEqual(['pronet.com/in/fan-1', 'pronet.com/in/fan-2', 'pronet.com/in/fan-3']);
    expect((await app.http('GET', `/segments/${seg}`, { apiKey: key })).body.data.attributes.segmentSources).toEqual([sourceId]);
    // Visible through the contacts API: the segment's members, and each contact names its source.
    const members = await app.http('POST', `/contacts/by-segment/${seg}`, {
      apiKey: key,
      body: { fields: ['contact.fullName', 'contact.pronet', 'company.companyName'], limit: 10 },
    });
    expect(members.status, JSON.stringify(members.body)).toBe(200);
    expect(members.body.meta.totalRecords).toBe(3);
    expect(members.body.data.map((c: any) => c.fullName).sort()).toEqual(['Ann Fan', 'Bob Fan', 'Cid Old']);
    expect(members.body.data.find((c: any) => c.fullName === 'Ann Fan')).toMatchObject({ pronet: 'https://pronet.com/in/fan-1', company: { companyName: 'Acme' } });
    const one = await app.http('GET', `/contacts/${members.body.data[0].id}`, { apiKey: key });
    expect(one.body.data.sources).toContain(sourceId);
    expect((await app.http('POST', `/contacts/by-segment/${seg}`, { apiKey: otherKey, body: { fields: ['contact.fullName'] } })).status).toBe(404);
  });

  it('one person from two sources is one contact with both sources; deleted contacts are not revived', async () => {
    const keywordSrc = await createSource(app, key, { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'series a' } });
    const { job } = await pull(app, key, keywordSrc);
    expect(job.jobResponsePayload).toMatchObject({ fetched: 2 });
    expect((await contactsOf(app, ws, keywordSrc)).map((r) => r.pronet_key)).toEqual(['pronet.com/in/author-k', 'pronet.com/in/fan-2']);
    const fan2 = await app.pool.query(`select c.id, array_agg(cs.source_id) as sources from contacts c join contact_sources cs on cs.contact_id = c.id
                                        where c.workspace_id = $1 and c.pronet_key = 'pronet.com/in/fan-2' group by c.id`, [ws]);
    expect(fan2.rows).toHaveLength(1);
    expect(fan2.rows[0].sources).toHaveLength(2);

    await app.pool.query(`update contacts set status = 'deleted', deleted_at = now() where workspace_id = $1 and pronet_key = 'pronet.com/in/author-k'`, [ws]);
    const again = await pull(app, key, keywordSrc);
    expect(again.job.jobResponsePayload).toMatchObject({ fetched: 2, created: 0, updated: 1, skipped: 1 });
    const k = await app.pool.query(`select status from contacts where workspace_id = $1 and pronet_key = 'pronet.com/in/author-k'`, [ws]);
    expect(k.rows.map((r) => r.status)).toEqual(['deleted']);
  });

  it('answers keyword (with author title), post, outbound and job-posting sources', async () => {
    const titled = await createSource(app, key, { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'HIRING', authorTitle: 'engineering' } });
    expect((await pull(app, key, titled)).job.jobResponsePayload.fetched).toBe(1);
    expect((await contactsOf(app, ws, titled)).map((r) => r.pronet_key)).toEqual(['pronet.com/in/author-j']);
    const wrongTitle = await createSource(app, key, { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'hiring', authorTitle: 'sales' } });
    expect((await pull(app, key, wrongTitle)).job.jobResponsePayload.fetched).toBe(0);

    const post = await createSource(app, key, { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/owner-a-1' });
    // The author and everyone whose activity is recorded under the post.
    expect((await pull(app, key, post, { numberOfPastDaysToSync: 7 })).job.jobResponsePayload.fetched).toBe(4);
    expect((await contactsOf(app, ws, post)).map((r) => r.pronet_key)).toEqual(['pronet.com/in/fan-1', 'pronet.com/in/fan-2', 'pronet.com/in/fan-3', 'pronet.com/in/owner-a']);
    expect((await pull(app, key, post, { numberOfPastDaysToSync: 1 })).job.jobResponsePayload.fetched).toBe(3);

    const outbound = await createSource(app, key, { sourceType: 'pronetOutbound', sourceIdentifier: 'https://www.pronet.com/in/fan-1' });
    expect((await pull(app, key, outbound)).job.jobResponsePayload.fetched).toBe(1);
    expect((await contactsOf(app, ws, outbound)).map((r) => r.pronet_key)).toEqual(['pronet.com/in/owner-a']);

    const jobs = await createSource(app, key, {
      sourceType: 'pronetJobPosting',
      sourceMeta: { jobTitle: 'backend engineer', jobLocation: 'Munich', postedTime: 'past-24h', jobType: 'full-time' },
    });
    expect((await pull(app, key, jobs)).job.jobResponsePayload.fetched).toBe(1);
    expect((await contactsOf(app, ws, jobs)).map((r) => r.pronet_key)).toEqual(['pronet.com/in/author-j']);
    const elsewhere = await createSource(app, key, {
      sourceType: 'pronetJobPosting',
      sourceMeta: { jobTitle: 'backend engineer', jobLocation: 'Paris', postedTime: 'past-24h', jobType: 'full-time' },
    });
    expect((await pull(app, key, elsewhere)).job.jobResponsePayload.fetched).toBe(0);
  });

  it('the dataset provider pages by keyset without gaps or repeats', async () => {
    const provider = createDatasetListeningProvider(app.pool);
    const query = {
      sourceType: 'pronetPost' as const,
      sourceIdentifier: 'https://www.pronet.com/posts/owner-a-1',
      sourceMeta: {},
      since: ago(24 * 7),
      until: ago(0),
    };
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await provider.fetchAudience(query, { cursor, limit: 1 });
      seen.push(...page.people.map((p) => p.pronet));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(['fan-1', 'fan-2', 'fan-3', 'owner-a'].map((s) => `https://pronet.com/in/${s}`));
    const all = await provider.fetchAudience(query, { cursor: null, limit: 10 });
    expect(all.nextCursor).toBeNull();
    expect(all.people.find((p) => p.pronet.endsWith('fan-1'))).toMatchObject({
      firstName: 'Ann',
      jobTitle: 'Software Engineer',
      location: 'Berlin, Germany',
      company: { companyName: 'Acme', companyWebsite: 'https://acme.com', companyHeadcount: '51-200', companyPronet: 'https://pronet.com/company/acme' },
      interaction: { type: 'like', postUrl: 'https://pronet.com/posts/owner-a-1/reactions/fan-1' },
    });
  });

  it('the job is visible only to its workspace', async () => {
    const sourceId = await createSource(app, key, { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/author-j' });
    const { jobId } = await pull(app, key, sourceId);
    expect((await app.http('GET', `/jobs/${jobId}`, { apiKey: otherKey })).status).toBe(404);
  });

  it('a scheduled refresh registers a source-pull job and pulls with the runFrequency look-back', async () => {
    const sourceId = await createSource(app, key, { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/owner-a?utm=x' });
    const r = await app.http('PATCH', `/sources/${sourceId}`, { apiKey: key, body: { runFrequency: { numberOfPastDaysToSync: '7', periodicInterval: '1d' } } });
    expect(r.status).toBe(200);
    // The same normalised URL: this is the source of the first test.
    const handle = app.deps.temporal.schedule.getHandle(`source-refresh-${sourceId}`);
    // This trigger's run, from the schedule's own record: another source's pull in the workspace
    // may register a job meanwhile (fresh-clone CI run of 1ebe965 took that one).
    const actionsBefore = (await handle.describe()).info.recentActions.length;
    await handle.trigger();
    let refreshId: string | undefined;
    for (let i = 0; i < 100 && !refreshId; i++) {
      const actions = (await handle.describe()).info.recentActions;
      if (actions.length > actionsBefore) refreshId = actions.at(-1)!.action.workflow.workflowId;
      else await new Promise((res) => setTimeout(res, 200));
    }
    expect(refreshId).toBeDefined();
    const { jobId } = await app.deps.temporal.workflow.getHandle<typeof sourceRefreshWorkflow>(refreshId!).result();
    expect(jobId).toBeTruthy();
    const job = await app.waitForJob(jobId!, key, 60_000);
    expect(job.jobStatus).toBe('completed');
    expect(job.jobResponsePayload).toMatchObject({ sourceId, numberOfPastDaysToSync: 7, fetched: 3 });
    const child = await app.deps.temporal.workflow.getHandle(`source-pull-${jobId}`).describe();
    expect(child.parentExecution?.workflowId).toMatch(new RegExp(`^source-refresh-${sourceId}`));
    const parentId = child.parentExecution!.workflowId!;
    expect(await app.deps.temporal.workflow.getHandle(parentId).result()).toEqual({ jobId, jobStatus: 'completed' });
    await app.recordHistory(parentId, 'sourcePull/scheduled-refresh');
    await app.http('PATCH', `/sources/${sourceId}`, { apiKey: key, body: { runFrequency: null } });
  });
});

describe('http provider against the fake listening provider', () => {
  let app: TestApp;
  let fake: FakeListeningProvider;
  let key: string;
  let ws: string;

  const person = (i: number, hoursAgo: number): ListeningPerson => ({
    pronet: `https://www.pronet.com/in/http-${String(i).padStart(4, '0')}`,
    firstName: `Http${i}`,
    lastName: 'Person',
    jobTitle: 'Engineer',
    company: { companyName: 'Fake Corp', companyWebsite: 'https://fake.example' },
    interaction: { type: 'comment', postUrl: 'https://www.pronet.com/posts/x', occurredAt: ago(hoursAgo) },
  });

  beforeAll(async () => {
    fake = await startFakeListeningProvider();
    app = await startTestApp({
      env: { LISTENING_PROVIDER: 'http', LISTENING_BASE_URL: fake.baseUrl, LISTENING_API_KEY: fake.apiKey, LISTENING_TIMEOUT_MS: '500' },
    });
    const w = await app.createWorkspace();
    key = w.apiKey;
    ws = w.workspaceId;
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it('pages through the audience (2 pages) and ingests it', async () => {
    const id = 'https://www.pronet.com/in/http-owner';
    fake.setAudience(id, [...Array.from({ length: 530 }, (_, i) => person(i, 1 + (i % 20))), person(9999, 48)]);
    const sourceId = await createSource(app, key, { sourceType: 'pronetInbound', sourceIdentifier: id });
    const { jobId, job } = await pull(app, key, sourceId);
    expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
    expect(job.jobResponsePayload).toMatchObject({ provider: 'http', pages: 2, fetched: 530, created: 530 });
    expect((await contactsOf(app, ws, sourceId))).toHaveLength(530);
    const reqs = fake.requests.filter((r) => r.body?.sourceIdentifier === id);
    expect(reqs.map((r) => [r.body!.limit, r.body!.cursor === null])).toEqual([[500, true], [500, false]]);
    expect(reqs[0]!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    await app.recordHistory(`source-pull-${jobId}`, 'sourcePull/http-two-pages');
  });

  it('401 fails the job at once with the provider reason; refreshStatus failed', async () => {
    const id = 'https://www.pronet.com/in/http-revoked';
    fake.setAudience(id, [person(1, 1)]);
    const sourceId = await createSource(app, key, { sourceType: 'pronetInbound', sourceIdentifier: id });
    const n0 = fake.requests.length;
    fake.script({ status: 401, body: { error: { code: 'invalid_api_key', message: 'The API key was revoked' } } });
    const { jobId, job } = await pull(app, key, sourceId);
    expect(job.jobStatus).toBe('failed');
    expect(job.error.code).toBe('provider_credentials_invalid');
    expect(job.error.message).toContain('invalid_api_key: The API key was revoked');
    expect(fake.requests.length - n0).toBe(1);
    expect((await app.http('GET', `/sources/${sourceId}`, { apiKey: key })).body.data.attributes.refreshStatus).toBe('failed');
    await app.recordHistory(`source-pull-${jobId}`, 'sourcePull/http-401');
  });

  it('429 with Retry-After is retried after the delay the provider asked for', async () => {
    const id = 'https://www.pronet.com/in/http-limited';
    fake.setAudience(id, [person(1, 1), person(2, 2)]);
    const sourceId = await createSource(app, key, { sourceType: 'pronetInbound', sourceIdentifier: id });
    const n0 = fake.requests.length;
    fake.script({ status: 429, retryAfter: '3' });
    const { job } = await pull(app, key, sourceId);
    expect(job.jobStatus).toBe('completed');
    expect(job.jobResponsePayload.fetched).toBe(2);
    const [first, second] = fake.requests.slice(n0);
    expect(first!.answeredWith).toBe(429);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(2900);
  });

  it('500 then success, and a timeout then success, are retried', async () => {
    const id = 'https://www.pronet.com/in/http-flaky';
    fake.setAudience(id, [person(1, 1)]);
    const sourceId = await createSource(app, key, { sourceType: 'pronetInbound', sourceIdentifier: id });
    let n0 = fake.requests.length;
    fake.script({ status: 500 });
    let { job } = await pull(app, key, sourceId);
    expect(job.jobStatus).toBe('completed');
    expect(fake.requests.slice(n0).map((r) => r.answeredWith)).toEqual([500, 200]);

    n0 = fake.requests.length;
    fake.script({ delayMs: 1500 });
    ({ job } = await pull(app, key, sourceId));
    expect(job.jobStatus).toBe('completed');
    expect(job.jobResponsePayload).toMatchObject({ fetched: 1, updated: 1 });
    expect(fake.requests.slice(n0).map((r) => r.answeredWith)).toEqual(['timeout', 200]);
  });
  it('a running pull reports its status and can be cancelled; the source ends failed', async () => {
    const id = 'https://www.pronet.com/in/http-slow';
    fake.setAudience(id, [person(1, 1)]);
    const sourceId = await createSource(app, key, { sourceType: 'pronetInbound', sourceIdentifier: id });
    fake.script({ delayMs: 1500 }, { delayMs: 1500 }, { delayMs: 1500 }, { delayMs: 1500 });
    const res = await app.http('POST', `/sources/pull-contacts-from-source/${sourceId}`, { apiKey: key, body: {} });
    expect(res.status).toBe(202);
    let status = await app.http('GET', `/jobs/${res.body.jobId}`, { apiKey: key });
    for (let i = 0; i < 50 && status.body.data.jobStatus !== 'running'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await app.http('GET', `/jobs/${res.body.jobId}`, { apiKey: key });
    }
    expect(status.body.data).toMatchObject({ type: 'source-pull', jobStatus: 'running', progress: { completed: 0 } });
    const cancelled = await app.http('POST', `/jobs/${res.body.jobId}/cancel`, { apiKey: key });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.data.jobStatus).toBe('cancelled');
    let refresh: string | null = null;
    for (let i = 0; i < 50 && refresh !== 'failed'; i++) {
      refresh = (await app.http('GET', `/sources/${sourceId}`, { apiKey: key })).body.data.attributes.refreshStatus;
      if (refresh !== 'failed') await new Promise((r) => setTimeout(r, 100));
    }
    expect(refresh).toBe('failed');
  });
});
