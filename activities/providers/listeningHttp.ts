/**
 * The `http` listening provider: the JSON-over-HTTP contract of docs/providers/listening.md.
 *
 *   POST {baseUrl}/v1/audience   Authorization: Bearer {apiKey}
 *   → 200 {people: [...], nextCursor}
 *
 * Failures are classified by status alone: 401/403 credentials (final), 400/404/422 invalid
 * input (final), 429 rate limited (retry after `Retry-After`), 408/5xx, network errors and
 * timeouts transient (retry with backoff).
 */
import {
  OutboundBlockedError,
  OutboundInvalidRequestError,
  OutboundInvalidResponseError,
  OutboundTooLargeError,
  outboundFetch,
  providerErrorReason,
} from '../../infra/outbound.js';
import {
  ListeningProviderError,
  type ListeningPage,
  type ListeningPerson,
  type ListeningProvider,
  type ListeningQuery,
  type ListeningSubject,
} from './listening.js';

export interface HttpListeningOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Private addresses the operator lets outbound calls reach (OUTBOUND_ALLOW_LIST), checked at connect time. */
  allowList: string[];
}

/** Largest page accepted from the provider. */
const MAX_PAGE_BYTES = 20 * 1024 * 1024;

/** Request body of `POST /v1/audience` (see docs/providers/listening.md). */
export interface AudienceRequest {
  sourceType: ListeningQuery['sourceType'];
  sourceIdentifier: string | null;
  filters: { keyword?: string; authorTitle?: string; jobTitle?: string; jobLocation?: string; jobType?: string };
  postedAfter: string;
  postedBefore: string;
  cursor: string | null;
  limit: number;
}

const FILTER_KEYS = ['keyword', 'authorTitle', 'jobTitle', 'jobLocation', 'jobType'] as const;

export function audienceRequest(query: ListeningQuery, page: { cursor: string | null; limit: number }): AudienceRequest {
  const filters: AudienceRequest['filters'] = {};
  for (const k of FILTER_KEYS) {
    const v = query.sourceMeta[k];
    if (typeof v === 'string' && v.trim()) filters[k] = v.trim();
  }
  return {
    sourceType: query.sourceType,
    sourceIdentifier: query.sourceIdentifier,
    filters,
    postedAfter: query.since,
    postedBefore: query.until,
    cursor: page.cursor,
    limit: page.limit,
  };
}

/** `Retry-After` in seconds or as an HTTP date → milliseconds (at least 1 s, at most 15 min). */
export function parseRetryAfter(value: string | null, now = Date.now()): number {
  const fallback = 30_000;
  if (!value) return fallback;
  const v = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return fallback;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 1000), 15 * 60_000);
}

/** The provider's short JSON reason (never its raw body: it reaches the source's refresh error). */
async function providerMessage(res: Response): Promise<string> {
  return providerErrorReason(res.status, await res.text().catch(() => ''));
}

const s = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);

function parsePerson(raw: unknown, i: number): ListeningPerson {
  if (typeof raw !== 'object' || raw === null) throw new Error(`people[${i}] is not an object`);
  const r = raw as Record<string, unknown>;
  const pronet = s(r.pronet);
  if (!pronet) throw new Error(`people[${i}].pronet is missing`);
  const it = (r.interaction ?? {}) as Record<string, unknown>;
  const company = typeof r.company === 'object' && r.company !== null ? (r.company as Record<string, unknown>) : null;
  return {
    pronet,
    firstName: s(r.firstName),
    lastName: s(r.lastName),
    fullName: s(r.fullName),
    jobTitle: s(r.jobTitle),
    headline: s(r.headline),
    location: s(r.location),
    emails: Array.isArray(r.emails) ? r.emails.filter((e): e is string => typeof e === 'string') : [],
    company: company
      ? {
          companyName: s(company.companyName),
          companyPronet: s(company.companyPronet),
          companyWebsite: s(company.companyWebsite),
          companyIndustry: s(company.companyIndustry),
          companyHeadcount: s(company.companyHeadcount),
        }
      : null,
    interaction: {
      type: s(it.type) ?? 'unknown',
      postUrl: s(it.postUrl),
      occurredAt: s(it.occurredAt) ?? new Date(0).toISOString(),
    },
  };
}

