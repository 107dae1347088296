/** Request and response shapes of the Discovery search group and the discovery Schema endpoints. */
import { LIMITS } from '../../domain/conditions.js';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { NonBlankString, PaginationMeta, PaginationToken, WebhookConfiguration } from './common.js';
import { discoveryCompanySchemas, discoveryContactSchemas, type CatalogSchemas } from './conditions.js';
import { SIZE_RANGES } from '../../domain/datasetGenerator.js';
import { VERIFIED_RESULT_FIELDS, type DiscoveryEntity } from '../../domain/discoveryCatalog.js';
import { VERIFIED_SCHEMA_VERSION, childOptions, hasSuggestions, v2OptionsColumn, v2SchemaItems } from '../../domain/discoverySchemaItems.js';
import { MAX_AMOUNT, VERIFIED_INPUTS, VERIFIED_MAX_LIMIT, VERIFIED_MAX_LIST, VERIFIED_MAX_PAGE, VERIFIED_RANKING_DOC } from '../../domain/verifiedSearchInput.js';
import { V2_DEFAULT_LIMIT, V2_EXACT_COUNT_DOC, V2_MAX_LIMIT } from '../../db/discoverySearch.js';

// ---------------------------------------------------------------------------------------------
// v2 search

/** The body of a v2 search over the fixed catalog of its entity (paths, operators and values per field type). */
const v2SearchBody = (schemas: CatalogSchemas) => Type.Object(
  {
    groupedCondition: Type.Optional(Type.Ref(schemas.GroupedCondition)),
    conditions: Type.Optional(Type.Array(Type.Ref(schemas.Condition), { maxItems: LIMITS.maxLeaves, description: 'Root conditions, AND-ed with `groupedCondition`' })),
    fields: Type.Optional(
      Type.Array(schemas.FieldPath, {
        minItems: 1,
        maxItems: 100,
        description:
          'Paths from the discovery-search-v2 schema (`dsContact.*`, `dsCompany.*`); each item carries `id` plus these. In a company search `dsContact.*` paths ' +
          "fill each company's `contacts` (its matching people). Default: the Contact / Company record fields",
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: V2_MAX_LIMIT, default: V2_DEFAULT_LIMIT, description: 'Rows per page; caps results and credit use (1 credit per row returned; the balance must cover a full page)' })),
    paginationToken: Type.Optional(PaginationToken),
  },
  { additionalProperties: false },
);
export const V2ContactSearchBody = v2SearchBody(discoveryContactSchemas);
export const V2CompanySearchBody = v2SearchBody(discoveryCompanySchemas);
export type V2SearchBody = Static<typeof V2ContactSearchBody>;

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const ProfileUrl = (what: string) => NullableString(`${what} profile URL, \`https://…\` (stored and matched normalised: host/path); null when unknown`);
const EmailStatus = Type.Object({ email: Type.String(), status: Type.Union([Type.String(), Type.Null()], { description: 'Verification status as the dataset records it (`valid`, `catch_all` …)' }) });

