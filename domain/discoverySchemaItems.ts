/**
 * Presentation of the discovery fields: the schema items of GET /schema/discovery-search-v2/…
 * (from the catalog, domain/discoveryCatalog.ts) and GET /schema/verified-discovery/… (from the
 * verified inputs, domain/verifiedSearchInput.ts), with their options and suggestion links.
 */
import { OPERATORS_BY_TYPE, type FieldType } from './conditions.js';
import { COMPANY_COLUMNS, COMPANY_PREFIX, PERSON_COLUMNS, PERSON_PREFIX, VERIFIED_RESULT_FIELDS, type DiscoveryEntity, type DsColumn } from './discoveryCatalog.js';
import {
  VERIFIED_GROUPS_ORDER, VERIFIED_INPUTS, VERIFIED_MAX_LIMIT, VERIFIED_MAX_LIST, VERIFIED_MAX_PAGE, VERIFIED_RANKING_DOC, type VerifiedInputDef,
} from './verifiedSearchInput.js';

// ---------------------------------------------------------------------------------------------
// v2 schema items (GET /schema/discovery-search-v2/{contact|company})

export interface V2SchemaItem {
  name: string;
  writeAccessPath: string;
  readAccessPath: string;
  type: FieldType;
  displayName: string;
  description: string;
  entity: 'dsContact' | 'dsCompany';
  operators: readonly string[];
  filteringSupported: boolean;
  /** Whether the path may be used in `fields` of this search. */
  selectable: boolean;
  optionsLink: string | null;
}

export function v2SchemaItems(entity: DiscoveryEntity): V2SchemaItem[] {
  const item = (c: DsColumn, prefix: string, selectable: boolean, readAccessPath: string): V2SchemaItem => {
    const path = `${prefix}${c.column}`;
    return {
      name: path,
      writeAccessPath: path,
      readAccessPath,
      type: c.type,
      displayName: c.displayName,
      description:
        entity === 'company' && prefix === PERSON_PREFIX
          ? `${c.description}. Filters companies having at least one matching person (conditions of one group are met by the same person)`
          : c.description,
      entity: prefix === PERSON_PREFIX ? 'dsContact' : 'dsCompany',
      operators: OPERATORS_BY_TYPE[c.type],
      filteringSupported: true,
      selectable,
      optionsLink: c.enumerable ? `/schema/discovery-search-v2/${entity}/options?field=${encodeURIComponent(path)}` : null,
    };
  };
  if (entity === 'contact') {
    return [
      ...PERSON_COLUMNS.map((c) => item(c, PERSON_PREFIX, true, c.column === 'company_pronet_url' ? 'company.companyPronet' : c.contactKey)),
      ...COMPANY_COLUMNS.map((c) => item(c, COMPANY_PREFIX, true, `company.${c.contactKey}`)),
    ];
  }
  return [
    ...COMPANY_COLUMNS.map((c) => item(c, COMPANY_PREFIX, true, c.companyKey!)),
    ...PERSON_COLUMNS.map((c) => item(c, PERSON_PREFIX, true, c.column === 'company_pronet_url' ? 'contacts[].company.companyPronet' : `contacts[].${c.contactKey}`)),
  ];
}

/** The ds column behind a v2 path that has an options list (undefined if none). */
export function v2OptionsColumn(entity: DiscoveryEntity, path: string): { table: 'ds_people' | 'ds_companies'; column: DsColumn } | undefined {
  if (path.startsWith(PERSON_PREFIX)) {
    const c = PERSON_COLUMNS.find((x) => `${PERSON_PREFIX}${x.column}` === path);
    return c?.enumerable ? { table: 'ds_people', column: c } : undefined;
  }
  if (path.startsWith(COMPANY_PREFIX)) {
    const c = COMPANY_COLUMNS.find((x) => `${COMPANY_PREFIX}${x.column}` === path);
    return c?.enumerable ? { table: 'ds_companies', column: c } : undefined;
  }
  void entity;
  return undefined;
}
// ---------------------------------------------------------------------------------------------
// Verified schema items (GET /schema/verified-discovery/{contact|company})

export const VERIFIED_SCHEMA_VERSION = 'verified-v1';

export interface OptionItem {
  label: string;
  value: unknown;
}

export const verifiedOptionsLink = (entity: DiscoveryEntity, name: string) => `/schema/verified-discovery/${entity}/options?field=${encodeURIComponent(name)}`;
export const verifiedSuggestionLink = (entity: DiscoveryEntity, name: string) => `/schema/verified-discovery/${entity}/suggestions?field=${encodeURIComponent(name)}&q=`;