/** The optional `subject` of an answer: a name (≤ 200 chars) and an http(s) picture URL; anything else is ignored. */
function parseSubject(v: unknown): ListeningSubject | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const name = typeof o.name === 'string' && o.name.trim() && o.name.length <= 200 ? o.name.trim() : null;
  const image = typeof o.profileImageUrl === 'string' && o.profileImageUrl.length <= 2048 && /^https?:\/\/[^\s]+$/i.test(o.profileImageUrl) ? o.profileImageUrl : null;
  return name || image ? { ...(name ? { name } : {}), ...(image ? { profileImageUrl: image } : {}) } : null;
}

export function createHttpListeningProvider(opts: HttpListeningOptions): ListeningProvider {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/v1/audience`;
  return {
    name: 'http',
    async fetchAudience(query, page): Promise<ListeningPage> {
      let res: Response;
      try {
        // Through the filtering agent: the provider's address is checked when the socket connects.
        res = await outboundFetch(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${opts.apiKey}`,
            'content-type': 'application/json',
            accept: 'application/json',
          },
          body: JSON.stringify(audienceRequest(query, page)),
          timeoutMs: opts.timeoutMs,
          maxBytes: MAX_PAGE_BYTES,
          allowList: opts.allowList,
        });
      } catch (e) {
        const err = e as Error;
        if (err instanceof OutboundTooLargeError) throw new ListeningProviderError('transient', `listening provider answered more than ${MAX_PAGE_BYTES} bytes`);
        // Operator configuration a retry cannot fix: an address not allowed, a request HTTP cannot carry.
        if (err instanceof OutboundBlockedError) throw new ListeningProviderError('invalid_input', `listening provider address is not allowed: ${err.message}`);
        if (err instanceof OutboundInvalidRequestError) throw new ListeningProviderError('invalid_input', `listening provider request cannot be sent: ${err.message}`);
        if (err instanceof OutboundInvalidResponseError) throw new ListeningProviderError('transient', `listening provider ${err.message}`);
        const timedOut = err.name === 'TimeoutError' || err.name === 'AbortError';
        throw new ListeningProviderError(
          'transient',
          // No socket error code in the message (it would tell a closed port from an unreachable host).
          timedOut ? `listening provider did not answer within ${opts.timeoutMs} ms` : 'listening provider unreachable: the connection to the server failed',
        );
      }
      if (res.status === 401 || res.status === 403) {
        throw new ListeningProviderError('credentials', `listening provider refused the credentials (${res.status}): ${await providerMessage(res)}`, undefined, res.status);
      }
      if (res.status === 429) {
        const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
        throw new ListeningProviderError('rate_limited', `listening provider rate limited the request (429): ${await providerMessage(res)}`, retryAfterMs, 429);
      }
      if (res.status === 408 || res.status >= 500) {
        throw new ListeningProviderError('transient', `listening provider failed (${res.status}): ${await providerMessage(res)}`, undefined, res.status);
      }
      if (res.status !== 200) {
        throw new ListeningProviderError('invalid_input', `listening provider rejected the query (${res.status}): ${await providerMessage(res)}`, undefined, res.status);
      }
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        throw new ListeningProviderError('transient', 'listening provider answered with a body that is not JSON', undefined, 200);
      }
      const b = body as { people?: unknown; nextCursor?: unknown; subject?: unknown };
      if (!Array.isArray(b.people)) throw new ListeningProviderError('transient', 'listening provider answer has no people array', undefined, 200);
      try {
        return {
          people: b.people.map(parsePerson),
          nextCursor: typeof b.nextCursor === 'string' && b.nextCursor ? b.nextCursor : null,
          subject: parseSubject(b.subject),
        };
      } catch (e) {
        throw new ListeningProviderError('transient', `listening provider answer is malformed: ${(e as Error).message}`, undefined, 200);
      }
    },
  };
}
