import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Agent, createServer, get, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../harness.js';
import { ROOT_DIR } from '../../domain/config.js';
import { debitCredits, debitEach, grantCredits, holdCredits, releaseHold, settleJobCredits } from '../../db/credits.js';
import { inWorkspaceScope } from '../../db/tenancy.js';
import { v7 as uuidv7 } from 'uuid';
import { checkOutboundUrl, safeRequest } from '../../infra/outbound.js';
import { assertOutboundUrl } from '../../api/outboundUrls.js';
import { InsufficientCreditsError } from '../../domain/errors.js';
import { createActivities } from '../../activities/index.js';
import { MockActivityEnvironment } from '@temporalio/testing';
import { activityInterceptors } from '../../worker/worker.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
});
afterAll(() => app?.close());

describe('auth', () => {
  it('answers 401 without a key, with an unknown key, and 200 with a valid key (header or Bearer)', async () => {
    const ws = await app.createWorkspace({ credits: 7 });
    const none = await app.http('GET', '/credits/balance');
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(none.body.error.requestId).toBeTruthy();
    expect((await app.http('GET', '/credits/balance', { apiKey: 'cdk_ws_nope' })).status).toBe(401);
    const ok = await app.http('GET', '/credits/balance', { apiKey: ws.apiKey });
    expect(ok.status).toBe(200);
    expect(ok.body.data.balance).toBe(7);
    const bearer = await app.http('GET', '/credits/balance', { headers: { authorization: `Bearer ${ws.apiKey}` } });
    expect(bearer.status).toBe(200);
  });

  it('stores keys only as hashes', async () => {
    const ws = await app.createWorkspace();
    const r = await app.pool.query(`select key_hash, prefix from api_keys where workspace_id = $1`, [ws.workspaceId]);
    expect(r.rows[0].key_hash).not.toContain(ws.apiKey);
    expect(r.rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('errors and validation', () => {
  it('answers unknown routes with the error envelope', async () => {
    const res = await app.http('GET', '/nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('route_not_found');
  });

  it('rejects invalid JSON and unknown query parameters with 400', async () => {
    const ws = await app.createWorkspace();
    const bad = await app.http('POST', '/jobs/00000000-0000-0000-0000-000000000000/cancel', { apiKey: ws.apiKey, rawBody: '{not json', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_json');
    // Found by the fuzzer (seed 1386407738): a body of white space only read as no body (`{}`).
    // No body at all still does; white space is a body, and not JSON.
    for (const rawBody of ['\n', ' \r\n\t ']) {
      const blank = await app.http('POST', '/v1/posts/filter-posts', { apiKey: ws.apiKey, rawBody, headers: { 'content-type': 'application/json' } });
      expect(blank.status, JSON.stringify(rawBody)).toBe(400);
      expect(blank.body.error.code).toBe('invalid_json');
    }
    const none = await app.http('POST', '/v1/posts/filter-posts', { apiKey: ws.apiKey, rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(none.status, JSON.stringify(none.body)).toBe(200);
    const q = await app.http('GET', '/credits/transactions?limit=5000', { apiKey: ws.apiKey });
    expect(q.status).toBe(400);
    expect(q.body.error.code).toBe('validation_failed');
    expect(q.body.error.details[0].path).toBe('/query/limit');
    const extra = await app.http('GET', '/credits/transactions?bogus=1', { apiKey: ws.apiKey });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details[0]).toMatchObject({ path: '/query/bogus', message: 'is not a known property' });
    // Found by an outside client: operations that take no query string ignored one (POST
    // /contacts/bulk-fetch?x=1 answered 200) where those that take one refuse unknown names.
    const unread = await app.http('POST', '/contacts/bulk-fetch?x=1&y=2', { apiKey: ws.apiKey, body: { contactIds: ['01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a'] } });
    expect(unread.status, JSON.stringify(unread.body)).toBe(400);
    expect(unread.body.error.details).toEqual([
      { path: '/query/x', message: 'is not a known property' },
      { path: '/query/y', message: 'is not a known property' },
    ]);
    const onGet = await app.http('GET', '/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a?fields=x', { apiKey: ws.apiKey });
    expect(onGet.status).toBe(400);
    expect(onGet.body.error.details[0].path).toBe('/query/fields');
  });

  it('answers 404 for jobs of another workspace', async () => {
    const a = await app.createWorkspace();
    const b = await app.createWorkspace();
    await app.pool.query(`insert into jobs (id, workspace_id, type, workflow_id) values ('01939b6e-0000-7000-8000-000000000001', $1, 'x', 'x-1')`, [a.workspaceId]);
    const res = await app.http('GET', '/jobs/01939b6e-0000-7000-8000-000000000001', { apiKey: b.apiKey });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('credits', () => {
  it('never overdraws under concurrent debits', async () => {
    const ws = await app.createWorkspace({ credits: 50 });
    const attempts = Array.from({ length: 40 }, (_, i) =>
      inWorkspaceScope(ws.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: ws.workspaceId, amount: 3, idempotencyKey: `race-${i}`, reason: 'test' })).then(
        () => 'ok',
        (e) => (e instanceof InsufficientCreditsError ? 'insufficient_credits' : e),
      ),
    );
    const outcomes = await Promise.all(attempts);
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(16);
    expect(outcomes.filter((o) => o === 'insufficient_credits')).toHaveLength(24);
    const bal = await app.http('GET', '/credits/balance', { apiKey: ws.apiKey });
    expect(bal.body.data.balance).toBe(2);
  });

  it('concurrent balance reads of several workspaces each answer their own workspace (reads of one event-loop turn share a statement)', async () => {
    const workspaces = await Promise.all([7, 11, 0].map((credits) => app.createWorkspace({ credits })));
    const reads = Array.from({ length: 30 }, (_, i) => workspaces[i % 3]!);
    const answers = await Promise.all(reads.map((ws) => app.http('GET', '/credits/balance', { apiKey: ws.apiKey })));
    expect(answers.map((a) => a.body.data.balance)).toEqual(reads.map((_, i) => [7, 11, 0][i % 3]));
    await inWorkspaceScope(workspaces[1]!.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: workspaces[1]!.workspaceId, amount: 4, idempotencyKey: 'after-reads', reason: 'test' }));
    const after = await Promise.all(workspaces.map((ws) => app.http('GET', '/credits/balance', { apiKey: ws.apiKey })));
    expect(after.map((a) => a.body.data.balance)).toEqual([7, 7, 0]);
  });

  it('two concurrent debits against a balance of one: one is charged, the other is a 402 (serialised on the account row lock)', async () => {
    const ws = await app.createWorkspace({ credits: 1 });
    const outcomes = await Promise.all(
      ['first', 'second'].map((key) =>
        inWorkspaceScope(ws.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: ws.workspaceId, amount: 1, idempotencyKey: key, reason: 'test' })).then(
          (r) => `charged ${r.charged}, balance ${r.balance}`,
          (e) => (e instanceof InsufficientCreditsError ? `402 with balance ${e.balance}` : e),
        ),
      ),
    );
    expect(outcomes.sort()).toEqual(['402 with balance 0', 'charged 1, balance 0']);
    expect((await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance).toBe(0);
  });

  it('keeps the ledger exact under concurrent holds, settlements, releases and debits (each movement one statement)', async () => {
    const ws = await app.createWorkspace({ credits: 200 });
    const pool = app.pool;
    const jobs = Array.from({ length: 12 }, () => uuidv7());
    const job = async (jobId: string, i: number) => {
      await inWorkspaceScope(ws.workspaceId, () => holdCredits(app.deps.pool, { workspaceId: ws.workspaceId, jobId, amount: 6, reason: 'hold', billable: true }));
      if (i % 3 === 0) return inWorkspaceScope(ws.workspaceId, () => releaseHold(app.deps.pool, ws.workspaceId, jobId));
      const [charged] = await inWorkspaceScope(ws.workspaceId, () => settleJobCredits(app.deps.pool, { workspaceId: ws.workspaceId, jobId, billable: true, charges: [{ amount: 4, idempotencyKey: `settle:${jobId}`, reason: 'test' }] }));
      return charged;
    };
    await Promise.all([
      ...jobs.map(job),
      ...Array.from({ length: 10 }, (_, i) => inWorkspaceScope(ws.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: ws.workspaceId, amount: 3, idempotencyKey: `d-${i}`, reason: 'test' }))),
      inWorkspaceScope(ws.workspaceId, () => debitEach(app.deps.pool, { workspaceId: ws.workspaceId, jobId: uuidv7(), billable: true, unitPrice: 5, keys: ['e-1', 'e-2', 'e-3'], reason: 'test' })),
    ]);
    // Retried settlements and releases change nothing.
    await Promise.all(jobs.map((jobId, i) => (i % 3 === 0 ? inWorkspaceScope(ws.workspaceId, () => releaseHold(app.deps.pool, ws.workspaceId, jobId)) : job(jobId, i))));
    const expected = 200 - 8 * 4 - 10 * 3 - 3 * 5;
    expect((await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance).toBe(expected);
    const ledger = (await pool.query<{ kind: string; amount: number; balance_after: number }>('select kind, amount, balance_after from credit_transactions where workspace_id = $1 ', [ws.workspaceId])).rows;
    expect(ledger.reduce((sum, r) => sum + r.amount, 0)).toBe(expected);
    expect(ledger.filter((r) => r.kind === 'hold')).toHaveLength(12);
    expect(ledger.filter((r) => r.kind === 'release')).toHaveLength(12);
    expect(ledger.filter((r) => r.kind === 'debit')).toHaveLength(8 + 10 + 3);
    expect(Math.min(...ledger.map((r) => r.balance_after))).toBeGreaterThanOrEqual(0);
  });

  it('settles a job that holds nothing charge by charge: what the balance cannot cover is refused, the rest charged', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    const jobId = uuidv7();
    const results = await inWorkspaceScope(ws.workspaceId, () => settleJobCredits(app.deps.pool, {
      workspaceId: ws.workspaceId,
      jobId,
      billable: true,
      charges: [6, 6, 4].map((amount, i) => ({ amount, idempotencyKey: `s-${i}`, reason: 'test' })),
    }));
    expect(results.map((r) => (r instanceof InsufficientCreditsError ? 'refused' : r.charged))).toEqual([6, 'refused', 4]);
    expect((await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance).toBe(0);
  });

  it('charges a repeated idempotency key once, even concurrently', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const results = await Promise.all(Array.from({ length: 10 }, () => inWorkspaceScope(ws.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: ws.workspaceId, amount: 10, idempotencyKey: 'job-1:emails', reason: 'test' }))));
    expect(results.filter((r) => r.charged === 10)).toHaveLength(1);
    expect(results.filter((r) => r.replayed)).toHaveLength(9);
    expect((await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance).toBe(90);
  });

  it('does not bill session keys', async () => {
    const ws = await app.createWorkspace({ credits: 5 });
    const r = await inWorkspaceScope(ws.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: ws.workspaceId, amount: 5, idempotencyKey: 'k', reason: 't', billable: false }));
    expect(r.charged).toBe(0);
    expect(r.balance).toBe(5);
  });

  it('lists the ledger newest first with pagination covering every row once', async () => {
    const ws = await app.createWorkspace({ credits: 1000 });
    for (let i = 0; i < 7; i++) await inWorkspaceScope(ws.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: ws.workspaceId, amount: i + 1, idempotencyKey: `l-${i}`, reason: 'test' }));
    await inWorkspaceScope(ws.workspaceId, () => grantCredits(app.deps.orm.em.fork(), ws.workspaceId, 3));
    const seen: string[] = [];
    let token = '';
    for (let page = 0; page < 10; page++) {
      const res = await app.http('GET', `/credits/transactions?limit=3${token ? `&paginationToken=${token}` : ''}`, { apiKey: ws.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.meta.totalRecords).toBe(9);
      seen.push(...res.body.data.map((t: { id: string }) => t.id));
      token = res.body.meta.nextToken;
      if (!token) break;
    }
    expect(seen).toHaveLength(9);
    expect(new Set(seen).size).toBe(9);
    expect([...seen].sort().reverse()).toEqual(seen);
    const first = await app.http('GET', `/credits/transactions?limit=3`, { apiKey: ws.apiKey });
    const other = await app.createWorkspace();
    const foreign = await app.http('GET', `/credits/transactions?limit=3&paginationToken=${first.body.meta.nextToken}`, { apiKey: other.apiKey });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('invalid_pagination_token');
  });

  it('lists concurrent movements newest first in the order they were applied, walking forward and back without gaps', async () => {
    const ws = await app.createWorkspace({ credits: 60 });
    const pool = app.pool;
    await Promise.allSettled([
      ...Array.from({ length: 30 }, (_, i) => inWorkspaceScope(ws.workspaceId, () => debitCredits(app.deps.pool, { workspaceId: ws.workspaceId, amount: 1 + (i % 3), idempotencyKey: `c-${i}`, reason: 'test' }))),
      ...Array.from({ length: 5 }, (_, i) => inWorkspaceScope(ws.workspaceId, () => holdCredits(app.deps.pool, { workspaceId: ws.workspaceId, jobId: uuidv7(), amount: 2 + i, reason: 'test', billable: true }))),
      inWorkspaceScope(ws.workspaceId, () => grantCredits(app.deps.orm.em.fork(), ws.workspaceId, 7)),
    ]);
    type Entry = { id: string; amount: number; balanceAfter: number; createdAt: string };
    const walk = async (from: string, dir: 'nextToken' | 'previousToken') => {
      const seen: Entry[][] = [];
      let token = from;
      for (;;) {
        const res = await app.http('GET', `/credits/transactions?limit=4${token ? `&paginationToken=${token}` : ''}`, { apiKey: ws.apiKey });
        expect(res.status).toBe(200);
        seen.push(res.body.data);
        token = res.body.meta[dir];
        if (!token) return { seen, last: res.body.meta };
      }
    };
    const forward = await walk('', 'nextToken');
    const ledger = forward.seen.flat();
    const { rows } = await pool.query('select count(*)::int as n from credit_transactions where workspace_id = $1', [ws.workspaceId]);
    expect(ledger).toHaveLength(rows[0].n);
    expect(new Set(ledger.map((t) => t.id)).size).toBe(ledger.length);
    expect(ledger[0]!.balanceAfter).toBe((await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance);
    expect(ledger.at(-1)!.balanceAfter).toBe(ledger.at(-1)!.amount);
    for (let i = 0; i < ledger.length - 1; i++) {
      expect(ledger[i]!.balanceAfter, JSON.stringify(ledger)).toBe(ledger[i + 1]!.balanceAfter + ledger[i]!.amount);
      expect(Date.parse(ledger[i]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(ledger[i + 1]!.createdAt));
    }
    // Back from the last page with its previousToken: the same pages, newest first within each.
    const lastPage = forward.seen.at(-1)!;
    const back = await walk(forward.last.previousToken, 'previousToken');
    expect([...back.seen].reverse().flat().concat(lastPage).map((t) => t.id)).toEqual(ledger.map((t) => t.id));
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After once a key exceeds its per-minute limit', async () => {
    const limited = await startTestApp({ workerMode: 'none', rateLimitPerMinute: 5, env: { BODY_LIMIT_BYTES: '2048' } });
    try {
      const ws = await limited.createWorkspace();
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 7; i++) {
        last = await limited.http('GET', '/credits/balance', { apiKey: ws.apiKey });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
      expect(statuses.slice(5)).toEqual([429, 429]);
      expect(last!.body.error.code).toBe('rate_limited');
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(last!.headers.get('ratelimit-limit')).toBe('5');
      // Another key of the same workspace has its own budget.
      const other = await limited.createApiKey(ws.workspaceId, 'user');
      expect((await limited.http('GET', '/credits/balance', { apiKey: other })).status).toBe(200);
      // Bodies over the configured limit are refused before any handler runs.
      const big = await limited.http('POST', '/jobs/01939b6e-0000-7000-8000-000000000001/cancel', { apiKey: other, body: { pad: 'x'.repeat(4096) } });
      expect(big.status).toBe(413);
      expect(big.body.error.code).toBe('payload_too_large');
    } finally {
      await limited.close();
    }
  });
});

describe('outbound URL guard', () => {
  it('refuses private, loopback and link-local targets unless allow-listed', async () => {
    for (const url of ['http://127.0.0.1/x', 'http://10.1.2.3/', 'http://169.254.169.254/latest', 'http://[::1]/', 'http://192.168.0.1', 'ftp://example.com/']) {
      await expect(checkOutboundUrl(url, [])).rejects.toThrow();
    }
    await expect(assertOutboundUrl('http://127.0.0.1:9/x', [], '/webhookConfiguration/url')).rejects.toMatchObject({ status: 400, code: 'url_not_allowed' });
    await expect(checkOutboundUrl('http://127.0.0.1:9/x', ['127.0.0.1'])).resolves.toBeInstanceOf(URL);
    await expect(checkOutboundUrl('http://93.184.215.14/', [])).resolves.toBeInstanceOf(URL);
  });

  it('re-checks redirects: an allowed host redirecting to a private one is refused', async () => {
    const server = await listen((req, res) => {
      res.writeHead(302, { location: 'http://10.0.0.1/secret' });
      res.end();
    });
    const port = (server.address() as { port: number }).port;
    await expect(safeRequest(`http://127.0.0.1:${port}/`, { allowList: ['127.0.0.1'] })).rejects.toThrow(/private|reserved/);
    server.close();
  });
});

describe('outbound redirects', () => {
  it('say why a redirect was refused: not followed at all (webhooks) or followed too often', async () => {
    // found by the outsider probe: a webhook receiver answering 302 was recorded as "too many redirects"
    const server = await listen((req, res) => {
      res.writeHead(302, { location: '/again' });
      res.end();
    });
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    try {
      await expect(safeRequest(url, { allowList: ['127.0.0.1'], maxRedirects: 0 })).rejects.toThrow(/answered a redirect \(302\), which is not followed/);
      await expect(safeRequest(url, { allowList: ['127.0.0.1'], maxRedirects: 2 })).rejects.toThrow(/redirected more than 2 times/);
    } finally {
      server.close();
    }
  });
});

describe('outbound deadline', () => {
  it('enforces one deadline over the whole exchange, even while bytes keep trickling in', async () => {
    const server = await listen((_req, res) => {
      res.writeHead(200);
      const tick = setInterval(() => res.write('x'), 100);
      res.on('close', () => clearInterval(tick));
    });
    const port = (server.address() as { port: number }).port;
    const started = Date.now();
    await expect(safeRequest(`http://127.0.0.1:${port}/`, { allowList: ['127.0.0.1'], timeoutMs: 600 })).rejects.toThrow(/timed out/);
    expect(Date.now() - started).toBeLessThan(3000);
    server.closeAllConnections();
    server.close();
  });
});

describe('webhooks', () => {
  it('signs deliveries with Standard Webhooks headers and passes the caller headers', async () => {
    const ws = await app.createWorkspace();
    const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
    const server = await listen((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(received.length === 1 ? 500 : 204);
        res.end();
      });
    });
    const port = (server.address() as { port: number }).port;
    const activities = createActivities({ ...app.deps });
    // As the worker runs it: through its interceptors (the input's workspace scopes the database).
    const interceptors = activityInterceptors({ orm: app.deps.orm });
    const env = new MockActivityEnvironment({ attempt: 1 }, { interceptors });
    const input = { workspaceId: ws.workspaceId, jobId: '01939b6e-0000-7000-8000-0000000000aa', messageId: 'msg_test', url: `http://127.0.0.1:${port}/hook`, headers: { 'X-Caller': 'abc', 'webhook-signature': 'forged' }, payload: { type: 'job.completed', jobId: 'j' } };
    await expect(env.run(activities.deliverWebhook, input)).rejects.toThrow(/500/);
    await expect(new MockActivityEnvironment({ attempt: 2 }, { interceptors }).run(activities.deliverWebhook, input)).resolves.toEqual({ statusCode: 204 });
    server.close();
    const last = received[1]!;
    expect(last.headers['x-caller']).toBe('abc');
    const verified = new Webhook(ws.webhookSecret).verify(last.body, last.headers as Record<string, string>);
    expect(verified).toEqual({ type: 'job.completed', jobId: 'j' });
    expect(received[0]!.headers['webhook-id']).toBe(received[1]!.headers['webhook-id']);
    const rows = await app.pool.query(`select attempt, status_code from webhook_deliveries where job_id = $1 order by attempt`, [input.jobId]);
    expect(rows.rows).toEqual([{ attempt: 1, status_code: 500 }, { attempt: 2, status_code: 204 }]);
  });
});

describe('health and docs', () => {
  it('serves /healthz, /readyz, /openapi.json and /docs with local assets', async () => {
    expect((await app.http('GET', '/healthz')).status).toBe(200);
    const ready = await app.http('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toMatchObject({ database: { ok: true }, temporal: { ok: true }, objectStore: { ok: true } });
    const doc = await app.http('GET', '/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    expect(doc.body.paths['/credits/balance'].get).toBeTruthy();
    const page = await app.http('GET', '/docs');
    expect(page.body).toContain('/docs/assets/swagger-ui-bundle.js');
    expect((await app.http('GET', '/docs/assets/swagger-ui-bundle.js')).status).toBe(200);
  });

  it('/readyz is 503 while the database lacks a migration of this build, naming it', async () => {
    // An API started on an older schema answers 500s for what the schema lacks: the readiness
    // probe is how the orchestrator (and a newcomer) learns why before traffic reaches it.
    expect((await app.http('GET', '/readyz')).body.checks.schema).toMatchObject({ ok: true });
    const last = await app.pool.query<{ id: number; name: string; executed_at: Date }>(`select id, name, executed_at from mikro_orm_migrations order by id desc limit 1`);
    const applied = last.rows[0]!;
    await app.pool.query(`delete from mikro_orm_migrations where id = $1`, [applied.id]);
    try {
      const ready = await app.http('GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.status).toBe('degraded');
      expect(ready.body.checks.schema.ok).toBe(false);
      expect(ready.body.checks.schema.error).toContain(applied.name);
      // The command it names exists (it named a `migrate` script the package does not have).
      const command = /npm run ([\w:-]+)/.exec(ready.body.checks.schema.error)?.[1];
      expect(Object.keys((JSON.parse(readFileSync(join(ROOT_DIR, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts)).toContain(command);
    } finally {
      await app.pool.query(`insert into mikro_orm_migrations (id, name, executed_at) values ($1, $2, $3)`, [applied.id, applied.name, applied.executed_at]);
    }
    expect((await app.http('GET', '/readyz')).status).toBe(200);
  });
});

describe('shutdown', () => {
  it('drains keep-alive connections: a request under load is answered or refused, never reset', async () => {
    // A rolling deploy SIGTERMs a loaded API. Closing its idle keep-alive sockets at once resets
    // the requests clients are sending on them that instant (ECONNRESET: the client cannot tell
    // whether it was served); a draining API answers each with `Connection: close` instead, and
    // a new connection is refused (ECONNREFUSED: never reached the server, safe to retry).
    const own = await startTestApp({ workerMode: 'none' });
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const outcomes = new Map<string, number>();
    const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    const { port } = new URL(own.url);
    const once = () =>
      new Promise<void>((resolve) => {
        const req = get({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
          res.resume();
          res.on('end', () => (count(String(res.statusCode)), resolve()));
          res.on('error', (e: NodeJS.ErrnoException) => (count(e.code ?? e.message), resolve()));
        });
        req.on('error', (e: NodeJS.ErrnoException) => (count(e.code ?? e.message), resolve()));
      });
    let running = true;
    const clients = Array.from({ length: 16 }, async () => {
      while (running) await once();
    });
    try {
      await new Promise((r) => setTimeout(r, 500));
      expect(outcomes.get('200')).toBeGreaterThan(0);
      await own.close();
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      running = false;
      await Promise.all(clients);
      agent.destroy();
    }
    // answered (200, or 429 from the per-address limit of unauthenticated paths) or refused
    const errors = [...outcomes.keys()].filter((k) => !/^\d{3}$/.test(k));
    expect(errors, JSON.stringify(Object.fromEntries(outcomes))).toEqual(['ECONNREFUSED']);
  });
});

function listen(handler: Parameters<typeof createServer>[1]): Promise<Server> {
  return new Promise((resolve) => {
    const s = createServer(handler);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}
