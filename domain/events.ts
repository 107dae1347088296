/**
 * Workspace events (docs/PUBLISHING.md "Events"): their types, the keys that make each state
 * change one event, and the operator's settings. Pure.
 */
import { createHash } from 'node:crypto';

export const EVENT_TYPES = ['post.published', 'post.failed', 'integration.reauth_required', 'integration.expires_soon'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The Standard Webhooks `webhook-id` of an event: the same on every attempt and redelivery, so receivers deduplicate on it. */
export const eventMessageId = (eventId: string) => `msg_${eventId}`;

/**
 * Each state change's key (unique in `workspace_events`): a schedule row ends once; an
 * integration's grant (its sealed credentials) ends once; a grant's end date is announced once.
 */
export const eventStateKey = {
  postOutcome: (status: 'published' | 'failed', scheduleId: string) => `post.${status}:${scheduleId}`,
  reauthRequired: (integrationId: string, sealedCredentials: string) =>
    `integration.reauth_required:${integrationId}:${createHash('sha256').update(sealedCredentials).digest('hex').slice(0, 32)}`,
  expiresSoon: (integrationId: string, grantExpiresAt: Date) => `integration.expires_soon:${integrationId}:${grantExpiresAt.toISOString()}`,
};

const numberFrom = (raw: string | undefined, fallback: number) => {
  const n = Number(raw);
  return raw !== undefined && raw !== '' && Number.isFinite(n) && n >= 0 ? n : fallback;
};

/** `integration.expires_soon` is sent when a grant ends within this many days: `INTEGRATION_EXPIRY_NOTICE_DAYS`, 7 unless set. */
export const expiryNoticeDays = (env: NodeJS.ProcessEnv) => numberFrom(env.INTEGRATION_EXPIRY_NOTICE_DAYS, 7);

/** How long a rotated-out subscription secret keeps signing beside the new one: `WEBHOOK_SECRET_ROTATION_GRACE_HOURS`, 24 unless set. */
export const secretRotationGraceMs = (env: NodeJS.ProcessEnv) => numberFrom(env.WEBHOOK_SECRET_ROTATION_GRACE_HOURS, 24) * 3_600_000;
