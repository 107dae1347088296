/** Sources: request and response shapes (API-SPEC "Sources", DESIGN §4). */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { PERIODIC_INTERVAL_DESCRIPTION } from '../../domain/runFrequency.js';
import { KEYWORD_MIN_LENGTH, PAST_DAYS_MAX, PAST_DAYS_MIN, REFRESH_STATUSES, SOURCE_TYPES } from '../../domain/sourceRules.js';
import { DataOf, JsonValue, KeyedRecord, NON_BLANK, PRINTABLE_KEY, PageOf, PaginationToken, VALUE_RULES, WS } from './common.js';
import { NullOnly, contactSchemas, sourceSchemas } from './conditions.js';

export const SourceTypeSchema = Type.Union(
  SOURCE_TYPES.map((t) => Type.Literal(t)),
  {
    description:
      '`pronetInbound` / `pronetOutbound`: people engaging with / engaged by a profile or company page (`sourceIdentifier` = profile or company/page URL); ' +
      '`pronetPost`: people engaging with a post (`sourceIdentifier` = post or activity URL); ' +
      '`pronetKeywordSearch`: authors writing about `sourceMeta.keyword`; `pronetJobPosting`: authors of matching job posts; ' +
      '`importFromWebhook`: rows pushed through `POST /contacts/{sourceId}` and bulk upsert, mapped by `sourceMeta.config.fieldMapping`.',
  },
);

// JsonValue: no NUL in nested strings or keys, which the server cannot store
export const SourceMeta = KeyedRecord(JsonValue, {
  keyMaxLength: 100,
  maxProperties: 50,
  description:
    'Per type: `pronetKeywordSearch` `{keyword (≥3 chars, required), postedTime?, authorTitle?, sourceName?}`; ' +
    '`pronetJobPosting` `{jobTitle, jobLocation, postedTime, jobType (required), sourceName?, fieldMapping?}`; ' +
    '`importFromWebhook` `{config?: {fieldMapping?: [{sourceFieldName, targetFieldName}]}}` (targets are paths of `GET /schema/contact`; without a mapping, pushed rows are keyed by those paths, nested objects flattened); ' +
    'social listening display fields `socialName`, `socialHandle`, `platformName`, `interactionType`, `profileImageUrl`: filled from the ' +
    'source type and URL / keyword when not sent (socialName defaults to sourceName, keyword, job title or the handle), then the first pull ' +
    'replaces a placeholder name with the real one and sets profileImageUrl when the provider knows it; sent values always win. A listening ' +
    "source's answers always carry all five (null while not known, e.g. profileImageUrl before a pull learns it).",
});

export const PastDays = Type.Integer({
  minimum: PAST_DAYS_MIN,
  maximum: PAST_DAYS_MAX,
  description: `Look-back window in days, ${PAST_DAYS_MIN}–${PAST_DAYS_MAX} (1 = the last 24 hours; the interface offers 1, 7, 15, 30, 45, 60, 90)`,
});

export const RunFrequencySchema = Type.Object(
  {
    numberOfPastDaysToSync: Type.String({ maxLength: 20, examples: ['7'], pattern: '^\\s*\\d{1,3}\\s*$', description: `Days each periodic pull looks back: a whole number "${PAST_DAYS_MIN}"–"${PAST_DAYS_MAX}"` }),
    periodicInterval: Type.String({ minLength: 1, maxLength: 40, description: PERIODIC_INTERVAL_DESCRIPTION }),
  },
  { additionalProperties: false },
);

