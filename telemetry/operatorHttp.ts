/**
 * The operator endpoints' plumbing (metrics, payload codec): a plain HTTP server on a port of its
 * own, bearer-token checks in constant time, and JSON answers. These ports are meant for the
 * operators' network only (Prometheus, the Temporal UI); the API's port never serves them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';

export interface OperatorServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export type OperatorHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export async function startOperatorServer(port: number, host: string, handler: OperatorHandler): Promise<OperatorServer> {
  const server = createServer((req, res) => {
    handler(req, res).catch(() => {
      // The handler answers every error it expects; anything else is still answered, never fatal.
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'internal_error', message: 'Internal server error' } });
      else res.destroy();
    });
  });
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    port: bound,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** Compares digests, so neither the token's content nor its length leaks through timing. */
export function tokenMatches(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** `Authorization: Bearer <token>` names `token`. */
export function hasBearer(req: IncomingMessage, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return !!m && tokenMatches(m[1]!, token);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}

export function errorJson(code: string, message: string) {
  return { error: { code, message } };
}
