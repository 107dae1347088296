/** Every write route has its line in AUDITED_ROUTES (api/audit.ts), and no line names a route that is gone. */
import { describe, expect, it } from 'vitest';
import { routeGroups } from '../../api/routes/index.js';
import { AUDITED_ROUTES, auditedAs, isAuditedRoute } from '../../api/audit.js';

const writes = routeGroups.flat().filter(isAuditedRoute);

describe('audited routes', () => {
  it('names an action for every POST, PATCH, PUT and DELETE route', () => {
    const missing = writes.map((r) => `${r.method} ${r.path}`).filter((k) => !AUDITED_ROUTES[k]);
    expect(missing).toEqual([]);
    expect(writes.length).toBeGreaterThan(40);
  });

  it('has no line for a route that does not exist, and each param it names is one of the path', () => {
    const routes = new Map(writes.map((r) => [`${r.method} ${r.path}`, r]));
    for (const [k, how] of Object.entries(AUDITED_ROUTES)) {
      expect(routes.has(k), k).toBe(true);
      if (how.param) expect(k, k).toContain(`{${how.param}}`);
      expect(how.action).toMatch(/^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$/);
    }
  });

  it('records an unlisted write route under a derived action rather than not at all', () => {
    expect(auditedAs({ method: 'post', path: '/v1/widgets/{id}/spin' } as never)).toEqual({ action: 'widgets.post', resourceType: 'widgets' });
  });
});