/** The people values of a v2 item: `id` plus the requested `dsContact.*` paths in the Contact shape. */
const personProperties = {
  id: Type.String(),
  pronet: Type.Optional(ProfileUrl('Professional-network')),
  emails: Type.Optional(Type.Array(Type.String(), { description: 'Email addresses (strings, as in a Contact); `[]` when none' })),
  emailStatuses: Type.Optional(Type.Array(EmailStatus, { description: 'Present with `emails`: the status of each address' })),
};
const ContactItem = Type.Object(
  {
    ...personProperties,
    company: Type.Optional(
      Type.Union(
        [Type.Object({ id: Type.String({ description: 'Dataset company id' }), companyPronet: Type.Optional(ProfileUrl('Company')) }, { additionalProperties: true }), Type.Null()],
        { description: 'Present when `dsCompany.*` paths are requested: the requested company values plus `id`; null when the person has no company' },
      ),
    ),
  },
  {
    additionalProperties: true,
    description:
      'Contact record: `id` plus the requested fields in the Contact shape (`title`, `fullName`, `company.companyName` …). Every requested path is present; ' +
      'an unknown value is `null` (arrays: `[]`).',
  },
);
const CompanyItem = Type.Object(
  {
    id: Type.String(),
    companyPronet: Type.Optional(ProfileUrl('Company')),
  },
  {
    additionalProperties: true,
    description:
      'Company record: `id` plus the requested fields (`companyName`, `companyWebsite`, `companyPronet`, `companyIndustry`, `companyHeadcount`, `companyCity`, ' +
      '`companyState`, `companyCountry` …); an unknown value is `null`.',
  },
);
export const ContactPage = Type.Object({ data: Type.Array(ContactItem), meta: Type.Ref(PaginationMeta) });
export const CompanyPage = Type.Object({ data: Type.Array(CompanyItem), meta: Type.Ref(PaginationMeta) });

/** Meta of a v2 page: the pagination meta plus whether `totalRecords` is exact. */
const V2PageMeta = Type.Object({
  totalRecords: Type.Integer({
    minimum: 0,
    description: `Number of matches: exact up to the server's exact-count limit (${V2_EXACT_COUNT_DOC}); above it an estimate, and then \`totalRecordsEstimated\` is true`,
  }),
  totalRecordsEstimated: Type.Boolean({
    description: 'True when `totalRecords` is the database planner\'s estimate (more matches than the exact-count limit, at least that limit + 1), false when it is exact',
  }),
  previousToken: Type.String(),
  nextToken: Type.String(),
});
export const ContactV2Page = Type.Object({ data: Type.Array(ContactItem), meta: V2PageMeta });
export const CompanyV2Page = Type.Object({ data: Type.Array(CompanyItem), meta: V2PageMeta });

// ---------------------------------------------------------------------------------------------
// verified search

const PULL_MAX = VERIFIED_MAX_LIMIT * VERIFIED_MAX_PAGE;
const Terms = (max: number, item: TSchema = NonBlankString({ maxLength: 500 })) => Type.Array(item, { minItems: 1, maxItems: max });
/** A revenue amount in whole USD: a number, or digits with an optional K, M or B suffix (at most MAX_AMOUNT). */
const Amount = Type.Union([
  Type.Number({ minimum: 0, maximum: MAX_AMOUNT }),
  Type.String({ pattern: '^([0-9]{1,15}|[0-9]{1,12}(\\.[0-9]{1,3})?[kK]|[0-9]{1,9}(\\.[0-9]{1,3})?[mM]|[0-9]{1,6}(\\.[0-9]{1,3})?[bB])?$' }),
  Type.Null(),
]);
/** A website or domain (compared by its domain: scheme, `www.` and path are dropped). */
const Website = Type.String({ maxLength: 500, pattern: '^([hH][tT][tT][pP][sS]?://)?[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+([/?#:][^\\u0000]*)?$' });
/** What each verified input takes as `userInput`. */
const userInputOf = (name: string) => {
  switch (name) {
    case 'numberOfCompaniesToPull':
    case 'numberOfContactsToPull':
      return Type.Integer({ minimum: 1, maximum: PULL_MAX });
    case 'companyHeadcountRange':
      // min ≤ max is the one rule here JSON Schema cannot compare (400 naming the range)
      return Terms(50, Type.String({ pattern: '^[0-9]{1,9} *- *[0-9]{0,9}$|^[0-9]{1,9}\\+$', description: 'A range `<min>-<max>` (e.g. the options: ' + SIZE_RANGES.join(', ') + '), or `<min>+`; min ≤ max' }));
    case 'companyRevenue':
      return Type.Object(
        { min: Type.Optional(Amount), max: Type.Optional(Amount), include_unknown_revenue: Type.Optional(Type.Boolean()) },
        { additionalProperties: false, description: '`min` must not exceed `max` (400)' },
      );
    case 'companyNameInclude':
      return Terms(VERIFIED_MAX_LIST);
    case 'companyWebsiteInclude':
      return Terms(VERIFIED_MAX_LIST, Website);
    default:
      return Terms(1000);
  }
};

