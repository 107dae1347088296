/**
 * `safeRequest` / `outboundFetch` against a local server: every way an exchange can end settles
 * the promise once and leaves no timer behind (the issue-11 crash was a deadline timer left
 * armed after `http.request` threw synchronously), and the failures are typed.
 */
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OutboundBlockedError,
  OutboundInvalidRequestError,
  OutboundInvalidResponseError,
  OutboundTooLargeError,
  checkOutboundUrl,
  outboundFetch,
  providerErrorReason,
  safeRequest,
} from '../../infra/outbound.js';

let server: http.Server;
let base: string;
const allowList = ['127.0.0.1'];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.on('error', () => {});
    req.resume();
    req.on('end', () => {
      switch (req.url) {
        case '/ok':
          return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        case '/big':
          return void res.writeHead(200).end(Buffer.alloc(4096, 'x'));
        case '/reset':
          return void req.socket.destroy();
        case '/hang':
          return void res.writeHead(200).write('{');
        case '/999':
          req.socket.end('HTTP/1.1 999 Odd\r\ncontent-length: 0\r\n\r\n');
          return;
        case '/loop':
          return void res.writeHead(302, { location: '/loop' }).end();
        case '/empty':
          return void res.writeHead(204).end();
        default:
          return void res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

/** Runs `p` and checks it left no more timers than before it started. */
async function settle<T>(p: () => Promise<T>): Promise<{ value?: T; error?: unknown }> {
  const before = timers();
  let out: { value?: T; error?: unknown };
  try {
    out = { value: await p() };
  } catch (error) {
    out = { error };
  }
  await new Promise((r) => setImmediate(r));
  expect(timers()).toBeLessThanOrEqual(before);
  return out;
}

describe('safeRequest', () => {
  it('refuses headers HTTP cannot carry at once, typed, with no timer left armed', async () => {
    const hostile: Array<Record<string, string>> = [{ 'bad name': 'x' }, { 'x-a': 'a\r\nb: c' }, { 'x-a': '\u2603' }, { 'x-a': 'a\u0000' }];
    for (const headers of hostile) {
      const r = await settle(() => safeRequest(`${base}/ok`, { method: 'POST', headers, body: '{}', timeoutMs: 60_000, allowList }));
      expect(r.error).toBeInstanceOf(OutboundInvalidRequestError);
      expect((r.error as Error).message).toMatch(/header/i);
    }
  });

  it('settles once on success, reset, overflow, deadline and abort, clearing its timer each time', async () => {
    expect((await settle(() => safeRequest(`${base}/ok`, { allowList, timeoutMs: 60_000 }))).value?.status).toBe(200);
    expect((await settle(() => safeRequest(`${base}/reset`, { allowList, timeoutMs: 60_000 }))).error).toMatchObject({ code: 'ECONNRESET' });
    expect((await settle(() => safeRequest(`${base}/big`, { allowList, timeoutMs: 60_000, maxBytes: 1000 }))).error).toBeInstanceOf(OutboundTooLargeError);
    const slow = await settle(() => safeRequest(`${base}/hang`, { allowList, timeoutMs: 300 }));
    expect((slow.error as Error).name).toBe('TimeoutError');
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error('cancelled')), 100);
    expect(((await settle(() => safeRequest(`${base}/hang`, { allowList, timeoutMs: 60_000, signal: ctl.signal }))).error as Error).message).toBe('cancelled');
    expect((await settle(() => safeRequest(`${base}/loop`, { allowList, timeoutMs: 60_000, maxRedirects: 2 }))).error).toBeInstanceOf(OutboundBlockedError);
  });

  it('refuses an address the allow-list does not name, before connecting', async () => {
    const r = await settle(() => safeRequest(`${base}/ok`, { allowList: [], timeoutMs: 60_000 }));
    expect(r.error).toBeInstanceOf(OutboundBlockedError);
  });
});

describe('checkOutboundUrl', () => {
  it.each([
    ['IPv4-compatible IPv6 (::/96) of a link-local address', 'http://[::a9fe:a9fe]/'],
    ['IPv4-compatible IPv6 of loopback, dotted', 'http://[::127.0.0.1]/'],
    ['IPv4-compatible IPv6 of a private address', 'http://[::10.0.0.1]/'],
    ['IPv4-compatible IPv6 of a public address (deprecated form, routed by tunnels only)', 'http://[::8.8.8.8]/'],
    ['IPv4-mapped IPv6 of loopback', 'http://[::ffff:127.0.0.1]/'],
    ['NAT64 (RFC 6052) of the metadata address', 'http://[64:ff9b::a9fe:a9fe]/'],
    ['NAT64 local-use prefix (RFC 8215)', 'http://[64:ff9b:1::a9fe:a9fe]/'],
    ['6to4 of the metadata address', 'http://[2002:a9fe:a9fe::1]/'],
    ['Teredo', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/'],
    ['SIIT (RFC 6145, ::ffff:0:a.b.c.d)', 'http://[::ffff:0:a9fe:a9fe]/'],
    ['the unspecified address', 'http://[::]/'],
  ])('refuses %s', async (_what, url) => {
    await expect(checkOutboundUrl(url, [])).rejects.toBeInstanceOf(OutboundBlockedError);
  });

  it('still allows a public IPv6 address', async () => {
    await expect(checkOutboundUrl('http://[2606:4700:4700::1111]/', [])).resolves.toBeInstanceOf(URL);
  });
});

describe('connection failures', () => {
  it('answer one message whatever the socket said (a closed port reads like a reset), the socket error kept as cause', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = (await settle(() => safeRequest(`http://127.0.0.1:${closedPort}/`, { allowList, timeoutMs: 60_000 }))).error as Error;
    const reset = (await settle(() => safeRequest(`${base}/reset`, { allowList, timeoutMs: 60_000 }))).error as Error;
    expect(refused.message).toBe(reset.message);
    expect(refused.message).not.toMatch(/ECONN|EHOST|ENET|127\.0\.0\.1|refused|reset/i);
    expect((refused.cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect((reset.cause as NodeJS.ErrnoException).code).toBe('ECONNRESET');
  });
});

describe('outboundFetch', () => {
  it('answers a Response, refuses statuses a Response cannot carry, and sends FormData as multipart', async () => {
    const ok = await outboundFetch(`${base}/ok`, { allowList, timeoutMs: 5000 });
    expect(await ok.json()).toEqual({ ok: true });
    expect((await outboundFetch(`${base}/empty`, { allowList, timeoutMs: 5000 })).status).toBe(204);
    expect((await outboundFetch(`${base}/loop`, { allowList, timeoutMs: 5000 })).status).toBe(302); // manual by default
    await expect(outboundFetch(`${base}/999`, { allowList, timeoutMs: 5000 })).rejects.toBeInstanceOf(OutboundInvalidResponseError);
    const form = new FormData();
    form.set('a', 'b');
    expect((await outboundFetch(`${base}/ok`, { method: 'POST', body: form, allowList, timeoutMs: 5000 })).status).toBe(200);
  });
});

describe('providerErrorReason', () => {
  it('passes a JSON reason on, shortened, and never a body that is not JSON', () => {
    expect(providerErrorReason(401, '{"error":{"code":"invalid_key","message":"revoked"}}')).toBe('invalid_key: revoked');
    expect(providerErrorReason(400, '{"title":"Bad","detail":"no"}')).toBe('no');
    expect(providerErrorReason(500, '<html>secret</html>')).toBe('Internal Server Error');
    expect(providerErrorReason(422, JSON.stringify({ message: `a\r\n${'b'.repeat(500)}` })).length).toBeLessThanOrEqual(200);
  });
});
