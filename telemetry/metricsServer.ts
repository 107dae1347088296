/**
 * `GET /metrics` (Prometheus text format) on the process's metrics port: this process's registry,
 * followed by what `extra` adds (the worker appends the Temporal SDK's own exporter, so one
 * scrape per process covers both). With `METRICS_TOKEN` set, scrapes need `Authorization: Bearer`.
 */
import { registry, collectProcessMetrics } from './metrics.js';
import { errorJson, hasBearer, sendJson, startOperatorServer, type OperatorServer } from './operatorHttp.js';

export interface MetricsServerOptions {
  port: number;
  host: string;
  /** Empty: no token asked (the port is reachable from the operators' network only). */
  token: string;
  /** More Prometheus text appended to each scrape; a failure leaves it out, never fails the scrape. */
  extra?: () => Promise<string>;
}

export async function startMetricsServer(o: MetricsServerOptions): Promise<OperatorServer> {
  collectProcessMetrics();
  return startOperatorServer(o.port, o.host, async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return sendJson(res, 404, errorJson('route_not_found', `No route for ${req.method} ${path}; metrics are at GET /metrics`));
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, errorJson('method_not_allowed', `${req.method} is not allowed on /metrics; allowed: GET`), { Allow: 'GET, HEAD' });
    if (o.token && !hasBearer(req, o.token)) {
      return sendJson(res, 401, errorJson('unauthorized', 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>'), { 'WWW-Authenticate': 'Bearer' });
    }
    let text = await registry.metrics();
    if (o.extra) text += await o.extra().catch(() => '');
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text);
  });
}

/** Reads another Prometheus exporter's text (the Temporal SDK's), within `timeoutMs`. */
export async function scrapeText(url: string, timeoutMs = 2000): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  const text = await res.text();
  return text.endsWith('\n') ? text : `${text}\n`;
}
