/**
 * Every outbound HTTP call of the service: webhook targets and media imports (caller-supplied
 * URLs), enrichment and listening providers, the social networks and the upload URLs they hand
 * back (`outboundFetch`; Node's global fetch cannot take the filtering agent). Only public addresses
 * may be reached: the check runs after DNS resolution, on the socket actually connected (so DNS
 * rebinding cannot slip past) and again on every redirect. Private, loopback, link-local and
 * other special ranges are refused unless the operator allow-list (OUTBOUND_ALLOW_LIST: IPs or
 * CIDRs) names them; tests use that to reach their local fake servers. IPv6 forms that embed an
 * IPv4 address (IPv4-compatible `::a.b.c.d`, IPv4-mapped, NAT64, 6to4, Teredo) are refused too:
 * a tunnel or translator may deliver them to the embedded, possibly private, IPv4 address.
 * A connection that fails answers one message whatever the socket said (refused, unreachable,
 * reset): telling them apart would make the service a port scanner.
 */
import http from 'node:http';
import https from 'node:https';
import dns from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { useAgent } from 'request-filtering-agent';

export class OutboundBlockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundBlockedError';
  }
}

function allowed(address: string, allowList: string[]): boolean {
  const addr = ipaddr.process(address);
  for (const entry of allowList) {
    try {
      if (entry.includes('/')) {
        const cidr = ipaddr.parseCIDR(entry);
        if (addr.kind() === cidr[0].kind() && addr.match(cidr)) return true;
      } else if (ipaddr.process(entry).toString() === addr.toString()) return true;
    } catch {
      /* a hostname entry is matched by name in checkOutboundUrl */
    }
  }
  // `::/96` (IPv4-compatible, deprecated by RFC 4291) is "unicast" to ipaddr.js; the other
  // embedding forms (ipv4Mapped, rfc6052, rfc6145, 6to4, teredo) have ranges of their own.
  if (addr.kind() === 'ipv6' && addr.match(IPV4_COMPATIBLE)) return false;
  return addr.range() === 'unicast';
}

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * `dns.lookup` for the request's sockets: refuses a resolved address `allowed` refuses (DNS
 * rebinding to `::a9fe:a9fe`), as the filtering agent does for ipaddr.js's ranges.
 */
function guardedLookup(allowList: string[]): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, cb: (err: Error | null, address?: unknown, family?: number) => void) =>
    dns.lookup(hostname, options, (err, address, family) => {
      if (err) return cb(err);
      const all = Array.isArray(address) ? address : [{ address, family }];
      const bad = all.find((a) => !allowed(a.address as string, allowList));
      if (bad) return cb(new Error(`DNS lookup ${bad.address} (host ${hostname}) is not allowed: a private or reserved address`));
      cb(null, address, family);
    })) as LookupFunction;
}

/** Throws `OutboundBlockedError` unless `raw` is http(s) and resolves only to allowed addresses. */
export async function checkOutboundUrl(raw: string, allowList: string[]): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundBlockedError('is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundBlockedError('must be an http or https URL');
  if (url.username || url.password) throw new OutboundBlockedError('must not carry credentials');
  if (url.port === '0') throw new OutboundBlockedError('must not name port 0 (nothing listens there)');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw new OutboundBlockedError(`host ${host} does not resolve`);
    }
  }
  const bad = addresses.find((a) => !allowed(a, allowList));
  if (bad) throw new OutboundBlockedError(`resolves to ${bad}, a private or reserved address`);
  return url;
}

/** The social networks' official API origins: what `PROVIDER_BASE_URL_ALLOW_LIST` allows by default. */
export const OFFICIAL_PROVIDER_ORIGINS = ['https://api.x.com', 'https://api.twitter.com', 'https://api.linkedin.com'];

/**
 * The API base URLs a tenant may give an integration (`apiBaseUrl`): the operator's
 * `PROVIDER_BASE_URL_ALLOW_LIST` (comma-separated origins such as `https://api.x.com`, or hosts /
 * IPs, optionally with `:port`, matched on any scheme), by default the official origins only.
 */
export function providerBaseUrlAllowList(env: NodeJS.ProcessEnv): string[] {
  const raw = env.PROVIDER_BASE_URL_ALLOW_LIST;
  if (raw === undefined) return OFFICIAL_PROVIDER_ORIGINS;
  return raw.split(',').map((e) => e.trim()).filter(Boolean);
}

