/**
 * The audit trail of the API's writes (docs/PRIVACY.md "Audit trail"). `mount` (api/app.ts) wraps
 * every POST, PATCH, PUT and DELETE route in {@link audited}: once the caller is authenticated
 * and the input validated, an `audit_events` row (key id and kind, action, resource type and
 * UUID, request id) is committed BEFORE the handler runs; after it, an `audit_outcomes` row
 * records the status and the id of what a create made.
 *
 * Why before and not in the write's transaction: the handlers commit in many ways (the entity
 * manager, pool transactions, a Temporal start, object-store writes), so one transaction cannot
 * hold both for every route; and recording after the write could lose the record of a committed
 * write (process killed, database gone between the two). Recorded first, every write that can
 * commit has its event: if the event cannot be written the request fails before writing anything
 * (nothing acknowledged is lost). The outcome row is best-effort: a failure to record it is
 * logged and never turns a successful write into an error; its absence reads as `status: null`.
 *
 * Nothing from the body is recorded: the resource id is taken from a path parameter or from the
 * response's `jobId` / `data.id` / `id`, and only when it is a UUID, so an email, a URL or a
 * suppression hash can never land in the trail.
 */
import type { Context } from 'koa';
import type { AppDeps } from './deps.js';
import type { AuthContext } from './middleware/auth.js';
import type { HttpMethod, RouteDef } from './route.js';
import { isUuid, uuidv7Pooled } from '../domain/ids.js';
import { recordAuditEvent, recordAuditOutcome } from '../db/audit.js';

interface AuditedAs {
  /** `<resourceType>.<verb>` */
  action: string;
  resourceType: string;
  /** The path parameter naming the resource acted on, if any. */
  param?: string;
}

const as = (action: string, param?: string): AuditedAs => ({ action, resourceType: action.slice(0, action.indexOf('.')), param });
const on = (resourceType: string, action: string, param?: string): AuditedAs => ({ action, resourceType, param });

/** Every write route's action: one line per route, checked against the routes by test/unit/audit.test.ts. */
export const AUDITED_ROUTES: Record<string, AuditedAs> = {
  'post /jobs/{jobId}/cancel': as('job.cancel', 'jobId'),
  'post /discovery-search/find-contacts-v2': as('discovery.findContacts'),
  'post /discovery-search/find-companies-v2': as('discovery.findCompanies'),
  'post /discovery-search/find-verified-companies': as('discovery.findVerifiedCompanies'),
  'post /discovery-search/find-verified-contacts': as('discovery.findVerifiedContacts'),
  'post /discovery-search/import-verified-companies': on('job', 'discovery.importVerifiedCompanies'),
  'post /contacts/unified-data-api': on('job', 'enrichment.start'),
  'post /contacts/bulk-enrichment/estimate': as('bulkEnrichment.estimate'),
  'post /contacts/bulk-enrichment': on('job', 'bulkEnrichment.start'),
  'post /contacts/bulk-enrichment/{jobId}/{action}': on('job', 'bulkEnrichment.control', 'jobId'),
  'put /enrichment/settings': as('enrichmentSettings.update'),
  'post /integrations/oauth/authorize': as('integration.authorize'),
  'post /integrations/{id}/pages': as('integration.addPages', 'id'),
  'put /integrations/oauth/apps/{network}': as('oauthApp.update'),
  'delete /integrations/oauth/apps/{network}': as('oauthApp.delete'),
  'post /integrations': as('integration.create'),
  'post /integrations/filter-integrations': as('integration.filter'),
  'delete /integrations/{id}': as('integration.delete', 'id'),
  'post /v1/media/upload': as('media.upload'),
  'post /v1/media/assemble-chunks': as('media.assemble'),
  'post /v1/media/import-from-url': as('media.import'),
  'post /contact-files': as('contactFile.upload'),
  'post /contact-files/assemble-chunks': as('contactFile.assemble'),
  'post /v1/posts/bulk-schedule': as('post.bulkSchedule'),
  'post /v1/posts/external-linkedin-reply': as('post.externalReply'),
  'post /v1/posts/{postId}/unschedule': as('post.unschedule', 'postId'),
  'post /v1/posts': as('post.create'),
  'post /v1/posts/filter-posts': as('post.filter'),
  'post /v1/posts/{postId}/reposting': as('post.repost', 'postId'),
  'patch /v1/posts/{id}': as('post.update', 'id'),
  'delete /v1/posts/{id}': as('post.delete', 'id'),
  'post /segments': as('segment.create'),
  'post /segments/{id}/clone': as('segment.clone', 'id'),
  'patch /segments/{id}': as('segment.update', 'id'),
  'delete /segments/{id}': as('segment.delete', 'id'),
  'post /sources': as('source.create'),
  'post /sources/filter-sources/{sourceType}': as('source.filter'),
  'post /sources/bulk-upsert': as('source.bulkUpsert'),
  'post /sources/bulk-fetch': as('source.bulkFetch'),
  'patch /sources/bulk-update': as('source.bulkUpdate'),
  'post /sources/pull-contacts-from-source/{id}': as('source.pull', 'id'),
  'patch /sources/{id}': as('source.update', 'id'),
  'post /schema/contact/custom-fields': as('customField.create'),
  'post /contacts/bulk-fetch': as('contact.bulkFetch'),
  'post /contacts/filter-contacts': as('contact.filter'),
  'post /contacts/by-segment/{segmentId}': on('segment', 'contact.listBySegment', 'segmentId'),
  'post /contacts/unique-values': as('contact.uniqueValues'),
  'patch /contacts/{id}': as('contact.update', 'id'),
  'delete /contacts/{id}': as('contact.delete', 'id'),
  'post /contacts/{sourceId}': as('contact.upsert'),
  'post /contacts/{sourceId}/bulk-upsert-contacts': on('job', 'contact.bulkUpsert'),
  // Privacy actions: the erasure's resource is the request (its job id), never the email or URL asked for.
  'post /privacy/erasure-requests': on('erasureRequest', 'erasure.request'),
  'post /privacy/access-requests': on('accessRequest', 'access.request'),
  'post /privacy/suppressions': as('suppression.add'),
  'delete /privacy/suppressions/{identifierHash}': as('suppression.remove'),
  'post /webhook-subscriptions': as('webhookSubscription.create'),
  'delete /webhook-subscriptions/{id}': as('webhookSubscription.delete', 'id'),
  'post /webhook-subscriptions/{id}/rotate-secret': as('webhookSubscription.rotateSecret', 'id'),
  'post /webhook-subscriptions/{id}/enable': as('webhookSubscription.enable', 'id'),
  'post /webhook-subscriptions/{id}/deliveries/{deliveryId}/redeliver': on('webhookDelivery', 'webhookDelivery.redeliver', 'deliveryId'),
};

