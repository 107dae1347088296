/** Health, readiness, API docs, credits and jobs. */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { defineRoute, reply } from '../route.js';
import { cancelJob, readJob } from '../jobs.js';
import { buildOpenApi } from '../openapi.js';
import { PageOf } from '../schemas/common.js';
import { CreditBalance, CreditTransaction, CreditTransactionsQuery, Health, JobParams, JobResponse, Readiness } from '../schemas/platform.js';
import { decodeToken, pageMeta, queryFingerprint } from '../../domain/pagination.js';
import { countCreditTransactions, creditTransactionsPage } from '../../db/credits.js';
import { readiness } from '../usecases/readiness.js';

const swaggerDir = join(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'), '..');
const SWAGGER_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css',
  'swagger-ui-bundle.js': 'application/javascript',
  'swagger-ui-standalone-preset.js': 'application/javascript',
  'favicon-32x32.png': 'image/png',
};

const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Contact Data API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"><link rel="icon" href="/docs/assets/favicon-32x32.png"></head>
<body><div id="ui"></div><script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', persistAuthorization: true });</script></body></html>`;

export const platformRoutes = [
  defineRoute({
    method: 'get', path: '/healthz', tag: 'Platform', summary: 'Liveness: the process answers', auth: false, rateLimited: false,
    responses: { 200: Health },
    handler: () => ({ status: 'ok' }),
  }),
  defineRoute({
    method: 'get', path: '/readyz', tag: 'Platform', summary: 'Readiness: PostgreSQL (with every migration of this build applied), Temporal and the object store answer', auth: false, rateLimited: false,
    responses: { 200: Readiness, 503: Readiness },
    handler: async ({ deps }) => {
      const { ok, body } = await readiness(deps);
      return reply(ok ? 200 : 503, body);
    },
  }),
  defineRoute({
    method: 'get', path: '/openapi.json', tag: 'Platform', summary: 'This API as an OpenAPI 3.1 document', auth: false,
    responses: { 200: { description: 'OpenAPI 3.1 document' } },
    handler: ({ deps, routes }) => buildOpenApi(deps.config.publicBaseUrl, routes),
  }),
  defineRoute({
    method: 'get', path: '/docs', tag: 'Platform', summary: 'Interactive API documentation', auth: false,
    responses: { 200: { description: 'HTML page' } },
    handler: ({ ctx }) => {
      ctx.type = 'text/html';
      return DOCS_HTML;
    },
  }),
  defineRoute({
    method: 'get', path: '/docs/assets/{file}', tag: 'Platform', summary: 'Static assets of the docs page (served locally)', auth: false,
    params: Type.Object({ file: Type.String({ maxLength: 100 }) }),
    responses: { 200: { description: 'asset' } },
    handler: async ({ params, ctx }) => {
      // own keys only: `constructor` is a file name a client may ask for, not an asset
      const type = Object.hasOwn(SWAGGER_ASSETS, params.file) ? SWAGGER_ASSETS[params.file] : undefined;
      if (!type) return reply(404, { error: { status: 404, code: 'not_found', message: 'No such asset', requestId: ctx.state.requestId } });
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=86400');
      return readFile(join(swaggerDir, params.file));
    },
  }),
  defineRoute({
    method: 'get', path: '/credits/balance', tag: 'Credits', summary: 'Credit balance of the workspace',
    responses: { 200: CreditBalance }, errors: [401, 500],
    examples: { response: { data: { balance: 975, updatedAt: '2026-11-28T09:30:00.000Z' } } },
    // A hot read through the pool, batched per event-loop turn: no entity manager.
    orm: false,
    handler: async ({ scope, deps }) => {
      const row = await deps.readBalance(scope.workspaceId);
      return { data: { balance: row?.balance ?? 0, updatedAt: (row?.updatedAt ?? new Date(0)).toISOString() } };
    },
  }),
  defineRoute({
    method: 'get', path: '/credits/transactions', tag: 'Credits', summary: 'Credit ledger of the workspace, newest first',
    query: CreditTransactionsQuery, responses: { 200: PageOf(CreditTransaction) }, errors: [400, 401, 500],
    handler: async ({ scope, deps, query }) => {
      const limit = query.limit ?? 100;
      const fp = queryFingerprint(scope.workspaceId, { r: 'ledger' });
      const from = query.paginationToken ? decodeToken(deps.config.serverSecret, fp, query.paginationToken) : undefined;
      const [rows, total] = await Promise.all([
        creditTransactionsPage(scope, limit + 1, from),
        countCreditTransactions(scope),
      ]);
      const page = pageMeta({
        secret: deps.config.serverSecret, fingerprint: fp, rows, limit, totalRecords: total, from,
        keyOf: (r) => [r.seq],
      });
      return {
        data: page.data.map((r) => ({ id: r.id, kind: r.kind, amount: r.amount, balanceAfter: r.balanceAfter, reason: r.reason, jobId: r.jobId, metadata: r.metadata, createdAt: r.createdAt.toISOString() })),
        meta: page.meta,
      };
    },
  }),
  defineRoute({
    method: 'get', path: '/jobs/{jobId}', tag: 'Jobs', summary: 'Latest status, progress and result of a job',
    params: JobParams, responses: { 200: JobResponse }, errors: [401, 404, 500],
    handler: async ({ scope, deps, params }) => ({ data: await readJob(deps, scope.workspaceId, params.jobId) }),
  }),
  defineRoute({
    method: 'post', path: '/jobs/{jobId}/cancel', tag: 'Jobs', summary: 'Cancel a running job',
    description:
      'Stops a queued or running job. A job that has ended (`completed`, `failed`, `cancelled`) answers 409 `job_not_running`, ' +
      'also while its webhook notification is still being retried: the notification reports the outcome and keeps its retry schedule.',
    params: JobParams, responses: { 200: JobResponse }, errors: [401, 404, 409, 500], errorCodes: ['job_not_running'],
    handler: async ({ scope, deps, params }) => ({ data: await cancelJob(deps, scope.workspaceId, params.jobId) }),
  }),
];