/** Whether `raw` is an http(s) URL whose origin or host the allow-list names. */
export function providerBaseUrlAllowed(raw: string, allowList: string[]): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const sameIp = (a: string, b: string) => ipaddr.isValid(a) && ipaddr.isValid(b) && ipaddr.process(a).toString() === ipaddr.process(b).toString();
  return allowList.some((entry) => {
    const e = entry.toLowerCase();
    if (e.includes('://')) {
      try {
        return new URL(e).origin === url.origin;
      } catch {
        return false;
      }
    }
    if (ipaddr.isValid(e)) return sameIp(e, host);
    const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(e);
    if (!m) return false;
    const [, h, port] = m;
    if (port && port !== (url.port || (url.protocol === 'https:' ? '443' : '80'))) return false;
    return h === host || sameIp(h!, host);
  });
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** The body is larger than the caller accepts (the transfer is cut off there). */
export class OutboundTooLargeError extends OutboundBlockedError {
  constructor(
    readonly maxBytes: number,
    /** The status the server answered with before its body grew too large. */
    readonly status: number | null = null,
  ) {
    super(`response exceeds ${maxBytes} bytes`);
    this.name = 'OutboundTooLargeError';
  }
}

/**
 * The request cannot be sent as given (a header name or value HTTP cannot carry, an invalid
 * method): nothing was sent, and sending it again will never succeed.
 */
export class OutboundInvalidRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundInvalidRequestError';
  }
}

/**
 * The connection failed or broke (refused, unreachable, reset, closed early): one message
 * whatever the socket said. The socket's error stays in `cause` (and its code in `code`) for
 * classification and operator logs, never for an API answer.
 */
export class OutboundConnectionError extends Error {
  readonly code: string | undefined;
  constructor(cause: Error) {
    super('the connection to the server failed', { cause });
    this.name = 'OutboundConnectionError';
    this.code = (cause as NodeJS.ErrnoException).code;
  }
}

/** The exchange did not finish within its deadline (`name` matches fetch's `TimeoutError`). */
export class OutboundTimeoutError extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

export interface SafeRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Deadline of the whole exchange, redirects and body included (default 10 s). */
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** `manual` answers a 3xx as it is instead of following it (default `follow`). */
  redirect?: 'follow' | 'manual';
  /** Aborts the exchange (e.g. the activity was cancelled). */
  signal?: AbortSignal;
  allowList: string[];
}

/** One HTTP exchange through the filtering agent; follows redirects, re-checking each hop. */
export async function safeRequest(raw: string, opts: SafeRequestOptions): Promise<SafeResponse> {
  let current = raw;
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  const maxRedirects = opts.maxRedirects ?? 3;
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const url = await checkOutboundUrl(current, opts.allowList);
    const res = await requestOnce(url, opts, deadline);
    const location = res.headers.location;
    if (opts.redirect !== 'manual' && res.status >= 300 && res.status < 400 && location) {
      if (maxRedirects === 0) throw new OutboundBlockedError(`answered a redirect (${res.status}), which is not followed`);
      try {
        current = new URL(location, url).toString();
      } catch {
        throw new OutboundBlockedError('redirects to an invalid URL');
      }
      continue;
    }
    return res;
  }
  throw new OutboundBlockedError(`redirected more than ${maxRedirects} times`);
}

/**
 * One request/response. Every way it can end (the request cannot be built, a socket or
 * response error, the body ending or growing too large, the deadline, an abort) settles the
 * promise exactly once and clears the timer; the timer exists only once the request does.
 */
