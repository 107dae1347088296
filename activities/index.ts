/**
 * All activities, built from one factory per system they touch. Workflows import the *type*
 * `Activities` and call them through `proxyActivities`.
 */
import type { ActivityDeps } from './deps.js';
import { createContactActivities } from './dbContacts.js';
import { createCreditActivities } from './credits.js';
import { createDiscoveryActivities } from './dbDiscovery.js';
import { createWebhookActivities } from './webhooks.js';
import { createEventDeliveryActivities } from './eventDeliveries.js';
import { createSourceActivities } from './dbSources.js';
import { createEnrichmentActivities } from './providers/enrichment.js';
import { createBulkEnrichmentActivities } from './providers/bulkEnrichment.js';
import { createPostDbActivities } from './dbPosts.js';
import { createPublishingActivities } from './publishing.js';
import { createTokenActivities } from './oauthTokens.js';
import { createMediaActivities } from './media.js';
import { createPrivacyActivities } from './privacy.js';
import { createRetentionActivities } from './retention.js';
import { createSubjectAccessActivities } from './subjectAccess.js';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createContactActivities(deps),
    ...createCreditActivities(deps),
    ...createDiscoveryActivities(deps),
    ...createWebhookActivities(deps),
    ...createEventDeliveryActivities(deps),
    ...createSourceActivities(deps),
    ...createEnrichmentActivities(deps),
    ...createBulkEnrichmentActivities(deps),
    ...createPostDbActivities(deps),
    ...createPublishingActivities(deps),
    ...createTokenActivities(deps),
    ...createMediaActivities(deps),
    ...createPrivacyActivities(deps),
    ...createRetentionActivities(deps),
    ...createSubjectAccessActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
export type { ActivityDeps };
