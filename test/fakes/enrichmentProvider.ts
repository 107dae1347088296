/**
 * A fake enrichment provider speaking the contract of docs/providers/enrichment.md
 * (`POST /v1/enrich`, bearer key, `{found, data}`), recording every request it receives.
 * Tests give it data per (person, slice) and script failures for the next requests of a slice:
 * `{status: 401 | 404 | 429 | 500 …, retryAfter?, body?}` or `{delayMs}` (answers late, to trip
 * the client's timeout).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readBody } from './http.js';
import type { AddressInfo } from 'node:net';
import type { HttpEnrichRequest } from '../../activities/providers/enrichmentHttp.js';
import type { AnySliceData, EnrichmentSlice } from '../../domain/enrichment.js';
import { normalizeProfileUrl } from '../../domain/identity.js';

export type ScriptedResponse = { status: number; retryAfter?: string; body?: unknown } | { delayMs: number };

export interface RecordedRequest {
  at: number;
  headers: IncomingMessage['headers'];
  body: HttpEnrichRequest | null;
  answeredWith: number | 'timeout';
}

export interface FakeEnrichmentProvider {
  name: string;
  baseUrl: string;
  apiKey: string;
  requests: RecordedRequest[];
  /** Requests about one person (by pronet, or by `fullName@companyDomain`). */
  requestsFor(person: string): RecordedRequest[];
  /** What the provider knows about a person, by profile URL or `fullName@companyDomain`. */
  setData(person: string, slice: EnrichmentSlice, data: AnySliceData): void;
  /** Responses for the next requests of a slice, in order, before normal answers resume. */
  script(slice: EnrichmentSlice, ...responses: ScriptedResponse[]): void;
  /** Every normal answer waits this long first (a provider's own latency; default 0). */
  setLatency(ms: number): void;
  close(): Promise<void>;
}

const personKey = (raw: string) => (raw.includes('@') ? raw.toLowerCase() : (normalizeProfileUrl(raw) ?? raw));

function keysOf(body: HttpEnrichRequest | null): string[] {
  const keys: string[] = [];
  if (body?.lookup?.pronet) keys.push(personKey(body.lookup.pronet));
  if (body?.lookup?.fullName && body.lookup.companyDomain) keys.push(`${body.lookup.fullName}@${body.lookup.companyDomain}`.toLowerCase());
  return keys;
}

export async function startFakeEnrichmentProvider(name: string, opts: { apiKey?: string; host?: string } = {}): Promise<FakeEnrichmentProvider> {
  const host = opts.host ?? '127.0.0.1';
  const apiKey = opts.apiKey ?? `${name}-test-key`;
  const data = new Map<string, AnySliceData>();
  const scripted = new Map<EnrichmentSlice, ScriptedResponse[]>();
  const requests: RecordedRequest[] = [];
  let latencyMs = 0;

  const server: Server = createServer(async (req, res) => {
    const raw = await readBody(req);
    let body: HttpEnrichRequest | null = null;
    try {
      body = raw ? (JSON.parse(raw) as HttpEnrichRequest) : null;
    } catch {
      body = null;
    }
    const rec: RecordedRequest = { at: Date.now(), headers: req.headers, body, answeredWith: 200 };
    requests.push(rec);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      rec.answeredWith = status;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(payload));
    };
    if (req.method !== 'POST' || req.url !== '/v1/enrich') return send(404, { error: { code: 'not_found', message: `no route ${req.method} ${req.url}` } });
    if (req.headers.authorization !== `Bearer ${apiKey}`) return send(401, { error: { code: 'unauthorized', message: 'bad api key' } });
    if (!body || typeof body.slice !== 'string' || !body.lookup) return send(400, { error: { code: 'invalid_request', message: 'slice and lookup are required' } });

    const next = scripted.get(body.slice)?.shift();
    if (next && 'delayMs' in next) {
      rec.answeredWith = 'timeout';
      await new Promise((r) => setTimeout(r, next.delayMs));
      if (!res.destroyed) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'too_late', message: 'answered after the delay' } }));
      }
      return;
    }
    if (next) {
      const headers: Record<string, string> = next.retryAfter !== undefined ? { 'retry-after': next.retryAfter } : {};
      return send(next.status, next.body ?? { error: { code: `http_${next.status}`, message: `scripted ${next.status}` } }, headers);
    }
    if (latencyMs) await new Promise((r) => setTimeout(r, latencyMs));
    for (const k of keysOf(body)) {
      const found = data.get(`${k}\0${body.slice}`);
      if (found) return send(200, { found: true, data: found });
    }
    return send(200, { found: false });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;

  return {
    name,
    baseUrl: `http://${host}:${port}`,
    apiKey,
    requests,
    requestsFor: (person) => requests.filter((r) => keysOf(r.body).includes(personKey(person))),
    setData: (person, slice, d) => void data.set(`${personKey(person)}\0${slice}`, d),
    script: (slice, ...responses) => void scripted.set(slice, [...(scripted.get(slice) ?? []), ...responses]),
    setLatency: (ms) => void (latencyMs = ms),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
