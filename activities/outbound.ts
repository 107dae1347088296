/**
 * Outbound HTTP to caller-supplied URLs (webhook targets, media imports). Only public addresses
 * may be reached: the check runs after DNS resolution, on the socket actually connected (so DNS
 * rebinding cannot slip past) and again on every redirect. Private, loopback, link-local and
 * other special ranges are refused unless the operator allow-list (OUTBOUND_ALLOW_LIST: IPs or
 * CIDRs) names them; tests use that to reach their local fake servers.
 */
import http from 'node:http';
import https from 'node:https';
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { useAgent } from 'request-filtering-agent';
import { ApiError } from '../domain/errors.js';

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
  return addr.range() === 'unicast';
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

/** API-side check of a URL field: 400 naming the field. */
export async function assertOutboundUrl(raw: string, allowList: string[], field: string): Promise<void> {
  try {
    await checkOutboundUrl(raw, allowList);
  } catch (e) {
    if (e instanceof OutboundBlockedError) throw new ApiError(400, 'url_not_allowed', `${field}: ${e.message}`, [{ path: field, message: e.message }]);
    throw e;
  }
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface SafeRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Deadline of the whole exchange, redirects and body included (default 10 s). */
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  allowList: string[];
}

/** One HTTP exchange through the filtering agent; follows redirects, re-checking each hop. */
export async function safeRequest(raw: string, opts: SafeRequestOptions): Promise<SafeResponse> {
  let current = raw;
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  for (let hop = 0; hop <= (opts.maxRedirects ?? 3); hop++) {
    const url = await checkOutboundUrl(current, opts.allowList);
    const res = await requestOnce(url, opts, deadline);
    const location = res.headers.location;
    if (res.status >= 300 && res.status < 400 && location) {
      current = new URL(location, url).toString();
      continue;
    }
    return res;
  }
  throw new OutboundBlockedError('too many redirects');
}

function requestOnce(url: URL, opts: SafeRequestOptions, deadline: number): Promise<SafeResponse> {
  const allowIPAddressList = opts.allowList.filter((e) => ipaddr.isValid(e.split('/')[0]!));
  const agent = useAgent(url.toString(), { allowIPAddressList, keepAlive: false });
  const lib = url.protocol === 'https:' ? https : http;
  const maxBytes = opts.maxBytes ?? 10 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const remaining = Math.max(1, deadline - Date.now());
    const timer = setTimeout(() => req.destroy(new Error(`timed out after ${opts.timeoutMs ?? 10_000} ms`)), remaining);
    const req = lib.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          req.destroy(new OutboundBlockedError(`response exceeds ${maxBytes} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(/is not allowed/.test(e.message) ? new OutboundBlockedError(e.message) : e);
    });
    if (opts.body) req.write(opts.body);
    req.end();
  });
}
