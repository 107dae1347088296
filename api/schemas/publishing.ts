/** Scheduling and publishing: bulk-schedule, unschedule, external replies. */
import { Type, type Static } from '@sinclair/typebox';
import { AutomationInput } from '../../domain/social.js';
import { NonBlankString } from './common.js';
import { PRONET_POST_URL_PATTERN } from '../../domain/pronetUrls.js';
import { SCHEDULED_TIME_PATTERN } from '../../domain/publishing.js';

/** Rows one bulk-schedule request may carry in total. */
export const MAX_SCHEDULE_ROWS = 10_000;
/** pronet's limit for a comment. */
export const MAX_COMMENT_LENGTH = 1250;

// "In the future" depends on the clock at request time: JSON Schema cannot carry it (the one rule
// of these operations it cannot, named in their descriptions); the shape it can.
const ScheduledTime = Type.String({
  minLength: 1,
  maxLength: 40,
  format: 'date-time',
  pattern: SCHEDULED_TIME_PATTERN,
  description: 'ISO 8601 date-time with a time zone, in the future (e.g. `2026-11-21T17:45:00.000Z`)',
});

export const ScheduleRow = Type.Object(
  {
    providerId: Type.String({ minLength: 1, maxLength: 100, description: 'Integration id of a connected account whose kind suits the post' }),
    scheduledTime: ScheduledTime,
    automation: Type.Optional(AutomationInput),
  },
  { additionalProperties: false },
);

export const BulkScheduleBody = Type.Object(
  {
    posts: Type.Array(
      Type.Object(
        {
          postId: Type.String({ minLength: 1, maxLength: 100, description: 'A draft or scheduled post of the workspace' }),
          schedules: Type.Array(ScheduleRow, { minItems: 1, maxItems: 100, description: 'One publish per row; replaces the post’s earlier schedule' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_SCHEDULE_ROWS, description: `At most ${MAX_SCHEDULE_ROWS} schedule rows in total` },
    ),
  },
  { additionalProperties: false },
);
export type BulkScheduleBody = Static<typeof BulkScheduleBody>;

export const MessageResponse = Type.Object({ message: Type.String() }, { additionalProperties: false });

export const ExternalReplyBody = Type.Object(
  {
    externalPostUrl: Type.String({
      minLength: 1,
      maxLength: 2000,
      pattern: PRONET_POST_URL_PATTERN,
      examples: ['https://www.linkedin.com/feed/update/urn:li:activity:7150000000000000000/'],
      description: 'The pronet post to comment on: a feed/update URL, a /posts/ URL, or an activity/ugcPost/share URN',
    }),
    content: NonBlankString({ maxLength: MAX_COMMENT_LENGTH }),
    scheduledTime: ScheduledTime,
    providerId: Type.String({ minLength: 1, maxLength: 100, description: 'Integration id of a connected `pronet` or `pronetPage` account' }),
  },
  { additionalProperties: false },
);
export type ExternalReplyBody = Static<typeof ExternalReplyBody>;