/** One branch per input, told apart by `sourceFieldName`: the `userInput` that input takes. */
export const inputFieldMappingEntry = (entity: DiscoveryEntity) =>
  Type.Union(
    VERIFIED_INPUTS[entity].map((d) =>
      Type.Object(
        { sourceFieldName: Type.Literal(d.name, { description: `A \`name\` from GET /schema/verified-discovery/${entity}` }), userInput: userInputOf(d.name) },
        { additionalProperties: false, description: d.description },
      ),
    ),
  );

export const verifiedBody = (entity: 'company' | 'contact') =>
  Type.Object(
    {
      page: Type.Optional(Type.Integer({ minimum: 1, maximum: VERIFIED_MAX_PAGE, default: 1, description: `1-based page number, at most ${VERIFIED_MAX_PAGE}` })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: VERIFIED_MAX_LIMIT, default: VERIFIED_MAX_LIMIT, description: `Rows per page, at most ${VERIFIED_MAX_LIMIT}` })),
      fields: Type.Optional(Type.Array(Type.Unsafe<string>({ type: 'string', enum: Object.keys(VERIFIED_RESULT_FIELDS[entity]) }), { minItems: 1, maxItems: 50, description: 'Result fields' })),
      inputFieldMapping: Type.Optional(
        Type.Array(inputFieldMappingEntry(entity), { maxItems: 50, uniqueItems: true, description: `Flat filters, each input at most once (a second entry of one input is a 400); see GET /schema/verified-discovery/${entity}` }),
      ),
    },
    { additionalProperties: false, description: `${VERIFIED_RANKING_DOC[entity]} No sort and no cursor: pages are numbered.` },
  );
export const VerifiedCompanyBody = verifiedBody('company');
export const VerifiedContactBody = verifiedBody('contact');
export type VerifiedBody = Static<typeof VerifiedCompanyBody>;

export const ImportVerifiedCompaniesBody = Type.Object(
  {
    companyIds: Type.Array(Type.String({ format: 'uuid' }), {
      minItems: 1,
      maxItems: 1000,
      uniqueItems: true,
      description: 'Ids of verified companies (from find-verified-companies) to save as workspace companies',
    }),
    segmentId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: "Also import the companies' verified people as contacts into this segment, through the workspace's importFromWebhook source `verified-discovery`" }),
    ),
    contactsPerCompany: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'With segmentId: at most this many verified people per company (ranked as in find-verified-contacts)' })),
    webhookConfiguration: Type.Optional(Type.Ref(WebhookConfiguration)),
  },
  { additionalProperties: false },
);
export type ImportVerifiedCompaniesBody = Static<typeof ImportVerifiedCompaniesBody>;

// ---------------------------------------------------------------------------------------------
// schema endpoints

const OptionItem = Type.Object({ label: Type.String(), value: Type.Unknown() });
export const OptionList = Type.Object({ data: Type.Array(OptionItem) });

/** A `field` query parameter whose values are a fixed catalog: the document lists them all. */
const fieldOf = (names: string[], description: string) =>
  Type.Unsafe<string>({ type: 'string', enum: [...new Set(names)].sort(), description });

