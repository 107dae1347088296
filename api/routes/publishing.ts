/**
 * Scheduling: bulk-schedule (validate every row first, then write all rows in one transaction
 * and hand them to one dispatch workflow that starts one publish workflow per row), unschedule
 * (cancels the waiting rows and tells their workflows), and scheduled comments on external
 * pronet posts (a draft with `externalPost: true` scheduled through the same pipeline): each an
 * adapter of its use case (api/usecases/schedulePosts.ts, unschedulePost.ts).
 * Mounted before the posts routes: these static paths share the `/v1/posts/` prefix.
 */
import { defineRoute } from '../route.js';
import { PostIdParams, PostResponse } from '../schemas/posts.js';
import { BulkScheduleBody, ExternalReplyBody, MAX_SCHEDULE_ROWS, MessageResponse } from '../schemas/publishing.js';
import { bulkSchedule, scheduleExternalReply } from '../usecases/schedulePosts.js';
import { unschedulePost } from '../usecases/unschedulePost.js';

/**
 * Named in the descriptions of the operations that take a `scheduledTime`: the one rule of theirs
 * JSON Schema cannot carry (issue 27 item 21; scripts/fuzz_hooks.py excuses exactly this refusal).
 */
export const SCHEDULED_TIME_RULE =
  ' Rule outside the schema: `scheduledTime` must be in the future when the request arrives (a property of the clock, which JSON Schema ' +
  'cannot carry; its shape is in the schema); a past time answers 400 `validation_failed` "must be in the future" naming the field.';

export const publishingRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/posts/bulk-schedule',
    tag: 'Social publishing',
    summary: 'Schedule posts, one publish per schedule row',
    description:
      'Every row is validated first (post of the workspace in `draft` or `scheduled`; `providerId` a connected integration whose ' +
      'kind suits the post and its content; `scheduledTime` ISO 8601 in the future; `automation` valid). Any failure answers 400 ' +
      'naming the rows (`/posts/3/schedules/0/scheduledTime`) and schedules nothing. Otherwise each row gets a publish workflow ' +
      '(`publish-<postId>-<n>`) waiting durably for `scheduledTime`; scheduling a post again replaces its rows and reschedules the ' +
      `running workflows. At most ${MAX_SCHEDULE_ROWS} rows per request.` +
      SCHEDULED_TIME_RULE,
    body: BulkScheduleBody,
    bodyLimit: 'bulk', // up to MAX_SCHEDULE_ROWS rows
    responses: { 200: MessageResponse },
    errors: [400, 401, 404, 409, 500], errorCodes: ['invalid_post_state'],
    idempotent: true,
    handler: ({ body, scope, deps }) => bulkSchedule(scope, deps, body),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/posts/external-linkedin-reply',
    tag: 'Social publishing',
    summary: 'Schedule a comment on an external pronet post',
    description:
      'Creates a draft with `externalPost: true` and schedules it like any post: at `scheduledTime` the comment is published on the ' +
      'thread resolved from `externalPostUrl` (feed/update URLs, /posts/ URLs, activity/ugcPost/share URNs). `providerId` must be a ' +
      'connected `pronet` or `pronetPage` integration. Answers the scheduled post.' +
      SCHEDULED_TIME_RULE,
    body: ExternalReplyBody,
    responses: { 200: PostResponse },
    errors: [400, 401, 404, 500],
    idempotent: true,
    handler: ({ body, scope, deps }) => scheduleExternalReply(scope, deps, body),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/posts/{postId}/unschedule',
    tag: 'Social publishing',
    summary: 'Unschedule a post',
    description:
      'Cancels the waiting publishes of a scheduled post (their workflows are told and stop) and makes it a draft again; its repost ' +
      'children become drafts. A repost child is cancelled. A post already publishing or published answers 409.',
    params: PostIdParams,
    responses: { 200: PostResponse },
    errors: [401, 404, 409, 500], errorCodes: ['invalid_post_state'],
    handler: ({ params, scope, deps }) => unschedulePost(scope, deps, params.postId),
  }),
];
