/**
 * An OpenTelemetry collector for tests: OTLP/HTTP with JSON bodies (`POST /v1/traces`, an
 * ExportTraceServiceRequest, answered with an empty ExportTraceServiceResponse), the protocol
 * `@opentelemetry/exporter-trace-otlp-http` speaks. Keeps every span it receives, flattened.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './http.js';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
}

export interface OtlpCollector {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT takes (the exporter appends `/v1/traces`). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Requests that were not a valid OTLP/JSON trace export. */
  rejected: string[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };
const valueOf = (v: AnyValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? v.arrayValue?.values?.map(valueOf);
const attributesOf = (list: { key: string; value: AnyValue }[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: ReceivedSpan[] = [];
  const rejected: string[] = [];
  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
      rejected.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      return res.writeHead(415).end();
    }
    try {
      const body = JSON.parse(raw) as { resourceSpans: { resource?: { attributes?: { key: string; value: AnyValue }[] }; scopeSpans: { spans: any[] }[] }[] };
      for (const rs of body.resourceSpans) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, kind: s.kind, attributes: attributesOf(s.attributes) });
      }
    } catch (e) {
      rejected.push(String(e));
      return res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    rejected,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