const WRITE_METHODS: ReadonlySet<HttpMethod> = new Set(['post', 'patch', 'put', 'delete']);

export const isAuditedRoute = (def: RouteDef) => def.auth !== false && WRITE_METHODS.has(def.method);

/**
 * How a route is recorded: its line in {@link AUDITED_ROUTES}, or, for a write route added without
 * one (the unit test fails on it), `<first path segment>.<method>` so it is still recorded.
 */
export function auditedAs(def: RouteDef): AuditedAs {
  const known = AUDITED_ROUTES[`${def.method} ${def.path}`];
  if (known) return known;
  const resourceType = def.path.split('/').find((s) => s && s !== 'v1' && !s.startsWith('{')) ?? 'unknown';
  return { action: `${resourceType}.${def.method}`, resourceType };
}

const uuidOrNull = (v: unknown): string | null => (isUuid(v) ? v : null);

/** The id of what a create made, from its response: `jobId`, `data.id` or `id`, when a UUID. */
function createdId(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as { jobId?: unknown; id?: unknown; data?: { id?: unknown } };
  return uuidOrNull(b.jobId) ?? uuidOrNull(typeof b.data === 'object' && b.data !== null && !Array.isArray(b.data) ? b.data.id : undefined) ?? uuidOrNull(b.id);
}

/**
 * Runs `handle` (which answers the request) between the event and its outcome. `statusOf` maps a
 * thrown error to the status the client gets (api/app.ts toApiError).
 */
export async function audited(
  deps: AppDeps,
  ctx: Context,
  auth: AuthContext,
  how: AuditedAs,
  params: Record<string, unknown>,
  handle: () => Promise<unknown>,
  statusOf: (err: unknown) => number,
): Promise<void> {
  const eventId = uuidv7Pooled();
  const paramId = how.param ? uuidOrNull(params[how.param]) : null;
  // Not caught: without its event the write must not run (the request fails with nothing written).
  await recordAuditEvent(deps.pool, {
    id: eventId,
    workspaceId: auth.workspaceId,
    actorKeyId: auth.apiKeyId,
    actorKind: auth.keyKind,
    action: how.action,
    resourceType: how.resourceType,
    resourceId: paramId,
    requestId: typeof ctx.state.requestId === 'string' ? ctx.state.requestId : null,
  });
  let status: number;
  let resourceId: string | null = null;
  try {
    const sent = await handle();
    status = ctx.status;
    if (!paramId && status < 300) resourceId = createdId(sent);
  } catch (err) {
    await outcome(statusOf(err), null);
    throw err;
  }
  await outcome(status, resourceId);

  async function outcome(s: number, id: string | null) {
    try {
      await recordAuditOutcome(deps.pool, { eventId, workspaceId: auth.workspaceId, status: s, resourceId: id });
    } catch (err) {
      // The write itself is done (or refused): its answer stands. The event row already records it.
      deps.log.warn({ err, eventId, action: how.action }, 'audit outcome not recorded');
    }
  }
}
