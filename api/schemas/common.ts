/** Shapes shared by several endpoint groups. */
import { Type, type Static, type TSchema, type TString } from '@sinclair/typebox';
import { LIMITS, MAX_NUMERIC } from '../../domain/conditions.js';
import { LIKE_RULE } from '../../domain/like.js';
import { ISO_DATE_PATTERN, ISO_DATE_RULE, LIKE_PATTERN, catalogSharedSchemas } from './conditions.js';

export const OPERATORS = ['==', '!=', 'LIKE', 'NOT LIKE', 'IN', 'NOT IN', 'ALL', 'IS EMPTY', 'IS NOT EMPTY', '>', '>=', '<', '<=', 'BETWEEN'] as const;
export const GROUP_OPERATORS = ['AND', 'OR', 'NOT'] as const;

const Scalar = Type.Union([Type.String({ maxLength: LIMITS.maxStringLength }), Type.Number({ minimum: -MAX_NUMERIC, maximum: MAX_NUMERIC }), Type.Boolean()]);

/**
 * A JSON object keyed by client-chosen names. TypeBox's `Type.Record` emits only
 * `patternProperties`, which checks neither the names that miss the pattern nor their length;
 * this emits `propertyNames` (pattern + maxLength) and `additionalProperties` for the values, so
 * every key is checked and a bad one is a 400 naming `/<path>/<key>`.
 */
export function KeyedRecord<V extends TSchema>(
  value: V,
  opts: { keyPattern?: string; keyMaxLength?: number; minProperties?: number; maxProperties?: number; description?: string } = {},
) {
  const { keyPattern = PRINTABLE_KEY, keyMaxLength = 200, ...rest } = opts;
  const names: TString = Type.String({ minLength: 1, maxLength: keyMaxLength, pattern: keyPattern });
  return Type.Unsafe<Record<string, Static<V>>>({ type: 'object', propertyNames: names, additionalProperties: value, maxProperties: 1000, ...rest });
}
/**
 * Free-form JSON a client stores as sent (segment workflows, custom field values, upserted row
 * values): what domain/inputSafety.ts lets through, said as a schema, so nested keys and strings
 * carry no NUL (every string gets NO_NUL from api/validation.ts `noNul`; keys get JSON_KEY).
 */
const JSON_KEY = '^[^\\u0000]*$';
const JsonValueSchema = Type.Recursive(
  (Self) =>
    Type.Union([
      Type.String(),
      Type.Number(),
      Type.Boolean(),
      Type.Null(),
      Type.Array(Self),
      Type.Unsafe({ type: 'object', propertyNames: { type: 'string', pattern: JSON_KEY }, additionalProperties: Self }),
    ]),
  { $id: 'JsonValue', description: 'Any JSON value; no NUL (U+0000) in its strings or keys' },
);
export const JsonValue = Type.Unsafe<unknown>(JsonValueSchema);

/** Default key rule: no control characters (C0, DEL, C1). */
export const PRINTABLE_KEY = '^[^\\u0000-\\u001f\\u007f-\\u009f]+$';

/**
 * An email address as contact writes check it (domain/contactMapping.ts `EMAIL` after trim):
 * `local@domain.tld` without white space, surrounding white space allowed. The class spells out
 * JavaScript's `\s` (what `trim` removes), so a generator whose `\s` differs (Python's) agrees.
 */
export const WS = '[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';
const NOT_WS_OR_AT = '[^@\\u0000\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';
export const EMAIL_PATTERN = `^${WS}*${NOT_WS_OR_AT}+@${NOT_WS_OR_AT}+\\.${NOT_WS_OR_AT}+${WS}*$`;
/** The same, or empty / white space only (a value that clears the field). */
export const EMAIL_OR_BLANK_PATTERN = `^${WS}*(${NOT_WS_OR_AT}+@${NOT_WS_OR_AT}+\\.${NOT_WS_OR_AT}+)?${WS}*$`;

/** A profile URL: host.tld/path once scheme, trailing slashes, query and fragment are dropped (what lookups key on). */
export const PROFILE_URL_PATTERN = '^([hH][tT][tT][pP][sS]?://)?[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+/[^?#\\s\\u0000]*[^/?#\\s\\u0000]/*([?#][^\\u0000]*)?$';
/** A website URL or bare domain (domain/identity.ts `normalizeDomain` finds its host). */
export const WEBSITE_PATTERN = '^([hH][tT][tT][pP][sS]?://)?[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+([/?#:][^\\u0000]*)?$';
/** `pattern`, or the empty string (a value that clears the field). */
export const orEmpty = (pattern: string) => `^$|${pattern}`;
/** `<min>-<max>`, whole numbers (domain/contactMapping.ts headcountRangeError; min ≤ max is the server's check). */
export const HEADCOUNT_PATTERN = '^[0-9]{1,10}-[0-9]{1,10}$';

