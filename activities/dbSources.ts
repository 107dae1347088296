/**
 * Activities of source pulls: mark the source's `refreshStatus`, fetch one page of the audience
 * from the configured listening provider and ingest it through the one contact write path
 * (`db/contactIngest.ts`, identity resolution, `mode: 'automated'`: deleted contacts stay
 * deleted), and register the jobs of scheduled pulls.
 *
 * Provider failures become Temporal failures by kind alone: credentials and invalid input are
 * final (`nonRetryable`), rate limits retry after the provider's `Retry-After`
 * (`nextRetryDelay`), transient failures retry with the activity's backoff.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { dropSuppressed, suppressionKey } from '../db/privacy.js';
import { ingestContacts } from '../db/contactIngest.js';
import { attachSourceToSegment } from '../db/segmentLinks.js';
import { insertJob } from '../db/jobs.js';
import { findSource, learnSourceDisplay, markSourcePullRunning, setSourcePullOutcome } from '../db/sources.js';
import { headcountRangeError, type ContactInput } from '../domain/contactMapping.js';
import { normalizeDomain, normalizeEmail, normalizeProfileUrl } from '../domain/identity.js';
import { isListeningSourceType, pullWindow, type ListeningSourceType } from '../domain/sourceRules.js';
import type { ActivityDeps } from './deps.js';
import { createHttpListeningProvider } from './providers/listeningHttp.js';
import { createDatasetListeningProvider } from './providers/listeningDataset.js';
import {
  ListeningProviderError,
  listeningConfigFromEnv,
  type ListeningPerson,
  type ListeningProvider,
  type ListeningQuery,
} from './providers/listening.js';
import { DATA_FAILURE, SOURCE_PROVIDER_FAILURE } from '../workflows/contract/failures.js';

export interface BeginSourcePullInput {
  workspaceId: string;
  sourceId: string;
  segmentId: string | null;
  numberOfPastDaysToSync: number;
}

export interface BeginSourcePullResult {
  query: ListeningQuery;
  provider: 'dataset' | 'http';
}

export interface PullPageInput {
  workspaceId: string;
  sourceId: string;
  query: ListeningQuery;
  cursor: string | null;
  limit: number;
}

export interface PullPageResult {
  fetched: number;
  created: number;
  updated: number;
  skipped: number;
  nextCursor: string | null;
  /** People on the suppression list, not written (absent when none). */
  suppressed?: number;
}

/** The provider a pull uses, from the worker's configuration (`LISTENING_*`). */
export function listeningProvider(deps: ActivityDeps): ListeningProvider {
  const cfg = listeningConfigFromEnv(deps.config.env);
  if (cfg.provider === 'dataset') return createDatasetListeningProvider(deps.pool);
  if (!cfg.http.baseUrl || !cfg.http.apiKey) {
    throw ApplicationFailure.create({
      type: SOURCE_PROVIDER_FAILURE.notConfigured,
      message: 'LISTENING_PROVIDER=http needs LISTENING_BASE_URL and LISTENING_API_KEY',
      nonRetryable: true,
    });
  }
  return createHttpListeningProvider({ baseUrl: cfg.http.baseUrl, apiKey: cfg.http.apiKey, timeoutMs: cfg.http.timeoutMs, allowList: deps.config.outboundAllowList });
}

/** Provider failure → Temporal failure, decided by the failure's kind alone. */
export function providerFailure(e: unknown): Error {
  if (!(e instanceof ListeningProviderError)) return e as Error;
  switch (e.kind) {
    case 'credentials':
      return ApplicationFailure.create({ type: SOURCE_PROVIDER_FAILURE.credentialsInvalid, message: e.message, nonRetryable: true });
    case 'invalid_input':
      return ApplicationFailure.create({ type: SOURCE_PROVIDER_FAILURE.rejectedQuery, message: e.message, nonRetryable: true });
    case 'rate_limited':
      return ApplicationFailure.create({ type: SOURCE_PROVIDER_FAILURE.rateLimited, message: e.message, nextRetryDelay: e.retryAfterMs ?? 30_000 });
    case 'transient':
      return ApplicationFailure.create({ type: SOURCE_PROVIDER_FAILURE.unavailable, message: e.message });
  }
}

const text = (v: string | null | undefined) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