/** Whether an input answers on the suggestions endpoint. */
export const hasSuggestions = (d: VerifiedInputDef) => d.suggestions !== undefined || d.options !== undefined;

const BOOLEAN_OPTIONS: OptionItem[] = [
  { label: 'Yes', value: true },
  { label: 'No', value: false },
];

/**
 * The full verified item shape. `options` of dataset-backed inputs are the most frequent values
 * (`hasMoreOptions` says whether `optionsLink` lists more). Links are relative to the API base URL.
 */
export function verifiedSchemaItems(
  entity: DiscoveryEntity,
  optionsOf: (d: VerifiedInputDef) => { options: OptionItem[]; hasMore: boolean },
) {
  return VERIFIED_INPUTS[entity].map((d) => {
    const opts = d.options ? optionsOf(d) : { options: [], hasMore: false };
    return {
      name: d.name,
      readAccessPath: d.readAccessPath,
      writeAccessPath: d.name,
      type: d.type,
      displayName: d.displayName,
      description: d.description,
      filteringSupported: true,
      groupNames: d.groupNames,
      userInputShape: d.userInputShape,
      userInputWrapKey: 'userInput',
      verifiedDiscoveryField: true,
      exampleUserInput: d.exampleUserInput,
      options: opts.options,
      optionsLink: d.options ? verifiedOptionsLink(entity, d.name) : '',
      suggestionLink: hasSuggestions(d) ? verifiedSuggestionLink(entity, d.name) : '',
      hasMoreOptions: opts.hasMore,
      childFields: (d.childFields ?? []).map((c) => ({
        name: c.name,
        jsonKey: c.jsonKey,
        writeAccessPath: c.name,
        parentField: d.name,
        type: c.type,
        displayName: c.displayName,
        filteringSupported: true,
        options: c.type === 'boolean' ? BOOLEAN_OPTIONS : [],
        optionsLink: c.type === 'boolean' ? verifiedOptionsLink(entity, c.name) : '',
        suggestionLink: '',
        hasMoreOptions: false,
        childFields: [],
      })),
    };
  });
}

/** Static options of a child field (`companyRevenue.include_unknown_revenue`), if it has any. */
export function childOptions(entity: DiscoveryEntity, name: string): OptionItem[] | undefined {
  for (const d of VERIFIED_INPUTS[entity]) for (const c of d.childFields ?? []) if (c.name === name && c.type === 'boolean') return BOOLEAN_OPTIONS;
  return undefined;
}

export function verifiedSchemaMeta(entity: DiscoveryEntity) {
  const pull = entity === 'company' ? 'numberOfCompaniesToPull' : 'numberOfContactsToPull';
  return {
    groupsOrder: VERIFIED_GROUPS_ORDER.filter((g) => VERIFIED_INPUTS[entity].some((d) => d.groupNames.includes(g))),
    schemaVersion: VERIFIED_SCHEMA_VERSION,
    inputFieldMappingContract: {
      type: 'array',
      description:
        'Send filters as `inputFieldMapping`: an array of {sourceFieldName, userInput}. `sourceFieldName` is an item `name` (= `writeAccessPath`); the value goes under the item\'s `userInputWrapKey` and is shaped like its `exampleUserInput` (`userInputShape` array | number | object; object inputs list their keys in `childFields`). Each name at most once; entries are AND-ed; values inside one list are OR-ed. Company name and website lists: at most 500 entries each and 500 combined (they add up: a company matching either list is kept).',
      itemProperties: { sourceFieldName: 'string', userInput: 'any' },
      limits: { page: { min: 1, max: VERIFIED_MAX_PAGE }, limit: { min: 1, max: VERIFIED_MAX_LIMIT }, companyNameInclude: VERIFIED_MAX_LIST, companyWebsiteInclude: VERIFIED_MAX_LIST, combinedNameAndWebsite: VERIFIED_MAX_LIST },
      example: VERIFIED_INPUTS[entity].filter((d) => d.name !== pull).slice(0, 3).map((d) => ({ sourceFieldName: d.name, userInput: d.exampleUserInput })),
    },
    jsonFieldExamples: VERIFIED_INPUTS[entity]
      .filter((d) => d.userInputShape === 'object')
      .map((d) => ({ sourceFieldName: d.name, userInput: d.exampleUserInput, childFields: (d.childFields ?? []).map((c) => c.jsonKey) })),
    resultFields: Object.keys(VERIFIED_RESULT_FIELDS[entity]),
    ranking: VERIFIED_RANKING_DOC[entity],
  };
}