/** A name or identifier a person reads: at least one character that is not white space. */
// Spelled out (JavaScript's white space, as `WS` above) so a generator whose `\s` differs agrees; no NUL anywhere.
export const NON_BLANK = `^[^\\u0000]*[^\\u0000${WS.slice(1, -1)}][^\\u0000]*$`;
export function NonBlankString(opts: { minLength?: number; maxLength: number; description?: string }): TString {
  return Type.String({ minLength: 1, ...opts, pattern: NON_BLANK });
}
/** A string without NUL (U+0000), which PostgreSQL cannot store: the pattern of every free request string (api/validation.ts noNul). */
export const NO_NUL = '^[^\\u0000]*$';
/** What each value pattern means, for error messages (ajv would quote the regular expression). */
export const VALUE_RULES = new Map<string, string>([
  [NON_BLANK, 'must not be blank'],
  [NO_NUL, 'must not contain NUL (U+0000) characters'],
  [orEmpty(PROFILE_URL_PATTERN), 'must be a profile URL (host/path), or empty'],
  [orEmpty(WEBSITE_PATTERN), 'must be a website URL or domain, or empty'],
  [orEmpty(HEADCOUNT_PATTERN), 'must be a headcount range of the form <min>-<max> (e.g. 51-200), or empty'],
  [ISO_DATE_PATTERN, ISO_DATE_RULE],
  [LIKE_PATTERN, LIKE_RULE],
]);

/** RFC 9110 `token` (tchar+): what an HTTP field name may be. */
const HTTP_TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]{1,100}";
/**
 * Headers the delivery sets itself (signature, framing, content type) or that are hop-by-hop:
 * a caller may not send them.
 */
export const RESERVED_WEBHOOK_HEADERS = [
  'host', 'content-length', 'content-type', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade',
  'te', 'trailer', 'proxy-connection', 'expect', 'webhook-id', 'webhook-timestamp', 'webhook-signature',
] as const;
const caseless = (s: string) => s.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
const HEADER_NAME = `^(?!(?:${RESERVED_WEBHOOK_HEADERS.map(caseless).join('|')})$)${HTTP_TOKEN}$`;
/** Values HTTP can carry: tab, visible ASCII, space and Latin-1 (no CR, LF, NUL, no code point above U+00FF). */
/** What each key pattern means, for error messages (ajv would quote the regular expression). */
export const KEY_RULES = new Map<string, string>([
  [PRINTABLE_KEY, 'must not contain control characters'],
  [HEADER_NAME, `a header name is an HTTP token (letters, digits, !#$%&'*+-.^_\`|~), at most 100 characters, and not one of ${RESERVED_WEBHOOK_HEADERS.join(', ')}`],
]);
const HEADER_VALUE = '^[\\t\\u0020-\\u007e\\u0080-\\u00ff]*$';

export const Condition = Type.Object(
  {
    field: Type.String({ minLength: 1, maxLength: 300, description: 'A `writeAccessPath` from the matching schema endpoint' }),
    operator: Type.Union(OPERATORS.map((o) => Type.Literal(o)), { description: 'Valid operators depend on the field type' }),
    value: Type.Optional(Type.Union([Scalar, Type.Array(Scalar, { maxItems: LIMITS.maxListItems }), Type.Null()])),
  },
  { additionalProperties: false, $id: 'Condition' },
);
export type Condition = Static<typeof Condition>;

export const GroupedCondition = Type.Recursive(
  (Self) =>
    Type.Object(
      {
        operator: Type.Union(GROUP_OPERATORS.map((o) => Type.Literal(o))),
        conditions: Type.Array(Type.Union([Type.Ref(Condition), Self]), { minItems: 1, maxItems: LIMITS.maxLeaves }),
      },
      { additionalProperties: false },
    ),
  { $id: 'GroupedCondition' },
);
export type GroupedCondition = Static<typeof GroupedCondition>;

export const PaginationMeta = Type.Object(
  { totalRecords: Type.Integer(), previousToken: Type.String(), nextToken: Type.String() },
  { $id: 'PaginationMeta' },
);

export const PaginationToken = Type.String({ maxLength: 2048, description: 'Opaque token from `meta.nextToken` or `meta.previousToken`' });

export const WebhookConfiguration = Type.Object(
  {
    url: Type.String({ format: 'uri', maxLength: 2048, description: 'Public http(s) URL notified when the job ends' }),
    headers: Type.Optional(
      KeyedRecord(Type.String({ maxLength: 4096, pattern: HEADER_VALUE }), {
        keyPattern: HEADER_NAME,
        keyMaxLength: 100,
        maxProperties: 50,
        description: `Extra request headers: names are HTTP tokens (≤ 100 characters) other than ${RESERVED_WEBHOOK_HEADERS.join(', ')}; values ≤ 4096 characters of visible ASCII, space, tab or Latin-1`,
      }),
    ),
  },
  { additionalProperties: false, $id: 'WebhookConfiguration' },
);

export const JobAccepted = Type.Object(
  {
    message: Type.String(),
    jobId: Type.String(),
    jobStatusEndpoint: Type.String({ format: 'uri' }),
  },
  { $id: 'JobAccepted' },
);

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      status: Type.Integer(),
      code: Type.String(),
      message: Type.String(),
      details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
      requestId: Type.String(),
    }),
  },
  { $id: 'Error' },
);

/** `{ data: T }` */
export const DataOf = <T extends TSchema>(t: T) => Type.Object({ data: t });
/** `{ data: T[], meta }` */
export const PageOf = <T extends TSchema>(t: T) => Type.Object({ data: Type.Array(t), meta: Type.Ref(PaginationMeta) });

/**
 * Path ids. Rule (DESIGN §3): a malformed id — not a UUID — names no resource, so it is a 404
 * like a missing one, answered before any query (`isUuid` of domain/ids.ts in every
 * loader); the schema only bounds the length.
 */
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

/** Schemas referenced by `$ref` from route schemas; registered with ajv and published in OpenAPI components. */
export const sharedSchemas: TSchema[] = [Condition, GroupedCondition, ...catalogSharedSchemas, JsonValueSchema, PaginationMeta, WebhookConfiguration, JobAccepted, ErrorEnvelope];