/** A person of the audience → the contact input of the ingest path (row key = profile key). */
export function personToContactInput(p: ListeningPerson, origin: string): ContactInput | null {
  const pronetKey = normalizeProfileUrl(p.pronet);
  if (!pronetKey) return null;
  const emails = [...new Set((p.emails ?? []).map(normalizeEmail).filter((e): e is string => !!e))];
  const c = p.company ?? null;
  const company = c
    ? Object.fromEntries(
        Object.entries({
          companyName: text(c.companyName),
          companyWebsite: text(c.companyWebsite),
          companyIndustry: text(c.companyIndustry),
          // a provider's headcount that is not a `<min>-<max>` range is dropped, never stored
          companyHeadcount: ((h) => (h && !headcountRangeError(h) ? h : undefined))(text(c.companyHeadcount)),
          companyPronet: text(c.companyPronet),
        }).filter(([, v]) => v !== undefined),
      )
    : {};
  const hasCompany = !!(company.companyName || (company.companyWebsite && normalizeDomain(company.companyWebsite)));
  const fullName = text(p.fullName) ?? ([text(p.firstName), text(p.lastName)].filter(Boolean).join(' ') || undefined);
  const input: ContactInput = {
    rowKey: `p:${pronetKey}`,
    origin,
    pronet: p.pronet.trim(),
    pronetKey,
    ...(text(p.firstName) ? { firstName: text(p.firstName) } : {}),
    ...(text(p.lastName) ? { lastName: text(p.lastName) } : {}),
    ...(fullName ? { fullName } : {}),
    ...(text(p.jobTitle) ? { title: text(p.jobTitle) } : {}),
    ...(emails.length ? { emails, workEmail: emails[0] } : {}),
    ...(hasCompany ? { company } : {}),
  };
  return input;
}

export function createSourceActivities(deps: ActivityDeps) {
  return {
    /** Marks the pull running, attaches the segment and fixes the window of the pull. */
    async beginSourcePull(input: BeginSourcePullInput): Promise<BeginSourcePullResult> {
      const src = await markSourcePullRunning(deps.orm.em, input.sourceId);
      if (!src) throw ApplicationFailure.create({ type: DATA_FAILURE.sourceNotFound, message: `Source ${input.sourceId} no longer exists`, nonRetryable: true });
      if (!isListeningSourceType(src.sourceType)) {
        throw ApplicationFailure.create({ type: DATA_FAILURE.sourceNotPullable, message: `${src.sourceType} sources have no audience to pull`, nonRetryable: true });
      }
      if (input.segmentId && !(await attachSourceToSegment(deps.pool, input.segmentId, input.sourceId))) {
        throw ApplicationFailure.create({ type: DATA_FAILURE.segmentNotFound, message: `Segment ${input.segmentId} no longer exists`, nonRetryable: true });
      }
      const window = pullWindow(input.numberOfPastDaysToSync, new Date());
      const provider = listeningConfigFromEnv(deps.config.env).provider;
      return {
        provider,
        query: {
          sourceType: src.sourceType as ListeningSourceType,
          sourceIdentifier: src.sourceIdentifier ?? null,
          sourceMeta: src.sourceMeta ?? {},
          since: window.since,
          until: window.until,
        },
      };
    },

    /** Fetches one page of the audience and ingests it; idempotent (re-ingest updates). */
    async pullSourcePage(input: PullPageInput): Promise<PullPageResult> {
      const provider = listeningProvider(deps);
      let page;
      try {
        page = await provider.fetchAudience(input.query, { cursor: input.cursor, limit: input.limit });
      } catch (e) {
        throw providerFailure(e);
      }
      if (page.subject) await learnSourceDisplay(deps.pool, input.sourceId, page.subject);
      const origin = `pull:${provider.name}`;
      const inputs = page.people.map((p) => personToContactInput(p, origin)).filter((x): x is ContactInput => x !== null);
      const { kept, suppressed } = await dropSuppressed(deps.pool, input.workspaceId, inputs, suppressionKey(deps.config.serverSecret));
      const res = kept.length
        ? await ingestContacts(deps.pool, kept, { workspaceId: input.workspaceId, sourceId: input.sourceId, mode: 'automated' })
        : { created: 0, updated: 0, skipped: 0 };
      return {
        fetched: page.people.length,
        created: res.created,
        updated: res.updated,
        skipped: res.skipped + (page.people.length - inputs.length),
        nextCursor: page.nextCursor,
        ...(suppressed ? { suppressed } : {}),
      };
    },

    async finishSourcePull(input: { workspaceId: string; sourceId: string; status: 'succeeded' | 'failed' }): Promise<void> {
      await setSourcePullOutcome(deps.orm.em, input.sourceId, input.status);
    },

    /**
     * Settings of a scheduled pull: the look-back of the source's `runFrequency`, or null when
     * the source is gone or no longer periodic (the run is then skipped).
     */
    async scheduledPullSettings(input: { workspaceId: string; sourceId: string }): Promise<{ numberOfPastDaysToSync: number } | null> {
      const src = await findSource(deps.orm.em, input.sourceId);
      if (!src || !src.runFrequency || !isListeningSourceType(src.sourceType)) return null;
      const days = Number(src.runFrequency.numberOfPastDaysToSync ?? 1);
      return { numberOfPastDaysToSync: Number.isFinite(days) && days > 0 ? days : 1 };
    },

    /** Registers the job of a started scheduled pull (idempotent per job id), so GET /jobs/{jobId} finds it. */
    async registerScheduledPull(input: { workspaceId: string; sourceId: string; jobId: string; jobType: string; workflowId: string }): Promise<void> {
      await insertJob(deps.orm.em, { id: input.jobId, workspaceId: input.workspaceId, type: input.jobType, workflowId: input.workflowId }, { ifAbsent: true });
    },
  };
}
