/**
 * Plumbing shared by the fake X and LinkedIn servers: a local HTTP server that records every
 * request (method, path, query, headers, parsed body, time), and per-route fault injection:
 * an error answer (401/403/429 with Retry-After/500 …) or a timeout (the server holds the
 * answer, optionally after doing the work, so the client cannot know the outcome).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON, a FormData for multipart bodies, or the raw bytes. */
  body: unknown;
  raw: Buffer;
  at: number;
}

export type Fault =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Hold the answer for `ms` then drop the connection; `afterCommit`: do the work first. */
  | { timeoutMs: number; afterCommit: boolean };

export interface FakeReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (req: Received, params: string[]) => FakeReply | Promise<FakeReply>;

interface Route {
  method: string;
  pattern: RegExp;
  key: string;
  handler: Handler;
}

export class SocialFake {
  readonly received: Received[] = [];
  private server: http.Server;
  private routes: Route[] = [];
  private faults = new Map<string, Fault[]>();
  private sockets = new Set<import('node:net').Socket>();
  url = '';

  private extraServers: http.Server[] = [];

  constructor() {
    this.server = this.createServer();
  }

  private createServer(): http.Server {
    const server = http.createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    return server;
  }

  /** `key` names the route for fault injection and filtering, e.g. `POST /2/tweets`. */
  route(method: string, pattern: RegExp, key: string, handler: Handler): void {
    this.routes.push({ method, pattern, key, handler });
  }

  /** The next `times` calls of route `key` answer with `fault` instead of the normal answer. */
  inject(key: string, fault: Fault, times = 1): void {
    const list = this.faults.get(key) ?? [];
    for (let i = 0; i < times; i++) list.push(fault);
    this.faults.set(key, list);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  /** Requests received on route `key` (method + path template). */
  calls(key: string): Received[] {
    return this.received.filter((r) => this.keyOf(r.method, r.path) === key);
  }

  private keyOf(method: string, path: string): string | undefined {
    return this.routes.find((r) => r.method === method && r.pattern.test(path))?.key;
  }

  /** `host`: a loopback address (127.0.0.0/8), so tests can tell allowed from refused addresses. */
  async listen(host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, host, r));
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  /** The same fake served on a second address too (e.g. upload URLs on another host); its URL. */
  async listenAlso(host: string): Promise<string> {
    const server = this.createServer();
    await new Promise<void>((r) => server.listen(0, host, r));
    this.extraServers.push(server);
    return `http://${host}:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await Promise.all([this.server, ...this.extraServers].map((srv) => new Promise<void>((r) => srv.close(() => r()))));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://fake');
    const ct = String(req.headers['content-type'] ?? '');
    let body: unknown = raw;
    try {
      if (ct.startsWith('application/json') && raw.length) body = JSON.parse(raw.toString('utf8'));
      else if (ct.startsWith('multipart/form-data')) body = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': ct }, body: raw }).formData();
    } catch {
      body = { __invalid: raw.toString('utf8') };
    }
    const rec: Received = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body, raw, at: Date.now() };
    this.received.push(rec);

    const route = this.routes.find((r) => r.method === rec.method && r.pattern.test(rec.path));
    if (!route) return this.send(res, { status: 404, body: { message: `no route ${rec.method} ${rec.path}` } });
    const fault = this.faults.get(route.key)?.shift();
    if (fault && 'status' in fault) return this.send(res, { status: fault.status, body: fault.body, headers: fault.headers });
    if (fault && !fault.afterCommit) return this.hang(res, fault.timeoutMs);
    let reply: FakeReply;
    try {
      reply = await route.handler(rec, route.pattern.exec(rec.path)!.slice(1));
    } catch (e) {
      reply = { status: 500, body: { message: (e as Error).message } };
    }
    if (fault) return this.hang(res, fault.timeoutMs);
    this.send(res, reply);
  }

  private hang(res: http.ServerResponse, ms: number): void {
    setTimeout(() => res.destroy(), ms).unref();
  }

  private send(res: http.ServerResponse, r: FakeReply): void {
    const headers: Record<string, string> = { ...(r.headers ?? {}) };
    let payload: string | Buffer = '';
    if (r.body !== undefined) {
      payload = Buffer.isBuffer(r.body) ? r.body : JSON.stringify(r.body);
      if (!Buffer.isBuffer(r.body)) headers['content-type'] ??= 'application/json';
    }
    res.writeHead(r.status, headers);
    res.end(payload);
  }
}

/** Bearer token of a request, or null. */
export function bearer(req: Received): string | null {
  const h = String(req.headers.authorization ?? '');
  return h.startsWith('Bearer ') ? h.slice(7) : null;
}
