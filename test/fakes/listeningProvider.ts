/**
 * A fake social-listening provider speaking the contract of docs/providers/listening.md
 * (`POST /v1/audience`, bearer key, `{people, nextCursor}`), recording every request it
 * receives. Tests give it an audience per query key and script failures for the next requests:
 * `{status: 401 | 429 | 500 …, retryAfter?, body?}` or `{delayMs}` (answers late, to trip the
 * client's timeout).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readBody } from './http.js';
import type { AddressInfo } from 'node:net';
import type { ListeningPerson } from '../../activities/providers/listening.js';
import type { AudienceRequest } from '../../activities/providers/listeningHttp.js';

export type ScriptedResponse =
  | { status: number; retryAfter?: string; body?: unknown }
  | { delayMs: number };

export interface RecordedRequest {
  at: number;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: AudienceRequest | null;
  answeredWith: number | 'timeout';
}

export interface FakeListeningProvider {
  baseUrl: string;
  apiKey: string;
  requests: RecordedRequest[];
  /** Audience answered for a query key: `sourceIdentifier`, else `filters.keyword`, else `filters.jobTitle`. */
  setAudience(key: string, people: ListeningPerson[]): void;
  /** Responses for the next requests, in order, before normal answers resume. */
  script(...responses: ScriptedResponse[]): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeListeningProvider(opts: { apiKey?: string; host?: string } = {}): Promise<FakeListeningProvider> {
  const host = opts.host ?? '127.0.0.1';
  const apiKey = opts.apiKey ?? 'listening-test-key';
  const audiences = new Map<string, ListeningPerson[]>();
  let scripted: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];

  const server: Server = createServer(async (req, res) => {
    const raw = await readBody(req);
    let body: AudienceRequest | null = null;
    try {
      body = raw ? (JSON.parse(raw) as AudienceRequest) : null;
    } catch {
      body = null;
    }
    const rec: RecordedRequest = { at: Date.now(), method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, answeredWith: 200 };
    requests.push(rec);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      rec.answeredWith = status;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(payload));
    };

    const next = scripted.shift();
    if (next && 'delayMs' in next) {
      rec.answeredWith = 'timeout';
      await new Promise((r) => setTimeout(r, next.delayMs));
      if (!res.destroyed) send(503, { error: { code: 'too_late', message: 'answered after the delay' } });
      return;
    }
    if (next) {
      const headers: Record<string, string> = next.retryAfter !== undefined ? { 'retry-after': next.retryAfter } : {};
      send(next.status, next.body ?? { error: { code: `http_${next.status}`, message: `scripted ${next.status}` } }, headers);
      return;
    }

    if (req.method !== 'POST' || req.url !== '/v1/audience') return send(404, { error: { code: 'not_found', message: `no route ${req.method} ${req.url}` } });
    if (req.headers.authorization !== `Bearer ${apiKey}`) return send(401, { error: { code: 'invalid_api_key', message: 'The API key is invalid or revoked' } });
    if (!body || typeof body.postedAfter !== 'string' || typeof body.postedBefore !== 'string' || typeof body.limit !== 'number') {
      return send(400, { error: { code: 'invalid_request', message: 'postedAfter, postedBefore and limit are required' } });
    }
    const key = body.sourceIdentifier ?? body.filters?.keyword ?? body.filters?.jobTitle ?? '';
    const after = Date.parse(body.postedAfter);
    const before = Date.parse(body.postedBefore);
    const all = (audiences.get(key) ?? []).filter((p) => {
      const t = Date.parse(p.interaction.occurredAt);
      return t >= after && t < before;
    });
    const offset = body.cursor ? Number(Buffer.from(body.cursor, 'base64url').toString('utf8')) : 0;
    const page = all.slice(offset, offset + body.limit);
    const end = offset + page.length;
    send(200, { people: page, nextCursor: end < all.length ? Buffer.from(String(end)).toString('base64url') : null });
  });

  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${port}`,
    apiKey,
    requests,
    setAudience: (key, people) => void audiences.set(key, people),
    script: (...r) => void scripted.push(...r),
    reset() {
      scripted = [];
      requests.length = 0;
      audiences.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