// What validateRunFrequency takes, as patterns (case-insensitive, white space around): every day
// count 1–90, and the interval forms within 15 minutes–90 days that the description names (a
// strict subset of what parseInterval reads: no leading zeros, no week+day or day+hour+minute mixes).
const [M, H, D, W, P, T] = ['m', 'h', 'd', 'w', 'p', 't'].map((c) => `[${c}${c.toUpperCase()}]`);
const MINUTES = '(1[5-9]|[2-9][0-9]|[1-9][0-9]{2,3})';
const HOURS = '[1-9][0-9]{0,2}';
const DAYS = '([1-9]|[1-8][0-9]|90)';
const WEEKS = '([1-9]|1[0-2])';
export const PAST_DAYS_PATTERN = `^${WS}*(0{0,2}[1-9]|0?[1-8][0-9]|090|90)${WS}*$`;
export const PERIODIC_INTERVAL_PATTERN = `^${WS}*(${[
  `${MINUTES}${WS}*${M}`, `${HOURS}${WS}*${H}`, `${DAYS}${WS}*${D}`, `${WEEKS}${WS}*${W}`,
  `${P}${WEEKS}${W}`, `${P}${DAYS}${D}`, `${P}([1-9]|[1-8][0-9])${D}${T}([0-9]|1[0-9]|2[0-3])${H}`,
  `${P}${T}${HOURS}${H}`, `${P}${T}${MINUTES}${M}`, `${P}${T}${HOURS}${H}[0-5]?[0-9]${M}`,
].join('|')})${WS}*$`;
VALUE_RULES.set(PAST_DAYS_PATTERN, `must be a whole number of days from "${PAST_DAYS_MIN}" to "${PAST_DAYS_MAX}"`);
VALUE_RULES.set(PERIODIC_INTERVAL_PATTERN, 'must be an ISO-8601 duration (e.g. PT6H, P1D, P1DT12H) or <n>m/<n>h/<n>d/<n>w (e.g. 30m, 6h, 1d), between 15 minutes and 90 days');
const RunFrequencyInput = Type.Object(
  {
    numberOfPastDaysToSync: Type.String({ maxLength: 20, examples: ['7'], pattern: PAST_DAYS_PATTERN, description: `Days each periodic pull looks back: a whole number "${PAST_DAYS_MIN}"–"${PAST_DAYS_MAX}"` }),
    periodicInterval: Type.String({ maxLength: 40, examples: ['1d'], pattern: PERIODIC_INTERVAL_PATTERN, description: PERIODIC_INTERVAL_DESCRIPTION }),
  },
  { additionalProperties: false },
);

export const SourceAttributes = Type.Object({
  sourceType: SourceTypeSchema,
  sourceIdentifier: Type.Union([Type.String(), Type.Null()]),
  sourceMeta: SourceMeta,
  refreshStatus: Type.Union([...REFRESH_STATUSES.map((s) => Type.Literal(s)), Type.Null()], {
    description: 'null until the first pull; then `queued`, `running`, `succeeded` or `failed`',
  }),
  createdAt: Type.String({ format: 'date-time' }),
  runFrequency: Type.Union([RunFrequencySchema, Type.Null()]),
});

export const Source = Type.Object(
  { id: Type.String({ format: 'uuid' }), type: Type.Literal('sources'), attributes: SourceAttributes },
  { $id: 'Source' },
);
export type SourceJson = Static<typeof Source>;

export const SourceResponse = DataOf(Source);
export const SourceList = Type.Object({ data: Type.Array(Source) });
export const SourcePage = PageOf(Source);

const SourceIdentifier = Type.String({ minLength: 1, maxLength: 2048, description: 'Profile, company/page or post URL for the pronet URL types; omitted for keyword and job sources; optional name for webhook sources' });
const SegmentIdField = Type.String({ minLength: 1, maxLength: 100, description: 'Attaches the source to this segment of the workspace (404 when unknown)' });

const sourceInputProps = {
  sourceType: SourceTypeSchema,
  sourceIdentifier: Type.Optional(Type.Union([SourceIdentifier, Type.Null()])),
  sourceMeta: Type.Optional(SourceMeta),
  segmentId: Type.Optional(SegmentIdField),
};

// The per-type rules of domain/sourceRules.ts that JSON Schema can carry, one branch per type
// (api/validation.ts reports only the branch whose `sourceType` the body names): the URL shapes
// classifyPronetUrl takes (a strict subset: ASCII host labels, a letter TLD, path segments not
// starting with `.`), no identifier for keyword and job searches, the sourceMeta fields each type
// needs, fieldMapping entries whose target is a writable path of the contact catalog.
const anyCase = (word: string) => [...word].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('');
const urlOf = (paths: string) =>
  `^(${anyCase('http')}[Ss]?://)?([A-Za-z0-9_-]+\\.)+[A-Za-z]{2,}/(${paths})/*(\\?[A-Za-z0-9_.~%=&+-]*)?$`;
