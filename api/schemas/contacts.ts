/** Request and response shapes of the Contacts group (API-SPEC "Contacts", DESIGN §3-4). */
import { LIMITS } from '../../domain/conditions.js';
import { Type, type Static } from '@sinclair/typebox';
import { contactSchemas, UUID_PATTERN } from './conditions.js';
import { EMAIL_OR_BLANK_PATTERN, EMAIL_PATTERN, HEADCOUNT_PATTERN, JobAccepted, JsonValue, KeyedRecord, orEmpty, PaginationMeta, PaginationToken, PROFILE_URL_PATTERN, WEBSITE_PATTERN, WebhookConfiguration } from './common.js';
import { ContactSchema } from '../../domain/contactShape.js';

/** With `fields`, an item carries `id` plus the requested paths nested as in the Contact shape. */
export const ContactItem = Type.Union([
  ContactSchema,
  Type.Object(
    { id: Type.String() },
    {
      additionalProperties: true,
      description:
        'With `fields`: `id` plus exactly the requested paths, nested as in the Contact shape, with the values the full contact has ' +
        '(`null` when unknown; `company: null` when the contact has no company)',
    },
  ),
]);

export const ContactResponse = Type.Object({ data: ContactSchema });
export const ContactList = Type.Object({ data: Type.Array(ContactSchema) });
export const ContactPage = Type.Object({ data: Type.Array(ContactItem), meta: Type.Ref(PaginationMeta) });

