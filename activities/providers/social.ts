/**
 * What every social network adapter (microblog = X API v2, pronet/pronetPage = LinkedIn REST)
 * offers the publishing activities, the typed failures they throw, and the one HTTP helper that
 * classifies network outcomes. The workflow decides from the failure kind alone:
 *
 *   invalid_input        the network refused the content (4xx): final, no retry
 *   credentials_revoked  401/403: final, no retry, the integration needs reconnecting
 *   rate_limited         429: the publish workflow waits the network's reset on a timer
 *   transient            5xx, 408, connection refused: retried with backoff
 *   outcome_unknown      a create call timed out after the request was sent and a look-up could
 *                        not find the object: final (never blindly repeated)
 */
import { STATUS_CODES } from 'node:http';
import type { Provider } from '../../domain/social.js';
import { retryAfterMs } from '../../domain/publishing.js';
import { OutboundBlockedError, OutboundConnectionError, OutboundInvalidRequestError, OutboundTooLargeError, outboundFetch, shortReason } from '../../infra/outbound.js';

export { shortReason };

export const FAILURE_KINDS = ['invalid_input', 'credentials_revoked', 'rate_limited', 'transient', 'outcome_unknown'] as const;
export type ProviderFailureKind = (typeof FAILURE_KINDS)[number];

export class ProviderFailure extends Error {
  constructor(
    readonly kind: ProviderFailureKind,
    message: string,
    readonly opts: {
      status?: number;
      /** Activity retry hint (clamped to 15 min). */
      retryAfterMs?: number;
      /** 429: how long the network asks to wait, unclamped (the workflow's timer, capped by config). */
      rateLimitWaitMs?: number;
      code?: string;
    } = {},
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
  /** Private addresses the operator lets outbound calls reach (OUTBOUND_ALLOW_LIST); checked at connect time. */
  allowList: string[];
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

/** Largest answer a network call may return (media ids, post lists, error bodies). */
const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

/** The path of `url` for messages (never its query, which may hold ids or tokens). */
function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * Sends one request through the outbound filtering agent (the address is checked when the socket
 * connects, the upload URLs a network hands back included). Network errors become typed
 * failures: refused/unresolvable before sending → `transient`; an address the operator does not
 * allow or a request HTTP cannot carry → `invalid_input` (nothing was sent, a retry cannot
 * help); a timeout, reset or oversized answer after sending → `outcome_unknown` for creating
 * calls, `transient` for the rest.
 */
export async function httpCall(a: Pick<SocialAccount, 'allowList'>, url: string, opts: HttpOptions): Promise<Response> {
  const what = `${opts.method} ${pathOf(url)}`;
  try {
    return await outboundFetch(url, {
      method: opts.method,
      headers: opts.headers,
      body: opts.body,
      timeoutMs: opts.timeoutMs ?? providerTimeoutMs(),
      maxBytes: MAX_RESPONSE_BYTES,
      redirect: 'manual',
      allowList: a.allowList,
    });
  } catch (e) {
    if (e instanceof OutboundBlockedError && !(e instanceof OutboundTooLargeError)) {
      throw new ProviderFailure('invalid_input', `${what}: the address is not allowed (${e.message})`, { code: 'provider_address_not_allowed' });
    }
    if (e instanceof OutboundInvalidRequestError) throw new ProviderFailure('invalid_input', `${what}: ${e.message}`, { code: 'provider_request_invalid' });
    const code = errorCode(e);
    const name = (e as Error)?.name;
    // The message names no socket error code: a tenant's failed post must not tell a closed port from an unreachable host.
    if (code && NOT_SENT_CODES.has(code)) throw new ProviderFailure('transient', `${what}: the connection to the server failed`);
    const how = name === 'TimeoutError' || name === 'AbortError' ? 'timed out' : `failed (${e instanceof OutboundConnectionError ? e.message : 'network error'})`;
    throw new ProviderFailure(opts.creates ? 'outcome_unknown' : 'transient', `${what} ${how}`);
  }
}

/**
 * Classifies a non-2xx answer by status. `message` is the network's own reason, taken from its
 * JSON error fields (shown on the failed post, shortened; never the raw body).
 */
export function failureFromStatus(res: Response, message: string): ProviderFailure {
  const s = res.status;
  const text = `${s} ${shortReason(message) ?? STATUS_CODES[s] ?? 'request failed'}`;
  if (s === 401 || s === 403) return new ProviderFailure('credentials_revoked', text, { status: s });
  if (s === 429) {
    const retryAfter = res.headers.get('retry-after');
    const reset = res.headers.get('x-rate-limit-reset');
    return new ProviderFailure('rate_limited', text, {
      status: s,
      retryAfterMs: retryAfterMs(retryAfter, reset),
      rateLimitWaitMs: retryAfterMs(retryAfter, reset, Date.now(), Number.MAX_SAFE_INTEGER),
    });
  }
  if (s === 408 || s >= 500) {
    const ra = res.headers.get('retry-after');
    return new ProviderFailure('transient', text, { status: s, ...(ra ? { retryAfterMs: retryAfterMs(ra, null) } : {}) });
  }
  return new ProviderFailure('invalid_input', text, { status: s });
}

/** Reads a JSON object body; an empty body, invalid JSON or a non-object is `{}` (never raw text). */
export async function jsonBody(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text().catch(() => '');
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
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
