/**
 * Pure rules of scheduled publishing: workflow ids, what a schedule row must satisfy, how a
 * post's status follows from its schedule rows, thread spacing, repost times and provider
 * back-off hints. Used by the API (bulk-schedule), the activities and (types only) workflows.
 */
import { DATE_RANGE_RULE, parseIsoDate } from './dates.js';
import { charCount } from './inputSafety.js';
import type { Automation, PostStatus, Provider } from './social.js';

/** Workflow id of schedule row `n` of a post (DESIGN §5: business ids, a double start is rejected). */
export const publishWorkflowId = (postId: string, n: number): string => `publish-${postId}-${n}`;
export const scheduleBatchWorkflowId = (batchId: string): string => `schedule-batch-${batchId}`;

/**
 * A schedule row gets its (durably sleeping) publish workflow once it is due within this
 * horizon; rows further out wait in the table until their batch workflow comes back for them.
 */
export const DISPATCH_HORIZON_MS = 15 * 60_000;

/**
 * How early a claim may come: the workflow wakes a few seconds before `scheduledTime` (its
 * provider step holds the request until then), plus clock skew.
 */
export const DUE_SLACK_MS = 15_000;

/** Task queue of the activities that call a network; its worker bounds concurrency per network. */
export function providerTaskQueue(baseQueue: string, provider: Provider): string {
  return `${baseQueue}-${provider === 'microblog' ? 'microblog' : 'pronet'}`;
}

/** Networks' own limits, checked when a row is scheduled so a bad row fails fast. */
export const NETWORK_LIMITS = {
  microblog: { maxChars: 280, maxMedia: 4, mediaTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'video/mp4', 'video/quicktime'] },
  pronet: { maxChars: 3000, maxMedia: 20, mediaTypes: ['image/jpeg', 'image/png', 'image/gif', 'video/mp4', 'application/pdf'] },
} as const;

export const networkOf = (p: Provider): 'microblog' | 'pronet' => (p === 'microblog' ? 'microblog' : 'pronet');


/** `null` when `value` is an ISO 8601 timestamp with zone strictly after `now`, else the reason. */
/** Date-time with an explicit zone (Z or ±hh:mm); a bare date or a local time is ambiguous. The request schemas' pattern too. */
export const SCHEDULED_TIME_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?([Zz]|[+-][0-9]{2}:?[0-9]{2})$';
const SCHEDULED_TIME_RE = new RegExp(SCHEDULED_TIME_PATTERN);

export function scheduledTimeProblem(value: string, now: Date): string | null {
  if (!SCHEDULED_TIME_RE.test(value)) {
    return 'must be an ISO 8601 date-time with a time zone, e.g. 2026-11-21T17:45:00.000Z';
  }
  const t = parseIsoDate(value, { requireZone: true });
  if (!t) return `must be a valid date-time (a day and time that exist on the calendar, ${DATE_RANGE_RULE})`;
  if (t.getTime() <= now.getTime()) return 'must be in the future';
  return null;
}

/**
 * Why a post cannot be published at all, whatever the network: the post, or one of its thread
 * items, has neither text nor media. Drafts may be empty (they are work in progress); scheduling
 * one is refused instead of failing at publish time.
 */
export function emptyContentProblem(post: Pick<ContentToCheck, 'content' | 'media' | 'threadItems'>): string | null {
  if (!post.content.trim() && post.media.length === 0) return 'has no content and no media; add text or media to the draft before scheduling it';
  const i = post.threadItems.findIndex((t) => !t.content.trim() && !(t.media?.length));
  if (i >= 0) return `thread item ${i} has no content and no media`;
  return null;
}

export interface ContentToCheck {
  content: string;
  media: Array<{ fileName: string }>;
  threadItems: Array<{ content: string; media?: Array<{ fileName: string }> }>;
  externalPost: boolean;
}

/**
 * Whether a post's content suits an integration of `provider`: external replies only on pronet,
 * each item within the network's length and media limits, media types the network takes.
 * Returns `[relativePath, message]` of the first problem, or null.
 */