const SEGMENT = '[A-Za-z0-9_~-][A-Za-z0-9_.~-]*';
export const PROFILE_OR_COMPANY_URL_PATTERN = urlOf(`(${['in', 'pub', 'company', 'showcase', 'school', 'page'].map(anyCase).join('|')})/${SEGMENT}`);
export const POST_URL_PATTERN = urlOf(
  `${anyCase('posts')}/${SEGMENT}|${anyCase('activity')}/[0-9]+|${anyCase('feed')}/${anyCase('update')}/${anyCase('urn')}:${anyCase('li')}:(${['activity', 'share', 'ugcpost'].map(anyCase).join('|')}):[0-9A-Za-z_-]+`,
);
const PROFILE_OR_COMPANY_URL = 'must be a profile URL (…/in/<name>) or a company/page URL (…/company/<name>)';
const POST_URL = 'must be a post URL (…/posts/<slug>) or an activity URL (…/feed/update/urn:li:activity:<id>)';
/** At least KEYWORD_MIN_LENGTH characters once trimmed (the server counts code points). */
const NOT_WS = `[^\\u0000${WS.slice(1, -1)}]`;
const KEYWORD_PATTERN = `^${WS}*${NOT_WS}[^\\u0000]{${KEYWORD_MIN_LENGTH - 2},}${NOT_WS}${WS}*$`;
VALUE_RULES.set(PROFILE_OR_COMPANY_URL_PATTERN, PROFILE_OR_COMPANY_URL);
VALUE_RULES.set(POST_URL_PATTERN, POST_URL);
VALUE_RULES.set(KEYWORD_PATTERN, `must have at least ${KEYWORD_MIN_LENGTH} characters besides surrounding whitespace`);

const NoIdentifier = Type.Optional(NullOnly('Not given for this type'));
const MetaText = (pattern = NON_BLANK) => Type.String({ maxLength: 500, pattern });
const OptionalMetaText = Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()]));
const FieldMappingInput = Type.Array(
  Type.Object(
    {
      sourceFieldName: Type.String({ maxLength: 300, pattern: NON_BLANK, not: { const: '__proto__' }, description: 'A key of the pushed rows (not `__proto__`)' }),
      targetFieldName: contactSchemas.WritablePath,
    },
    { additionalProperties: false },
  ),
  { maxItems: 500, description: 'Each sourceFieldName at most once' },
);
// other members: JsonValue (no NUL in nested strings or keys, which the server cannot store)
const MappingConfig = Type.Optional(Type.Object({ fieldMapping: Type.Optional(Type.Union([FieldMappingInput, Type.Null()])) }, { additionalProperties: JsonValue }));
// The keys of every branch's sourceMeta follow SourceMeta's rule, which the response publishes.
const metaWith = (props: Record<string, TSchema>) =>
  Type.Object(props, { additionalProperties: JsonValue, maxProperties: 50, propertyNames: { minLength: 1, maxLength: 100, pattern: PRINTABLE_KEY } });
const branch = (types: readonly string[], sourceIdentifier: TSchema, sourceMeta: TSchema, description: string) =>
  Type.Object(
    {
      sourceType: types.length === 1 ? Type.Literal(types[0]!) : Type.Union(types.map((t) => Type.Literal(t))),
      sourceIdentifier,
      sourceMeta,
      segmentId: Type.Optional(SegmentIdField),
    },
    { additionalProperties: false, description },
  );

/** The loose shape every branch of {@link SourceInput} fits: the handlers' type. */
const SourceInputShape = Type.Object(sourceInputProps, { additionalProperties: false });

/** One branch per source type (`sourceType` tells them apart). */
const SourceInput = Type.Unsafe<Static<typeof SourceInputShape>>(Type.Union(
  [
    branch(
      ['pronetInbound', 'pronetOutbound'],
      Type.String({ maxLength: 2048, pattern: PROFILE_OR_COMPANY_URL_PATTERN, examples: ['https://www.pronet.example/in/jane-doe'], description: 'A profile URL (`…/in/<name>`) or a company/page URL (`…/company/<name>`)' }),
      Type.Optional(SourceMeta),
      'People engaging with / engaged by a profile or company page',
    ),
    branch(
      ['pronetPost'],
      Type.String({ maxLength: 2048, pattern: POST_URL_PATTERN, examples: ['https://www.pronet.example/feed/update/urn:li:activity:7251234567890123456'], description: 'A post URL (`…/posts/<slug>`) or an activity URL (`…/feed/update/urn:li:activity:<id>`)' }),
      Type.Optional(SourceMeta),
      'People engaging with a post',
    ),
    branch(
      ['pronetKeywordSearch'],
      NoIdentifier,
      metaWith({ keyword: MetaText(KEYWORD_PATTERN), postedTime: OptionalMetaText, authorTitle: OptionalMetaText, sourceName: OptionalMetaText }),
      `Authors writing about \`sourceMeta.keyword\` (at least ${KEYWORD_MIN_LENGTH} characters)`,
    ),
    branch(
      ['pronetJobPosting'],
      NoIdentifier,
      metaWith({
        jobTitle: MetaText(), jobLocation: MetaText(), postedTime: MetaText(), jobType: MetaText(), sourceName: OptionalMetaText,
        fieldMapping: Type.Optional(Type.Union([FieldMappingInput, Type.Null()])), config: MappingConfig,
      }),
      'Authors of matching job posts',
    ),
    branch(
      ['importFromWebhook'],
      Type.Optional(Type.Union([SourceIdentifier, Type.Null()])),
      Type.Optional(metaWith({ config: MappingConfig })),
      'Rows pushed through `POST /contacts/{sourceId}` and bulk upsert, mapped by `sourceMeta.config.fieldMapping`',
    ),
  ],
  { description: 'A repeated (sourceType, sourceIdentifier) — same normalised URL, or same keyword/job search — returns the existing source with 200.' },
));
export const CreateSourceBody = SourceInput;
export type CreateSourceBody = Static<typeof SourceInputShape>;

