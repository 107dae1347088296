/**
 * Social-listening providers (DESIGN §6): who engaged with a profile, a company page or a post,
 * who wrote about a keyword, who posted a job. One interface, two adapters:
 * - `dataset` (listeningDataset.ts) answers from the discovery dataset tables (`ds_posts`,
 *   `ds_people`, `ds_companies`);
 * - `http` (listeningHttp.ts) speaks the JSON-over-HTTP contract of docs/providers/listening.md.
 *
 * Which one runs is configuration: `LISTENING_PROVIDER=dataset|http` (default `dataset`), with
 * `LISTENING_BASE_URL`, `LISTENING_API_KEY`, `LISTENING_TIMEOUT_MS` for `http`.
 *
 * Adapters throw `ListeningProviderError` with a kind; the activity turns the kind alone into
 * a retry decision (credentials / invalid input: final; rate limited: retry after the provider's
 * `Retry-After`; transient: retry with backoff).
 */
import type { ListeningSourceType } from '../../domain/sourceRules.js';

export interface ListeningQuery {
  sourceType: ListeningSourceType;
  /** Profile / company / post URL for the URL types; null for keyword and job-posting sources. */
  sourceIdentifier: string | null;
  /** keyword, authorTitle (keyword search); jobTitle, jobLocation, jobType (job posting). */
  sourceMeta: Record<string, unknown>;
  /** Window of the pull: activity posted in [since, until). ISO 8601. */
  since: string;
  until: string;
}

export interface ListeningCompany {
  companyName?: string | null;
  companyPronet?: string | null;
  companyWebsite?: string | null;
  companyIndustry?: string | null;
  companyHeadcount?: string | null;
}

/** One person of the audience, with the most recent interaction that put them there. */
export interface ListeningPerson {
  /** Profile URL: the identity key of the contact. */
  pronet: string;
  firstName?: string | null;
  lastName?: string | null;
  fullName?: string | null;
  jobTitle?: string | null;
  headline?: string | null;
  location?: string | null;
  emails?: string[];
  company?: ListeningCompany | null;
  interaction: {
    /** `post` (authored), `like`, `comment`, `share`, `job_posting`, … */
    type: string;
    postUrl: string | null;
    occurredAt: string;
  };
}

/** What a provider knows of the listened-to profile, page or post author (display fields of the source). */
export interface ListeningSubject {
  name?: string | null;
  profileImageUrl?: string | null;
}

export interface ListeningPage {
  people: ListeningPerson[];
  /** Opaque; null on the last page. */
  nextCursor: string | null;
  /** Optional, on the first page: the source's subject (its name and picture), when known. */
  subject?: ListeningSubject | null;
}

export interface ListeningProvider {
  readonly name: 'dataset' | 'http';
  fetchAudience(query: ListeningQuery, page: { cursor: string | null; limit: number }): Promise<ListeningPage>;
}

export type ListeningErrorKind = 'credentials' | 'invalid_input' | 'rate_limited' | 'transient';

export class ListeningProviderError extends Error {
  constructor(
    readonly kind: ListeningErrorKind,
    message: string,
    /** For `rate_limited`: how long the provider asked us to wait. */
    readonly retryAfterMs?: number,
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'ListeningProviderError';
  }
}

export interface ListeningConfig {
  provider: 'dataset' | 'http';
  http: { baseUrl: string | null; apiKey: string | null; timeoutMs: number };
}

/** Reads the listening configuration (documented in docs/providers/listening.md). */
export function listeningConfigFromEnv(env: NodeJS.ProcessEnv): ListeningConfig {
  const provider = (env.LISTENING_PROVIDER ?? 'dataset').trim().toLowerCase();
  if (provider !== 'dataset' && provider !== 'http') {
    throw new Error(`LISTENING_PROVIDER must be 'dataset' or 'http', not '${provider}'`);
  }
  const timeout = Number(env.LISTENING_TIMEOUT_MS ?? '');
  return {
    provider,
    http: {
      baseUrl: env.LISTENING_BASE_URL?.trim().replace(/\/+$/, '') || null,
      apiKey: env.LISTENING_API_KEY?.trim() || null,
      timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : 30_000,
    },
  };
}
