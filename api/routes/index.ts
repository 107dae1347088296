/**
 * Every route group, in mount order. Order matters where a static path and a `{param}` path
 * share a prefix: `/contacts/unified-data-api` and `/contacts/bulk-fetch` must be mounted before
 * `/contacts/{sourceId}`.
 */
import type { RouteDef } from '../route.js';
import { platformRoutes } from './platform.js';
import { discoveryRoutes } from './discovery.js';
import { discoverySchemaRoutes } from './discoverySchema.js';
import { enrichmentRoutes } from './enrichment.js';
import { integrationRoutes } from './integrations.js';
import { mediaRoutes } from './media.js';
import { publishingRoutes } from './publishing.js';
import { postRoutes } from './posts.js';
import { segmentRoutes } from './segments.js';
import { sourceRoutes } from './sources.js';
import { contactRoutes } from './contacts.js';
import { contactSchemaRoutes } from './schema.js';
import { privacyRoutes } from './privacy.js';

export const routeGroups: RouteDef[][] = [platformRoutes, discoverySchemaRoutes, discoveryRoutes, enrichmentRoutes, integrationRoutes, mediaRoutes, publishingRoutes, postRoutes, segmentRoutes, sourceRoutes, contactSchemaRoutes, contactRoutes, privacyRoutes];