export const PatchSourceBody = Type.Object(
  {
    sourceMeta: Type.Optional(KeyedRecord(JsonValue, {
      keyMaxLength: 100,
      maxProperties: 50,
      description: 'Merged into the stored sourceMeta (a key set to null is removed); the per-type rules are checked on the result',
    })),
    runFrequency: Type.Optional(Type.Union([Type.Partial(RunFrequencyInput, { additionalProperties: false, minProperties: 1 }), Type.Null()], {
      description:
        'Creates or updates the Temporal Schedule that pulls the source every `periodicInterval`; null removes it. A field left out ' +
        'keeps its stored value (both are needed when the source has no runFrequency yet)',
    })),
  },
  { additionalProperties: false },
);
export type PatchSourceBody = Static<typeof PatchSourceBody>;

export const SOURCE_FILTER_FIELDS = [
  'sourceIdentifier',
  'refreshStatus',
  'createdAt',
  'segmentIds',
  'sourceMeta.sourceName',
  'sourceMeta.keyword',
  'sourceMeta.jobTitle',
  'sourceMeta.jobLocation',
  'sourceMeta.socialName',
  'sourceMeta.socialHandle',
  'sourceMeta.platformName',
  'sourceMeta.interactionType',
] as const;

export const FilterSourcesParams = Type.Object({ sourceType: SourceTypeSchema }, { additionalProperties: false });
export const FilterSourcesBody = Type.Object(
  {
    conditions: Type.Optional(Type.Array(Type.Ref(sourceSchemas.Condition), {
      maxItems: 50,
      description: `ANDed conditions on ${SOURCE_FILTER_FIELDS.map((f) => `\`${f}\``).join(', ')} (\`segmentIds\` is multi-value: \`IN\` a segment id lists its sources)`,
    })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    paginationToken: Type.Optional(PaginationToken),
  },
  { additionalProperties: false },
);
export type FilterSourcesBody = Static<typeof FilterSourcesBody>;

export const BulkUpsertSourcesBody = Type.Object(
  {
    sources: Type.Array(SourceInput, { minItems: 1, maxItems: 100 }),
  },
  {
    additionalProperties: false,
    description:
      'Creates each source, or — when the workspace already has one with the same type and identifier — merges the given sourceMeta into it. ' +
      'All items are validated first; one invalid item is a 400 naming `/sources/<i>/…` and nothing is written.',
  },
);
export type BulkUpsertSourcesBody = Static<typeof BulkUpsertSourcesBody>;

export const BulkUpsertSourcesResponse = Type.Object({
  data: Type.Array(Source, { description: 'In the order of the request' }),
  meta: Type.Object({ created: Type.Integer(), updated: Type.Integer() }),
});

export const BulkFetchSourcesBody = Type.Object(
  { sourceIds: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100, description: 'Unknown and foreign ids are simply absent from `data`' }) },
  { additionalProperties: false },
);

export const BulkUpdateSourcesBody = Type.Object(
  {
    sources: Type.Array(
      Type.Object(
        { id: Type.String({ minLength: 1, maxLength: 100 }), ...PatchSourceBody.properties },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { additionalProperties: false, description: 'Each item is a PATCH of one source; every id must belong to the workspace (else 404 and nothing changes).' },
);
export type BulkUpdateSourcesBody = Static<typeof BulkUpdateSourcesBody>;

export const PullBody = Type.Object(
  {
    segmentId: Type.Optional(SegmentIdField),
    numberOfPastDaysToSync: Type.Optional(PastDays),
  },
  { additionalProperties: false },
);
export type PullBody = Static<typeof PullBody>;

