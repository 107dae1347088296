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
  ListeningProviderError,
  type ListeningPage,
  type ListeningPerson,
  type ListeningProvider,
  type ListeningQuery,
} from './listening.js';

export interface HttpListeningOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Injected for tests; defaults to the global fetch. */
  fetchImpl?: typeof fetch;
}

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

async function providerMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const j = JSON.parse(text) as { error?: { message?: string; code?: string } | string; message?: string };
    if (typeof j.error === 'object' && j.error?.message) return j.error.code ? `${j.error.code}: ${j.error.message}` : j.error.message;
    if (typeof j.error === 'string') return j.error;
    if (j.message) return j.message;
  } catch {
    /* not JSON */
  }
  return text.slice(0, 300) || res.statusText || `HTTP ${res.status}`;
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

export function createHttpListeningProvider(opts: HttpListeningOptions): ListeningProvider {
  const doFetch = opts.fetchImpl ?? fetch;
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/v1/audience`;
  return {
    name: 'http',
    async fetchAudience(query, page): Promise<ListeningPage> {
      let res: Response;
      try {
        res = await doFetch(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${opts.apiKey}`,
            'content-type': 'application/json',
            accept: 'application/json',
          },
          body: JSON.stringify(audienceRequest(query, page)),
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
      } catch (e) {
        const err = e as Error;
        const timedOut = err.name === 'TimeoutError' || err.name === 'AbortError';
        throw new ListeningProviderError(
          'transient',
          timedOut ? `listening provider did not answer within ${opts.timeoutMs} ms` : `listening provider unreachable: ${err.message}`,
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
      } catch (e) {
        throw new ListeningProviderError('transient', `listening provider answered with a body that is not JSON: ${(e as Error).message}`, undefined, 200);
      }
      const b = body as { people?: unknown; nextCursor?: unknown };
      if (!Array.isArray(b.people)) throw new ListeningProviderError('transient', 'listening provider answer has no people array', undefined, 200);
      try {
        return {
          people: b.people.map(parsePerson),
          nextCursor: typeof b.nextCursor === 'string' && b.nextCursor ? b.nextCursor : null,
        };
      } catch (e) {
        throw new ListeningProviderError('transient', `listening provider answer is malformed: ${(e as Error).message}`, undefined, 200);
      }
    },
  };
}
