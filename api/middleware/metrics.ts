/**
 * Request duration by method, route template (`/contacts/{id}`, never the raw path) and status;
 * the same template names the request's trace span.
 * Mounted first, so the status is the one the client got (errors already turned into answers).
 */
import type Koa from 'koa';
import { httpRequestDuration } from '../../telemetry/metrics.js';
import { recordHttpRoute } from '../../telemetry/tracing.js';

/** `/contacts/:id` → `/contacts/{id}`, as the OpenAPI document names it; once per route. */
const templates = new Map<string, string>();
function template(koaPath: string): string {
  let t = templates.get(koaPath);
  if (t === undefined) templates.set(koaPath, (t = koaPath.replace(/:(\w+)/g, '{$1}')));
  return t;
}

export function httpMetrics(): Koa.Middleware {
  return async (ctx, next) => {
    const end = httpRequestDuration.startTimer();
    try {
      await next();
    } finally {
      const matched = ctx._matchedRoute;
      // Paths no route serves (404, 405 before routing) share one label: they are not a template.
      const route = typeof matched === 'string' ? template(matched) : '(unmatched)';
      end({ method: ctx.method, route, status: String(ctx.status) });
      recordHttpRoute(route);
    }
  };
}
