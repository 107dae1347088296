/** Posts: drafts, listing, reposting configuration. Request and response shapes. */
import { Type, type Static } from '@sinclair/typebox';
import { POST_SORT_FIELDS } from '../../domain/postCatalog.js';
import {
  Article,
  Automation,
  AutomationInput,
  MAX_CONTENT_LENGTH,
  MAX_MEDIA_PER_POST,
  MAX_THREAD_ITEMS,
  MediaRef,
  POST_STATUSES,
  PostError,
  RepostTarget,
  ThreadItem,
} from '../../domain/social.js';
import { entityJson } from '../entityJson.js';
import { DataOf, PageOf, PaginationToken } from './common.js';
import { postSchemas } from './conditions.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });

export const Post = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    providerId: Type.String({ format: 'uuid', description: 'Integration the post publishes through' }),
    status: Type.Union(POST_STATUSES.map((s) => Type.Literal(s))),
    content: Type.String(),
    media: Type.Array(MediaRef),
    articles: Type.Array(Article),
    threadItems: Type.Array(ThreadItem, { description: 'microblog: reply chain; pronet: comments on the post' }),
    automation: Automation,
    externalPost: Type.Boolean({ description: 'True for a comment on an external post' }),
    externalPostUrl: Nullable(Type.String()),
    parentPostId: Nullable(Type.String({ format: 'uuid', description: 'Set on repost children: the post they reshare' })),
    repostDelaySecs: Type.Union([Type.Integer(), Type.Null()], { description: "Repost children: seconds after the parent's scheduledTime" }),
    scheduledTime: Nullable(DateTime),
    publishedAt: Nullable(DateTime),
    externalId: Nullable(Type.String({ description: 'Id of the published object on the network (tweet id, LinkedIn URN)' })),
    externalUrl: Nullable(Type.String()),
    error: Type.Union([PostError, Type.Null()], { description: "A failed post carries the provider's error" }),
    retryAt: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'Set while the network rate-limits the publish (429): when it will be retried (the network’s own reset time). The post stays `publishing` and no failure is recorded; null otherwise.',
      }),
    ),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  {},
);
export type PostJson = Static<typeof Post>;

/** A post entity (db/social.ts `Post`) as the API shows it. */
export const postJson = (post: object): PostJson => entityJson(Post, post);

const content = Type.String({ maxLength: MAX_CONTENT_LENGTH, description: 'Post text (network limits are checked when scheduling)' });
const media = Type.Array(MediaRef, { maxItems: MAX_MEDIA_PER_POST, description: '`fileName`s of the workspace (upload or import)' });
const articles = Type.Array(Article, { maxItems: MAX_MEDIA_PER_POST });
const threadItems = Type.Array(ThreadItem, { maxItems: MAX_THREAD_ITEMS });

export const CreatePostBody = Type.Object(
  {
    providerId: Type.String({ minLength: 1, maxLength: 100, description: 'Integration id from `POST /integrations/filter-integrations`' }),
    content,
    media: Type.Optional(media),
    articles: Type.Optional(articles),
    threadItems: Type.Optional(threadItems),
    automation: Type.Optional(AutomationInput),
  },
  { additionalProperties: false },
);
export type CreatePostBody = Static<typeof CreatePostBody>;

export const UpdatePostBody = Type.Object(
  {
    providerId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    content: Type.Optional(content),
    media: Type.Optional(media),
    articles: Type.Optional(articles),
    threadItems: Type.Optional(threadItems),
    automation: Type.Optional(AutomationInput),
  },
  { additionalProperties: false, minProperties: 1, description: 'Partial update of a draft: only the properties sent change' },
);
export type UpdatePostBody = Static<typeof UpdatePostBody>;

export const PostSortEntry = Type.Object(
  {
    field: Type.Union(POST_SORT_FIELDS.map((f) => Type.Literal(f))),
    direction: Type.Union([Type.Literal('asc'), Type.Literal('desc')]),
  },
  { additionalProperties: false },
);

export const FilterPostsBody = Type.Object(
  {
    conditions: Type.Optional(
      Type.Array(Type.Ref(postSchemas.Condition), {
        maxItems: 50,
        description:
          'ANDed with `groupedCondition`. Fields: `status` (string: == != IN NOT IN LIKE NOT LIKE), `providerId`, `parentPostId` (ids: == != IN NOT IN IS EMPTY IS NOT EMPTY), ' +
          '`externalPost` (boolean: == !=), `scheduledTime`, `publishedAt`, `createdAt`, `updatedAt` (dates: == != > >= < <= BETWEEN IN IS EMPTY IS NOT EMPTY)',
      }),
    ),
    groupedCondition: Type.Optional(Type.Ref(postSchemas.GroupedCondition)),
    sort: Type.Optional(Type.Array(PostSortEntry, { maxItems: 4, description: 'Default: createdAt desc; a field listed again is ignored (its first mention counts); `id` breaks ties; empty dates sort last ascending, first descending' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
    paginationToken: Type.Optional(PaginationToken),
  },
  { additionalProperties: false },
);
export type FilterPostsBody = Static<typeof FilterPostsBody>;

export const RepostingBody = Type.Object(
  {
    reposting: Type.Object(
      {
        enable: Type.Boolean(),
        reposts: Type.Array(RepostTarget, { maxItems: 50, description: 'One child post per target account' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type RepostingBody = Static<typeof RepostingBody>;

export const PostResponse = DataOf(Post);
export const PostPage = PageOf(Post);
export const PostDeleted = DataOf(
  Type.Object({
    id: Type.String(),
    deleted: Type.Literal(true),
    status: Type.Union([Type.Literal('deleted'), Type.Literal('cancelled')], { description: '`cancelled`: a scheduled post, kept with that status; `deleted`: removed' }),
  }),
);
export const PostIdParams = Type.Object({ postId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
