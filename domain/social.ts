/**
 * Social publishing vocabulary shared by the entities (db/social.ts), the HTTP schemas
 * (api/schemas/posts.ts, integrations.ts, media.ts), the workflows and the provider adapters.
 * The JSON shapes stored in `posts` jsonb columns are declared here once as TypeBox schemas:
 * ajv validates request bodies with them, the entity columns are typed by them and the OpenAPI
 * document publishes them.
 */
import { Type, type Static } from '@sinclair/typebox';

export const PROVIDERS = ['microblog', 'pronet', 'pronetPage'] as const;
export type Provider = (typeof PROVIDERS)[number];

export const INTEGRATION_STATUSES = ['connected', 'reauth_required', 'disconnected'] as const;
export type IntegrationStatus = (typeof INTEGRATION_STATUSES)[number];

export const POST_STATUSES = ['draft', 'scheduled', 'publishing', 'published', 'failed', 'cancelled'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

export const SCHEDULE_STATUSES = ['scheduled', 'publishing', 'published', 'failed', 'cancelled'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

/** Delays a repost child may follow its parent by (DESIGN §4 "reposting"). */
export const REPOST_DELAYS_SECS = [300, 1800, 3600, 7200, 14400, 28800, 43200, 86400] as const;

/** Longest thread spacing accepted (one day). */
export const MAX_THREAD_DELAY_SECS = 86_400;

/** Post content limits (the networks' own limits are checked by the adapters). */
export const MAX_CONTENT_LENGTH = 10_000;
export const MAX_MEDIA_PER_POST = 20;
export const MAX_THREAD_ITEMS = 25;

// ---------------------------------------------------------------------------------------------
// JSON shapes stored on a post

export const MediaRef = Type.Object(
  { fileName: Type.String({ minLength: 1, maxLength: 300, description: 'A `fileName` from media upload, chunk assembly or import' }) },
  { additionalProperties: false },
);
export type MediaRef = Static<typeof MediaRef>;

export const Article = Type.Object(
  {
    fileName: Type.String({ minLength: 1, maxLength: 300, description: 'Document or thumbnail: a `fileName` of the workspace' }),
    title: Type.Optional(Type.String({ maxLength: 400 })),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    sourceUrl: Type.Optional(Type.String({ format: 'uri', maxLength: 2000, description: 'Link the article points to' })),
  },
  { additionalProperties: false },
);
export type Article = Static<typeof Article>;

export const ThreadItem = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: MAX_CONTENT_LENGTH }),
    media: Type.Optional(Type.Array(MediaRef, { maxItems: MAX_MEDIA_PER_POST })),
  },
  { additionalProperties: false },
);
export type ThreadItem = Static<typeof ThreadItem>;

export const ThreadDelay = Type.Object(
  {
    enabled: Type.Boolean(),
    scheduleInSecs: Type.Integer({ minimum: 0, maximum: MAX_THREAD_DELAY_SECS, description: 'Spacing between thread items' }),
  },
  { additionalProperties: false },
);
export type ThreadDelay = Static<typeof ThreadDelay>;

const repostDelay = Type.Union(
  REPOST_DELAYS_SECS.map((v) => Type.Literal(v)),
  { description: `Seconds after the parent's scheduledTime: one of ${REPOST_DELAYS_SECS.join(', ')}` },
);

export const RepostTarget = Type.Object(
  {
    providerId: Type.String({ format: 'uuid', description: 'Integration id of the account that reshares' }),
    scheduleInSecs: repostDelay,
  },
  { additionalProperties: false },
);
export type RepostTarget = Static<typeof RepostTarget>;

export const CrossAccountRepostConfig = Type.Object(
  {
    enabled: Type.Boolean(),
    providersConfig: Type.Array(RepostTarget),
  },
  { additionalProperties: false },
);
export type CrossAccountRepostConfig = Static<typeof CrossAccountRepostConfig>;

/** What a client may set on a draft (and per schedule row): thread spacing. */
export const AutomationInput = Type.Object(
  { threadDelay: Type.Optional(ThreadDelay) },
  { additionalProperties: false },
);
export type AutomationInput = Static<typeof AutomationInput>;

/** Stored automation: thread spacing plus the repost configuration set by `/reposting`. */
export const Automation = Type.Object(
  {
    threadDelay: Type.Optional(ThreadDelay),
    crossAccountRepostConfig: Type.Optional(CrossAccountRepostConfig),
  },
  { additionalProperties: false },
);
export type Automation = Static<typeof Automation>;

export const PostError = Type.Object(
  {
    code: Type.String({ description: 'Stable code, e.g. `credentials_revoked`, `publish_outcome_unknown`' }),
    message: Type.String(),
    provider: Type.Union([Type.String(), Type.Null()], { description: 'Provider kind the error came from' }),
  },
  { additionalProperties: false },
);
export type PostError = Static<typeof PostError>;

// ---------------------------------------------------------------------------------------------
// Media

/** Allowed upload types (detected from the bytes) and the file extension stored for each. */
export const MEDIA_TYPES: Readonly<Record<string, string>> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
  'application/pdf': 'pdf',
};
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
export const MAX_CHUNK_BYTES = 10 * 1024 * 1024;
export const MAX_ASSEMBLED_BYTES = 1024 * 1024 * 1024;
export const MAX_CHUNKS = 10_000;
export const MAX_IMPORT_BYTES = MAX_UPLOAD_BYTES;
export const IMPORT_TIMEOUT_MS = 60_000;
export const READ_URL_TTL_SECS = 15 * 60;

/** Ids in paths are checked before they reach a `uuid` column (a malformed id is a 404, like a missing one). */
export { isUuid } from './ids.js';

/** Whether a post of this provider kind may be published through an integration of that kind. */
export function providerKindsCompatible(postProvider: Provider, integrationProvider: Provider): boolean {
  if (postProvider === integrationProvider) return true;
  const pro = (p: Provider) => p === 'pronet' || p === 'pronetPage';
  return pro(postProvider) && pro(integrationProvider);
}