function requestOnce(url: URL, opts: SafeRequestOptions, deadline: number): Promise<SafeResponse> {
  const allowIPAddressList = opts.allowList.filter((e) => ipaddr.isValid(e.split('/')[0]!));
  const lib = url.protocol === 'https:' ? https : http;
  const maxBytes = opts.maxBytes ?? 10 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let req: http.ClientRequest | undefined;
    let settled = false;
    const onAbort = () => finish(opts.signal?.reason instanceof Error ? opts.signal.reason : new Error('request aborted'));
    function finish(err: Error | null, value?: SafeResponse) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (err) {
        req?.destroy();
        reject(err);
      } else resolve(value!);
    }
    if (opts.signal?.aborted) return onAbort();
    try {
      const agent = useAgent(url.toString(), { allowIPAddressList, keepAlive: false });
      req = lib.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent, lookup: guardedLookup(opts.allowList) });
    } catch (e) {
      // Node validates header names/values and the method synchronously, before any I/O.
      return finish(new OutboundInvalidRequestError(`request cannot be sent: ${(e as Error).message}`));
    }
    const r = req;
    timer = setTimeout(() => finish(new OutboundTimeoutError(opts.timeoutMs ?? 10_000)), Math.max(1, deadline - Date.now()));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    r.on('error', (e) => finish(/is not allowed/.test(e.message) ? new OutboundBlockedError(e.message) : new OutboundConnectionError(e)));
    r.on('response', (res) => {
      const declared = Number(res.headers['content-length']);
      if (declared > maxBytes) return finish(new OutboundTooLargeError(maxBytes, res.statusCode ?? null));
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) return finish(new OutboundTooLargeError(maxBytes, res.statusCode ?? null));
        chunks.push(c);
      });
      res.on('end', () => finish(null, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', (e) => finish(new OutboundConnectionError(e)));
      res.on('close', () => finish(new OutboundConnectionError(new Error('connection closed before the response ended'))));
    });
    try {
      if (opts.body) r.write(opts.body);
      r.end();
    } catch (e) {
      finish(new OutboundInvalidRequestError(`request cannot be sent: ${(e as Error).message}`));
    }
  });
}

/** Statuses whose answer has no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export interface OutboundFetchInit extends Omit<SafeRequestOptions, 'body'> {
  body?: string | Buffer | FormData;
}

/**
 * The fetch-like face of `safeRequest` for provider adapters: the same filtering agent and
 * deadline, the whole (bounded) body buffered, answered as a WHATWG `Response`. Node's global
 * fetch cannot take an `http.Agent`, so it would skip the connect-time address check.
 */
export async function outboundFetch(url: string, init: OutboundFetchInit): Promise<Response> {
  let { body, headers } = init;
  if (body instanceof FormData) {
    // Let the platform encode the multipart body and its boundary, then send the bytes.
    const encoded = new Request('http://form.invalid/', { method: 'POST', body });
    headers = { ...headers, 'content-type': encoded.headers.get('content-type')! };
    body = Buffer.from(await encoded.arrayBuffer());
  }
  const res = await safeRequest(url, { ...init, headers, body, redirect: init.redirect ?? 'manual', maxRedirects: init.maxRedirects ?? 0 });
  if (res.status < 200 || res.status > 599) throw new OutboundInvalidResponseError(`answered with HTTP status ${res.status}`);
  const out = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : [value ?? '']) {
      try {
        out.append(name, v);
      } catch {
        /* a header value Headers refuses is dropped, not fatal */
      }
    }
  }
  return new Response(NULL_BODY_STATUSES.has(res.status) ? null : res.body, { status: res.status, headers: out });
}

/** The server answered something that is not a usable HTTP response. */
export class OutboundInvalidResponseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundInvalidResponseError';
  }
}

/**
 * A third party's own words, safe to show an API user: control characters and runs of white
 * space collapsed, at most `max` characters. Null when nothing is left.
 */
export function shortReason(text: unknown, max = 200): string | null {
  if (typeof text !== 'string') return null;
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ').trim();
  if (!clean) return null;
  return clean.length > max ? `${clean.slice(0, max - 1)}\u2026` : clean;
}

/**
 * The reason a provider gives in a JSON error body (`{error: {code, message}}`, `{error}`,
 * `{message}`, `{code, message}`, `{title, detail}`), shortened; else the HTTP reason phrase.
 * A body that is not JSON is never passed on: it may be an HTML page, a stack trace or anything.
 */
export function providerErrorReason(status: number, text: string): string {
  let reason: string | null = null;
  try {
    const j = JSON.parse(text) as Record<string, unknown> | null;
    if (j && typeof j === 'object') {
      const err = j.error;
      const pick = (o: Record<string, unknown>) =>
        [o.code, o.message ?? o.detail ?? o.title].filter((v) => typeof v === 'string' && v).join(': ');
      if (err && typeof err === 'object') reason = pick(err as Record<string, unknown>);
      else if (typeof err === 'string') reason = err;
      if (!reason) reason = pick(j);
    }
  } catch {
    /* not JSON */
  }
  return shortReason(reason) ?? http.STATUS_CODES[status] ?? `HTTP ${status}`;
}
