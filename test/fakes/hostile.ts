/**
 * A third party that misbehaves on purpose, for tests that no outbound call can hurt the process
 * making it. The behaviour is chosen by a mode: the first path segment (`/reset/v1/enrich`), or
 * for clients whose path is fixed, `mode=<name>` anywhere in the request body.
 *
 *   reset      reads the request, then destroys the connection without answering
 *   huge       200 with an endless JSON-looking body (stops when the client goes away)
 *   slow       200, then 10 bytes every 200 ms for 3 s
 *   badjson    200 `application/json` that is not JSON
 *   deepjson   200 with JSON nested 200,000 levels deep (JSON.parse overflows the stack)
 *   loop       302 to itself, forever
 *   badstatus  `HTTP/1.1 999` (Node parses it; `new Response` refuses it)
 *   badheader  a response header value with bytes outside Latin-1 text and a bare CR
 *   garbage    bytes that are not HTTP at all
 *   empty      closes the connection after the headers promised a body
 *   retryafter 429 with a 400-digit `Retry-After` and a negative `x-rate-limit-reset`
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const HOSTILE_MODES = ['reset', 'huge', 'slow', 'badjson', 'deepjson', 'loop', 'badstatus', 'badheader', 'garbage', 'empty', 'retryafter'] as const;
export type HostileMode = (typeof HOSTILE_MODES)[number];

export interface HostileServer {
  url: string;
  /** Requests received, by mode, with their method and path. */
  received: Array<{ mode: HostileMode | null; method: string; path: string }>;
  count(mode: HostileMode, pathPart?: string): number;
  close(): Promise<void>;
}

export async function startHostileServer(host = '127.0.0.1'): Promise<HostileServer> {
  const received: HostileServer['received'] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    res.on('error', () => {});
    req.on('error', () => {});
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const body = Buffer.concat(chunks).toString('latin1');
      const first = path.split('/')[1] as HostileMode;
      const fromBody = /mode=([a-z]+)/.exec(body)?.[1] as HostileMode | undefined;
      const mode = (HOSTILE_MODES as readonly string[]).includes(first) ? first : fromBody && (HOSTILE_MODES as readonly string[]).includes(fromBody) ? fromBody : null;
      received.push({ mode, method: req.method ?? '', path });
      const raw = (text: string) => {
        req.socket.write(Buffer.from(text, 'latin1'));
        req.socket.end();
      };
      switch (mode) {
        case 'reset':
          return req.socket.destroy();
        case 'huge': {
          res.writeHead(200, { 'content-type': 'application/json' });
          const block = Buffer.alloc(64 * 1024, 'x');
          let sent = 0;
          const pump = () => {
            while (!res.destroyed && sent < 512 * 1024 * 1024) {
              sent += block.length;
              if (!res.write(block)) return void res.once('drain', pump);
            }
            res.end();
          };
          res.write('{"data":"');
          return pump();
        }
        case 'slow': {
          res.writeHead(200, { 'content-type': 'application/json' });
          let n = 0;
          const t = setInterval(() => {
            if (res.destroyed || ++n > 15) {
              clearInterval(t);
              return void res.end();
            }
            res.write('{{{{{{{{{{');
          }, 200);
          return;
        }
        case 'badjson':
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end('{"found": tru');
        case 'deepjson':
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end('['.repeat(200_000) + ']'.repeat(200_000));
        case 'retryafter':
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '9'.repeat(400), 'x-rate-limit-reset': '-1' });
          return void res.end('{"error":"slow down"}');
        case 'loop':
          res.writeHead(302, { location: path });
          return void res.end();
        case 'badstatus':
          return raw('HTTP/1.1 999 Weird\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
        case 'badheader':
          return raw('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-odd: \xff\xfe\x01\r\nlocation: http://[::1\r\ncontent-length: 2\r\n\r\n{}');
        case 'garbage':
          return raw('THIS IS NOT HTTP\r\n\x00\x01\x02\r\n\r\n');
        case 'empty':
          return raw('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"a"');
        default:
          res.writeHead(404, { 'content-type': 'application/json' });
          return void res.end('{"message":"no mode"}');
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  server.on('clientError', (_e, s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    received,
    count: (mode, pathPart) => received.filter((r) => r.mode === mode && (!pathPart || r.path.includes(pathPart))).length,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