const optionsQuery = (field: ReturnType<typeof fieldOf>) =>
  Type.Object(
    {
      field,
      q: Type.Optional(Type.String({ maxLength: 200, description: 'Only values containing this text (case-insensitive)' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    },
    { additionalProperties: false },
  );
/** Options of a v2 discovery field: only the fields that have an option list (the others are free text or numbers). */
export const v2OptionsQuery = (entity: DiscoveryEntity) =>
  optionsQuery(fieldOf(v2SchemaItems(entity).filter((i) => v2OptionsColumn(entity, i.name)).map((i) => i.name), `A field of GET /schema/discovery-search-v2/${entity} that has an option list`));
/** Options of a verified input: the inputs with an option list, and the boolean child fields. */
export const verifiedOptionsQuery = (entity: DiscoveryEntity) =>
  optionsQuery(
    fieldOf(
      [
        ...VERIFIED_INPUTS[entity].filter((d) => d.options).map((d) => d.name),
        ...VERIFIED_INPUTS[entity].flatMap((d) => (d.childFields ?? []).filter((c) => childOptions(entity, c.name)).map((c) => c.name)),
      ],
      `An input of GET /schema/verified-discovery/${entity} that has an option list`,
    ),
  );
export const verifiedSuggestionsQuery = (entity: DiscoveryEntity) =>
  Type.Object(
    {
      field: fieldOf(VERIFIED_INPUTS[entity].filter(hasSuggestions).map((d) => d.name), `An input of GET /schema/verified-discovery/${entity} that takes text to suggest for`),
      q: Type.String({ minLength: 1, maxLength: 200, description: 'Text typed so far' }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
    },
    { additionalProperties: false },
  );

export const V2SchemaItem = Type.Object({
  name: Type.String(),
  writeAccessPath: Type.String(),
  readAccessPath: Type.String(),
  type: Type.String(),
  displayName: Type.String(),
  description: Type.String(),
  entity: Type.String(),
  operators: Type.Array(Type.String()),
  filteringSupported: Type.Boolean(),
  selectable: Type.Boolean(),
  optionsLink: Type.Union([Type.String(), Type.Null()]),
});
export const V2SchemaResponse = Type.Object({
  data: Type.Array(V2SchemaItem),
  meta: Type.Object({ groupOperators: Type.Array(Type.String()), operatorsByType: Type.Record(Type.String(), Type.Array(Type.String())) }),
});

const childCommon = {
  name: Type.String(),
  jsonKey: Type.String(),
  writeAccessPath: Type.String(),
  parentField: Type.String(),
  type: Type.String(),
  displayName: Type.String(),
  filteringSupported: Type.Boolean(),
  options: Type.Array(OptionItem),
  optionsLink: Type.String(),
  suggestionLink: Type.String(),
  hasMoreOptions: Type.Boolean(),
};
// The example's empty `childFields` ends the recursion where the sampled example would stop at `{}`.
export const VerifiedChildItem = Type.Recursive((Self) => Type.Object({ ...childCommon, childFields: Type.Array(Self, { examples: [[]] }) }), { $id: 'VerifiedSchemaChildField' });

export const VerifiedSchemaItem = Type.Object({
  name: Type.String(),
  readAccessPath: Type.String(),
  writeAccessPath: Type.String(),
  type: Type.String(),
  displayName: Type.String(),
  description: Type.String(),
  filteringSupported: Type.Boolean(),
  groupNames: Type.Array(Type.String()),
  userInputShape: Type.String(),
  userInputWrapKey: Type.String(),
  verifiedDiscoveryField: Type.Boolean(),
  exampleUserInput: Type.Unknown(),
  options: Type.Array(OptionItem),
  optionsLink: Type.String(),
  suggestionLink: Type.String(),
  hasMoreOptions: Type.Boolean(),
  childFields: Type.Array(VerifiedChildItem),
});
export const VerifiedSchemaResponse = Type.Object({
  data: Type.Array(VerifiedSchemaItem),
  meta: Type.Object({
    groupsOrder: Type.Array(Type.String()),
    schemaVersion: Type.Literal(VERIFIED_SCHEMA_VERSION),
    inputFieldMappingContract: Type.Record(Type.String(), Type.Unknown()),
    jsonFieldExamples: Type.Array(Type.Unknown()),
    resultFields: Type.Array(Type.String()),
    ranking: Type.String(),
  }),
});
