/**
 * Every route group, in mount order. Order matters where a static path and a `{param}` path
 * share a prefix: `/contacts/unified-data-api` and `/contacts/bulk-fetch` must be mounted before
 * `/contacts/{sourceId}`; `/integrations/oauth/…` before `/integrations/{id}`.
 */
import type { RouteDef } from '../route.js';
import { platformRoutes } from './platform.js';
import { discoveryRoutes } from './discovery.js';
import { discoverySchemaRoutes } from './discoverySchema.js';
import { enrichmentRoutes } from './enrichment.js';
import { bulkEnrichmentRoutes } from './bulkEnrichment.js';
import { integrationRoutes } from './integrations.js';
import { oauthRoutes } from './oauth.js';
import { mediaRoutes } from './media.js';
import { contactFileRoutes } from './contactFiles.js';
import { publishingRoutes } from './publishing.js';
import { postRoutes } from './posts.js';
import { segmentRoutes } from './segments.js';
import { sourceRoutes } from './sources.js';
import { contactRoutes } from './contacts.js';
import { contactSchemaRoutes } from './schema.js';
import { privacyRoutes } from './privacy.js';
import { webhookSubscriptionRoutes } from './webhookSubscriptions.js';
import { auditRoutes } from './audit.js';
import { subjectAccessRoutes } from './subjectAccess.js';

export const routeGroups: RouteDef[][] = [
  platformRoutes,
  discoverySchemaRoutes,
  discoveryRoutes,
  enrichmentRoutes,
  bulkEnrichmentRoutes,
  oauthRoutes,
  integrationRoutes,
  mediaRoutes,
  contactFileRoutes,
  publishingRoutes,
  postRoutes,
  segmentRoutes,
  sourceRoutes,
  contactSchemaRoutes,
  contactRoutes,
  privacyRoutes,
  webhookSubscriptionRoutes,
  auditRoutes,
  subjectAccessRoutes,
];
