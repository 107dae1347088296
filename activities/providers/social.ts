/**
 * What every social network adapter (microblog = X API v2, pronet/pronetPage = LinkedIn REST)
 * offers the publishing activities, the typed failures they throw, and the one HTTP helper that
 * classifies network outcomes. The workflow decides from the failure kind alone:
 *
 *   invalid_input        the network refused the content (4xx): final, no retry
 *   credentials_revoked  401/403: final, no retry, the integration needs reconnecting
 *   rate_limited         429: retried after `Retry-After`
 *   transient            5xx, 408, connection refused: retried with backoff
 *   outcome_unknown      a create call timed out after the request was sent and a look-up could
 *                        not find the object: final (never blindly repeated)
 */
import type { Provider } from '../../domain/social.js';
import { retryAfterMs } from '../../domain/publishing.js';

export const FAILURE_KINDS = ['invalid_input', 'credentials_revoked', 'rate_limited', 'transient', 'outcome_unknown'] as const;
export type ProviderFailureKind = (typeof FAILURE_KINDS)[number];

export class ProviderFailure extends Error {
  constructor(
    readonly kind: ProviderFailureKind,
    message: string,
    readonly opts: { status?: number; retryAfterMs?: number; code?: string } = {},
  ) {
    super(message);
    this.name = 'ProviderFailure';
  }
}

/** The account a call acts as (decrypted credentials stay in memory only). */
export interface SocialAccount {
  provider: Provider;
  /** X user id, or the LinkedIn person/organization id (without the `urn:li:` prefix). */
  externalAccountId: string;
  accessToken: string;
  /** Override of the network's base URL (tests point it at a fake server). */
  apiBaseUrl: string | null;
}

/** A media file read from the object store in ranges (large videos are never held whole). */
export interface MediaSource {
  fileName: string;
  contentType: string;
  size: number;
  read(offset: number, length: number): Promise<Buffer>;
}

/** Something created on the network. */
export interface Published {
  externalId: string;
  externalUrl: string;
}

/**
 * One remote create. `post`: a top-level post. `reply`: the next item of a thread (microblog: a
 * reply to `parentExternalId`; pronet: a comment on it). `comment`: a comment on someone else's
 * post (`parentExternalId` is the thread URN). `reshare`: a repost of `parentExternalId`.
 */
export interface CreateOp {
  type: 'post' | 'reply' | 'comment' | 'reshare';
  text: string;
  media: MediaSource[];
  parentExternalId?: string;
  /** Called right before the request that creates the object (after media uploads). */
  beforeSend?: () => Promise<void>;
}

export interface SocialAdapter {
  /** Creates the object; a timeout after sending becomes a look-up, then `outcome_unknown`. */
  create(account: SocialAccount, op: CreateOp): Promise<Published>;
  /** Looks for an object `op` would have created at or after `since` (for unknown outcomes). */
  find(account: SocialAccount, op: CreateOp, since: Date): Promise<Published | null>;
}

export interface HttpOptions {
  method: string;
  headers?: Record<string, string>;
  body?: string | Buffer | FormData;
  /** A call that creates something: a timeout after sending is `outcome_unknown`, not `transient`. */
  creates?: boolean;
  timeoutMs?: number;
}

export const DEFAULT_PROVIDER_TIMEOUT_MS = 30_000;

/** Per-call timeout of provider requests (`PROVIDER_TIMEOUT_MS`, default 30 s). */
export function providerTimeoutMs(): number {
  const v = Number(process.env.PROVIDER_TIMEOUT_MS);
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_PROVIDER_TIMEOUT_MS;
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function errorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Sends one request. Network errors become typed failures: refused/unresolvable before sending →
 * `transient`; a timeout or reset after sending → `outcome_unknown` for creating calls,
 * `transient` for the rest.
 */
export async function httpCall(url: string, opts: HttpOptions): Promise<Response> {
  try {
    return await fetch(url, {
      method: opts.method,
      headers: opts.headers,
      body: opts.body as RequestInit['body'],
      signal: AbortSignal.timeout(opts.timeoutMs ?? providerTimeoutMs()),
      redirect: 'manual',
    });
  } catch (e) {
    const code = errorCode(e);
    const name = (e as Error)?.name;
    if (code && NOT_SENT_CODES.has(code)) throw new ProviderFailure('transient', `${opts.method} ${new URL(url).pathname}: ${code}`);
    const what = name === 'TimeoutError' || name === 'AbortError' ? 'timed out' : `failed (${code ?? (e as Error)?.message ?? 'network error'})`;
    throw new ProviderFailure(opts.creates ? 'outcome_unknown' : 'transient', `${opts.method} ${new URL(url).pathname} ${what}`);
  }
}

/**
 * Classifies a non-2xx answer by status. `message` is the network's own reason (shown on the
 * failed post).
 */
export function failureFromStatus(res: Response, message: string): ProviderFailure {
  const s = res.status;
  const text = `${s} ${message}`.trim();
  if (s === 401 || s === 403) return new ProviderFailure('credentials_revoked', text, { status: s });
  if (s === 429) {
    return new ProviderFailure('rate_limited', text, {
      status: s,
      retryAfterMs: retryAfterMs(res.headers.get('retry-after'), res.headers.get('x-rate-limit-reset')),
    });
  }
  if (s === 408 || s >= 500) {
    const ra = res.headers.get('retry-after');
    return new ProviderFailure('transient', text, { status: s, ...(ra ? { retryAfterMs: retryAfterMs(ra, null) } : {}) });
  }
  return new ProviderFailure('invalid_input', text, { status: s });
}

/** Reads a JSON body (empty or invalid JSON → `{}`), for error messages and results. */
export async function jsonBody(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text().catch(() => '');
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return { message: text.slice(0, 500) };
  }
}

/**
 * Creates once: on `outcome_unknown` the adapter looks for the object before giving up, so a
 * call whose outcome is unknown is never repeated blindly.
 */
export async function createOnce(adapter: SocialAdapter, account: SocialAccount, op: CreateOp, since: Date): Promise<Published> {
  try {
    return await adapter.create(account, op);
  } catch (e) {
    if (!(e instanceof ProviderFailure) || e.kind !== 'outcome_unknown') throw e;
    return reconcile(adapter, account, op, since, e.message);
  }
}

/** After an unknown outcome: the object if the network has it, else a final `outcome_unknown`. */
export async function reconcile(adapter: SocialAdapter, account: SocialAccount, op: CreateOp, since: Date, why: string): Promise<Published> {
  let found: Published | null;
  try {
    found = await adapter.find(account, op, since);
  } catch (e) {
    throw new ProviderFailure('outcome_unknown', `${why}; the look-up failed too (${(e as Error).message})`, { code: 'publish_outcome_unknown' });
  }
  if (found) return found;
  throw new ProviderFailure('outcome_unknown', `${why}; the network shows no such object, so it is not sent again`, { code: 'publish_outcome_unknown' });
}
