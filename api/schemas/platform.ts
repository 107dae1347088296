import { Type } from '@sinclair/typebox';
import { PaginationToken } from './common.js';

export const Health = Type.Object({ status: Type.String() });
export const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')]),
  checks: Type.Record(Type.String(), Type.Object({ ok: Type.Boolean(), ms: Type.Number(), error: Type.Optional(Type.String()) })),
});

export const CreditBalance = Type.Object({
  data: Type.Object({ balance: Type.Integer(), updatedAt: Type.String({ format: 'date-time' }) }),
});

export const CreditTransactionsQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })), paginationToken: Type.Optional(PaginationToken) },
  { additionalProperties: false },
);

export const CreditTransaction = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('grant'), Type.Literal('debit'), Type.Literal('hold'), Type.Literal('release')], {
    description:
      '`grant`: credits added. `debit`: a charge. `hold`: the maximum price of an accepted job (enrichment), reserved so concurrent ' +
      'requests cannot spend the same credits; `release`: that hold given back in full when the job settles (in the same transaction as ' +
      "its `debit`s of the real price) or fails. A settled job's rows sum to what it cost.",
  }),
  amount: Type.Integer({ description: 'Positive for grants and releases, negative for debits and holds' }),
  balanceAfter: Type.Integer(),
  reason: Type.String(),
  jobId: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
});

export const JobParams = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

export const JobResponse = Type.Object({
  data: Type.Object({
    id: Type.String(),
    type: Type.String(),
    jobStatus: Type.Union(['queued', 'running', 'completed', 'failed', 'cancelled'].map((s) => Type.Literal(s))),
    progress: Type.Union(
      [
        Type.Object({
          completed: Type.Integer({ description: 'Units done: rows (bulk upsert), slices (enrichment), companies (verified import), contacts fetched (source pull)' }),
          total: Type.Integer({ description: 'Units known so far; 0 before the job has counted them' }),
          percent: Type.Integer({ description: '100 once the job completed' }),
        }),
        Type.Null(),
      ],
      {
        description:
          'What the job counted: from the status query while it runs, from its result (or failure) once it closed. Never estimated: ' +
          '`null` when unknown, with the reason in `progressUnknownReason` (no worker answered, not started, cancelled, stopped outside its workflow, ' +
          'or ended before results carried progress).',
      },
    ),
    progressUnknownReason: Type.Union([Type.String(), Type.Null()], { description: 'Why `progress` is null; null when progress is known' }),
    jobResponsePayload: Type.Unknown({ description: 'The result (or partial result while running); shape depends on the job type' }),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
    webhookDeliveries: Type.Array(
      Type.Object({ attempt: Type.Integer(), statusCode: Type.Union([Type.Integer(), Type.Null()]), error: Type.Union([Type.String(), Type.Null()]), durationMs: Type.Integer(), createdAt: Type.String() }),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  }),
});

/** The body of a job webhook (DESIGN §4; workflows/job.ts `webhookPayload`), published in the document's `webhooks`. */
export const JobWebhookEvent = Type.Object(
  {
    type: Type.Union([Type.Literal('job.completed'), Type.Literal('job.failed')]),
    jobId: Type.String(),
    jobType: Type.String({ examples: ['bulk-upsert-contacts'] }),
    jobStatus: Type.Union([Type.Literal('completed'), Type.Literal('failed')]),
    jobResponsePayload: Type.Unknown({ description: 'The job\'s result, as `GET /jobs/{jobId}` answers it; shape depends on the job type' }),
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() }, { description: 'Why the job failed (`job.failed` only)' })),
    timestamp: Type.String({ format: 'date-time' }),
  },
  { $id: 'JobWebhookEvent' },
);