export function contentProblem(post: ContentToCheck, provider: Provider, mediaTypes: ReadonlyMap<string, string>): [string, string] | null {
  const net = networkOf(provider);
  const lim = NETWORK_LIMITS[net];
  if (post.externalPost && net !== 'pronet') return ['providerId', 'an external reply needs a pronet or pronetPage integration'];
  const items = [{ content: post.content, media: post.media }, ...post.threadItems.map((t) => ({ content: t.content, media: t.media ?? [] }))];
  for (const [i, item] of items.entries()) {
    const where = i === 0 ? 'post content' : `thread item ${i - 1}`;
    if (charCount(item.content) > lim.maxChars) return ['providerId', `${where} has ${charCount(item.content)} characters; ${provider} allows ${lim.maxChars}`];
    if (item.media.length > lim.maxMedia) return ['providerId', `${where} has ${item.media.length} media files; ${provider} allows ${lim.maxMedia}`];
    for (const m of item.media) {
      const type = mediaTypes.get(m.fileName);
      if (type && !(lim.mediaTypes as readonly string[]).includes(type)) return ['providerId', `${where}: ${provider} does not take ${type} media (${m.fileName})`];
    }
  }
  if (net === 'microblog') {
    for (const [i, item] of items.entries()) {
      const types = item.media.map((m) => mediaTypes.get(m.fileName) ?? '');
      if (types.some((t) => t.startsWith('video/')) && types.length > 1) {
        return ['providerId', `${i === 0 ? 'post content' : `thread item ${i - 1}`}: microblog takes one video alone, not with other media`];
      }
    }
  }
  return null;
}

/** Seconds between thread items: the row's automation wins over the post's; disabled → 0. */
export function threadDelaySecs(rowAutomation: Automation | null | undefined, postAutomation: Automation | null | undefined): number {
  const d = rowAutomation?.threadDelay ?? postAutomation?.threadDelay;
  return d && d.enabled ? d.scheduleInSecs : 0;
}

/** When a repost child publishes: the parent's scheduled time plus the child's delay. */
export function repostTime(parentScheduledTime: Date | string, delaySecs: number): Date {
  return new Date(new Date(parentScheduledTime).getTime() + delaySecs * 1000);
}

export type ScheduleRowStatus = 'scheduled' | 'publishing' | 'published' | 'failed' | 'cancelled';

/**
 * A post's status from its schedule rows: any row publishing → publishing; else any still
 * scheduled → scheduled; else any published → published; else any failed → failed; no live row
 * (all cancelled, or none) → draft.
 */
export function aggregatePostStatus(rows: ScheduleRowStatus[]): PostStatus {
  if (rows.includes('publishing')) return 'publishing';
  if (rows.includes('scheduled')) return 'scheduled';
  if (rows.includes('published')) return 'published';
  if (rows.includes('failed')) return 'failed';
  return 'draft';
}

/**
 * Back-off hint of a 429/503 answer in milliseconds: `Retry-After` (seconds or HTTP date), else
 * X's `x-rate-limit-reset` (epoch seconds); clamped to 1 s … `maxMs` (15 min unless given: the
 * activity retry hint of a 503), default 60 s.
 */
export function retryAfterMs(retryAfter: string | null, rateLimitReset: string | null, now = Date.now(), maxMs = 15 * 60_000): number {
  const clamp = (ms: number) => Math.min(Math.max(Math.round(ms), 1000), maxMs);
  const ra = retryAfter?.trim();
  if (ra) {
    if (/^\d+(\.\d+)?$/.test(ra)) return clamp(Number(ra) * 1000);
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return clamp(at - now);
  }
  const reset = rateLimitReset?.trim();
  if (reset && /^\d+$/.test(reset)) return clamp(Number(reset) * 1000 - now);
  return clamp(60_000);
}

/**
 * What a 429 tells the publish workflow (the details of its `rate_limited` failure): wait
 * `waitMs` on a workflow timer (the network's reset, unclamped above), show `retryAt` on the
 * post, and fail instead once the waits of this step would pass `maxWaitMs`
 * (`PROVIDER_RATE_LIMIT_MAX_WAIT_SECS`).
 */
export interface RateLimitWait {
  waitMs: number;
  retryAt: string;
  maxWaitMs: number;
}

/** Longest a publish step waits out 429s in total before it fails with `provider_rate_limited`: `PROVIDER_RATE_LIMIT_MAX_WAIT_SECS`, 1 hour unless set. */
export function rateLimitMaxWaitMs(env: Record<string, string | undefined>): number {
  const raw = env.PROVIDER_RATE_LIMIT_MAX_WAIT_SECS;
  const secs = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
  return (Number.isFinite(secs) && secs >= 0 ? secs : 3600) * 1000;
}

/** The wait a 429 asked for (`retryAfterMs` unclamped above), as of `now`. */
export function rateLimitWait(waitMs: number, maxWaitMs: number, now = Date.now()): RateLimitWait {
  return { waitMs, retryAt: new Date(now + waitMs).toISOString(), maxWaitMs };
}

/** Error codes stored on a failed post, by failure kind. */
export const FAILURE_CODES: Record<string, string> = {
  invalid_input: 'provider_rejected',
  credentials_revoked: 'credentials_revoked',
  rate_limited: 'provider_rate_limited',
  transient: 'provider_unavailable',
  outcome_unknown: 'publish_outcome_unknown',
};