export const ContactIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export const SourceIdParams = Type.Object({ sourceId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export const SegmentIdParams = Type.Object({ segmentId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

export const BulkFetchBody = Type.Object(
  { contactIds: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);

const Fields = Type.Array(contactSchemas.FieldPath, {
  minItems: 1,
  maxItems: 200,
  description: '`writeAccessPath`s from `GET /schema/contact`; each item carries `id` plus these paths',
});
export const ContactConditions = Type.Array(Type.Ref(contactSchemas.Condition), { maxItems: LIMITS.maxLeaves, description: 'AND-ed with `groupedCondition`' });
export const ContactGroupedCondition = Type.Ref(contactSchemas.GroupedCondition);
const Sort = Type.Array(contactSchemas.SortEntry, {
  maxItems: 5,
  description: 'Sort keys (not multi-value fields); the contact id breaks ties. Default: creation order',
});
const Limit = Type.Integer({ minimum: 1, maximum: 1000, default: 100 });

export const FilterContactsBody = Type.Object(
  {
    fields: Type.Optional(Fields),
    conditions: Type.Optional(ContactConditions),
    groupedCondition: Type.Optional(ContactGroupedCondition),
    limit: Type.Optional(Limit),
    paginationToken: Type.Optional(PaginationToken),
    sort: Type.Optional(Sort),
  },
  { additionalProperties: false },
);
export type FilterContactsBody = Static<typeof FilterContactsBody>;

/** The filter body with `fields` required. */
export const BySegmentBody = Type.Object({ ...FilterContactsBody.properties, fields: Fields }, { additionalProperties: false });

export const UniqueValuesBody = Type.Object(
  {
    groupByField: contactSchemas.FieldPath,
    conditions: Type.Optional(ContactConditions),
    groupedCondition: Type.Optional(ContactGroupedCondition),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);
export const UniqueValuesResponse = Type.Object({
  data: Type.Array(Type.Object({ value: Type.Unknown(), count: Type.Integer() })),
});

const NullableString = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]);
/** What JSON Schema cannot carry: a custom field's type and options are the workspace's own (issue 27 item 21). */
const CUSTOM_FIELD_VALUE_RULE =
  "Ids and values are checked against the workspace's own custom fields (type, options; GET /schema/contact), which this document cannot state: an id it does not have, or a value that does not fit, is a 400 naming `/customFields/<id>`.";
export const PatchContactBody = Type.Object(
  {
    firstName: Type.Optional(NullableString),
    lastName: Type.Optional(NullableString),
    fullName: Type.Optional(NullableString),
    title: Type.Optional(NullableString),
    pronet: Type.Optional(Type.Union([Type.String({ maxLength: 2000, pattern: orEmpty(PROFILE_URL_PATTERN), description: 'A profile URL; empty clears it' }), Type.Null()])),
    workEmail: Type.Optional(Type.Union([Type.String({ maxLength: 320, pattern: EMAIL_OR_BLANK_PATTERN, examples: ['ada@analytical.example'], description: 'An email address; empty clears it' }), Type.Null()])),
    emails: Type.Optional(Type.Array(Type.String({ maxLength: 320, pattern: EMAIL_PATTERN, examples: ['ada@analytical.example'], description: 'An email address' }), { maxItems: 50 })),
    company: Type.Optional(
      Type.Object(
        {
          companyName: Type.Optional(NullableString),
          companyWebsite: Type.Optional(Type.Union([Type.String({ maxLength: 2000, pattern: orEmpty(WEBSITE_PATTERN), description: 'A website URL or domain; empty clears it' }), Type.Null()])),
          companyIndustry: Type.Optional(NullableString),
          companyHeadcount: Type.Optional(
            Type.Union([Type.String({ maxLength: 21, pattern: orEmpty(HEADCOUNT_PATTERN) }), Type.Null()], {
              description: 'A range `<min>-<max>` of whole numbers, min ≤ max (e.g. `51-200`; a min above the max is a 400 naming `/company/companyHeadcount`); empty clears it',
            }),
          ),
          companyPronet: Type.Optional(NullableString),
        },
        { additionalProperties: false },
      ),
    ),
    customFields: Type.Optional(
      KeyedRecord(JsonValue, {
        keyPattern: UUID_PATTERN,
        keyMaxLength: 36,
        maxProperties: 500,
        description: `Custom field id → value; null removes the value. ${CUSTOM_FIELD_VALUE_RULE}`,
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchContactBody = Static<typeof PatchContactBody>;

export const ContactDeleted = Type.Object({ data: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) });

export const UpsertContactBody = KeyedRecord(JsonValue, {
  keyMaxLength: 300,
  maxProperties: 500,
  description:
    'Row keyed by `contact.<name>` / `company.<name>` / `contact.customFields.<id>` paths, or by the columns of the source\'s `sourceMeta.config.fieldMapping`; `_ORIGIN_` (tracing) and `_ROW_KEY_` (stable row key) are kept',
});

/** Largest batch one request may stage (bounded by the body size limit too). */
export const MAX_BULK_ROWS = 100_000;

export const BulkUpsertBody = Type.Object(
  {
    contactsData: Type.Array(KeyedRecord(JsonValue, { keyMaxLength: 300, maxProperties: 500 }), {
      maxItems: MAX_BULK_ROWS,
      description: 'The rows (1 to 100,000). Send `[]` with `contactsFile`: the rows then come from the file.',
    }),
    contactsFile: Type.Optional(
      Type.Object(
        {
          fileName: Type.String({
            minLength: 1,
            maxLength: 300,
            description:
              'A `fileName` of `POST /v1/media/upload` or `POST /v1/media/assemble-chunks` whose detected type is `text/csv` ' +
              '(header line of column names, comma-separated, RFC 4180 quoting, UTF-8, BOM allowed) or `application/x-ndjson` ' +
              '(one JSON object per line), ≤ 1 GiB (imports of 1,000,000 rows are benchmarked)',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    segmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    webhookConfiguration: Type.Optional(Type.Ref(WebhookConfiguration)),
  },
  {
    additionalProperties: false,
    // The handler's rule: rows, or a file (then `contactsData` is `[]`).
    oneOf: [{ properties: { contactsData: { minItems: 1 } }, not: { required: ['contactsFile'] } }, { required: ['contactsFile'], properties: { contactsData: { maxItems: 0 } } }],
  },
);
export type BulkUpsertBody = Static<typeof BulkUpsertBody>;

export { JobAccepted };
