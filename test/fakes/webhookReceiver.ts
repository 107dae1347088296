/** A job-webhook receiver for tests: records every notification it gets and answers `status`. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './http.js';

export interface ReceivedHook {
  headers: IncomingHttpHeaders;
  /** The body as sent (what a signature covers). */
  raw: string;
  body: any;
}

export interface WebhookReceiver {
  /** The URL to give as `webhookConfiguration.url`. */
  url: string;
  received: ReceivedHook[];
  /** The first notification whose parsed body matches, waiting for it up to `timeoutMs`. */
  waitFor(match: (body: any) => boolean, timeoutMs?: number): Promise<ReceivedHook>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  opts: {
    status?: number;
    /** The status of the `n`th request (0-based), e.g. a 500 then 204s; `status` when absent. */
    answer?: (n: number, body: any) => number;
  } = {},
): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    const body = JSON.parse(raw);
    const n = received.length;
    received.push({ headers: req.headers, raw, body });
    res.writeHead(opts.answer?.(n, body) ?? opts.status ?? 204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    async waitFor(match, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = received.find((h) => match(h.body));
        if (hit) return hit;
        if (Date.now() > deadline) throw new Error('webhook not received');
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
