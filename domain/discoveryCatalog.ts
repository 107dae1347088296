/**
 * Field catalogs of the discovery search (API-SPEC "Discovery search", DESIGN §4).
 *
 * v2 search (`find-contacts-v2`, `find-companies-v2`): every `dsContact.<column>` and
 * `dsCompany.<column>` path of the ds_* tables, as a FieldCatalog for domain/conditions.ts (path
 * → type, operators, where the value goes in a result item; the SQL expression of each is
 * db/discoveryColumns.ts).
 * - Contact items follow the Contact shape: `dsContact.member_job_title` → `title`,
 *   `dsCompany.company_name` → `company.companyName` (plus `company.id`).
 * - Company items follow the spec's Company record: `dsCompany.company_name` → `companyName`,
 *   `dsCompany.size_range` → `companyHeadcount`, `dsCompany.hq_city` → `companyCity` …
 * - In a company search, `dsContact.*` conditions select companies having matching people: the
 *   person conditions of one group are met by the same person.
 *
 * Verified search (`find-verified-*`): a flat `inputFieldMapping` of named inputs; the catalog
 * below lists them with the full verified schema item shape.
 */
import { OPERATORS_BY_TYPE, catalogOf, type CatalogField, type FieldType } from './conditions.js';
import { invalidField, badRequest } from './errors.js';
import { normalizeDomain, normalizeProfileUrl } from './identity.js';
import { SENIORITIES, SIZE_RANGES } from './datasetGenerator.js';

export type DiscoveryEntity = 'contact' | 'company';

export interface DsColumn {
  /** ds_* column name (= the path without prefix and the import key). */
  column: string;
  type: FieldType;
  displayName: string;
  description: string;
  /** Key of the value in a contact item (nested under `company` for company columns). */
  contactKey: string;
  /** Key of the value in a company item (company columns only). */
  companyKey?: string;
  /** Whether the options endpoint lists distinct values of the field. */
  enumerable?: boolean;
  /** Response shaping and operand normalisation (see CatalogField). */
  present?: CatalogField['present'];
  also?: CatalogField['also'];
  matchKey?: CatalogField['matchKey'];
}

/**
 * Profile URLs are stored normalised (`pronet.com/in/x`, the importer's matching key) and answered
 * as the URLs the contract's tables promise (`https://pronet.com/in/x`); `==` / `IN` operands are
 * normalised the same way, so any form of a profile URL matches. `LIKE` patterns match the stored
 * `host/path` form.
 */
const profileUrl = {
  present: (v: unknown) => (typeof v === 'string' && v ? `https://${v}` : null),
  matchKey: (v: string) => normalizeProfileUrl(v) ?? v,
} satisfies Partial<DsColumn>;

/** Emails are stored as `[{email, status}]`; a Contact's `emails` are strings, statuses go to `emailStatuses`. */
type StoredEmail = { email?: unknown; status?: unknown };
const storedEmails = (v: unknown): StoredEmail[] => (Array.isArray(v) ? (v as StoredEmail[]).filter((e) => e && typeof e.email === 'string') : []);
const emailStrings = {
  present: (v: unknown) => storedEmails(v).map((e) => e.email as string),
  also: { output: ['emailStatuses'], present: (v: unknown) => storedEmails(v).map((e) => ({ email: e.email as string, status: typeof e.status === 'string' ? e.status : null })) },
} satisfies Partial<DsColumn>;

export const PERSON_COLUMNS: DsColumn[] = [
  { column: 'member_pronet_url', type: 'string', displayName: 'Profile URL', description: 'Professional-network profile URL (`https://…`; matched on its normalised host/path, any form)', contactKey: 'pronet', ...profileUrl },
  { column: 'member_full_name', type: 'string', displayName: 'Full name', description: 'Full name', contactKey: 'fullName' },
  { column: 'member_first_name', type: 'string', displayName: 'First name', description: 'First name', contactKey: 'firstName' },
  { column: 'member_last_name', type: 'string', displayName: 'Last name', description: 'Last name', contactKey: 'lastName' },
  { column: 'member_job_title', type: 'string', displayName: 'Job title', description: 'Current job title', contactKey: 'title', enumerable: true },
  { column: 'member_seniority', type: 'string', displayName: 'Seniority', description: 'Seniority level (Owner, CXO, VP, Director, Manager, Senior, Entry, Intern)', contactKey: 'seniority', enumerable: true },
  { column: 'member_headline', type: 'string', displayName: 'Headline', description: 'Profile headline', contactKey: 'headline' },
  { column: 'member_location_city', type: 'string', displayName: 'City', description: 'City the person lives in', contactKey: 'city', enumerable: true },
  { column: 'member_location_country', type: 'string', displayName: 'Country', description: 'Country the person lives in', contactKey: 'country', enumerable: true },
  { column: 'member_skills', type: 'multi', displayName: 'Skills', description: 'Skills listed on the profile', contactKey: 'skills', enumerable: true },
  { column: 'member_years_experience', type: 'number', displayName: 'Years of experience', description: 'Years of professional experience', contactKey: 'yearsExperience' },
  {
    column: 'member_emails', type: 'multi', displayName: 'Emails', description: 'Known email addresses; results carry `emails` (strings) and `emailStatuses` ([{email, status}]); filters match the addresses',
    contactKey: 'emails', ...emailStrings,
  },
  {
    column: 'member_phones', type: 'multi', displayName: 'Phone numbers', description: 'Known phone numbers; results carry [{number, type}], filters match the numbers',
    contactKey: 'phoneNumbers',
  },
  { column: 'company_pronet_url', type: 'string', displayName: 'Company profile URL', description: "Profile URL of the person's company (`https://…`)", contactKey: 'companyPronet', ...profileUrl },
  { column: 'verified', type: 'boolean', displayName: 'Verified', description: 'The record was verified', contactKey: 'verified' },
  { column: 'updated_at', type: 'date', displayName: 'Updated at', description: 'When the record was last imported', contactKey: 'updatedAt' },
];

export const COMPANY_COLUMNS: DsColumn[] = [
  { column: 'company_pronet_url', type: 'string', displayName: 'Company profile URL', description: 'Company page URL on the professional network (`https://…`)', contactKey: 'companyPronet', companyKey: 'companyPronet', ...profileUrl },
  { column: 'company_name', type: 'string', displayName: 'Company name', description: 'Company name', contactKey: 'companyName', companyKey: 'companyName' },
  { column: 'company_website', type: 'string', displayName: 'Website', description: 'Company website URL', contactKey: 'companyWebsite', companyKey: 'companyWebsite' },
  { column: 'company_domain', type: 'string', displayName: 'Domain', description: 'Domain of the website (`acme.com`)', contactKey: 'companyDomain', companyKey: 'companyDomain' },
  { column: 'industry', type: 'string', displayName: 'Industry', description: 'Industry', contactKey: 'companyIndustry', companyKey: 'companyIndustry', enumerable: true },
  { column: 'size_range', type: 'string', displayName: 'Headcount range', description: 'Employee headcount range `<min>-<max>`', contactKey: 'companyHeadcount', companyKey: 'companyHeadcount', enumerable: true },
  { column: 'employee_count', type: 'number', displayName: 'Employees', description: 'Number of employees', contactKey: 'employeeCount', companyKey: 'employeeCount' },
  { column: 'revenue_min', type: 'number', displayName: 'Revenue (min)', description: 'Lower bound of the yearly revenue estimate, USD', contactKey: 'revenueMin', companyKey: 'revenueMin' },
  { column: 'revenue_max', type: 'number', displayName: 'Revenue (max)', description: 'Upper bound of the yearly revenue estimate, USD', contactKey: 'revenueMax', companyKey: 'revenueMax' },
  { column: 'founded_year', type: 'number', displayName: 'Founded', description: 'Year the company was founded', contactKey: 'foundedYear', companyKey: 'foundedYear' },
  { column: 'hq_city', type: 'string', displayName: 'HQ city', description: 'City of the headquarters', contactKey: 'companyCity', companyKey: 'companyCity', enumerable: true },
  { column: 'hq_state', type: 'string', displayName: 'HQ state', description: 'State or region of the headquarters', contactKey: 'companyState', companyKey: 'companyState', enumerable: true },
  { column: 'hq_country', type: 'string', displayName: 'HQ country', description: 'Country of the headquarters', contactKey: 'companyCountry', companyKey: 'companyCountry', enumerable: true },
  { column: 'technologies', type: 'multi', displayName: 'Technologies', description: 'Technologies the company uses', contactKey: 'technologies', companyKey: 'technologies', enumerable: true },
  { column: 'verified', type: 'boolean', displayName: 'Verified', description: 'The record was verified', contactKey: 'verified', companyKey: 'verified' },
  { column: 'updated_at', type: 'date', displayName: 'Updated at', description: 'When the record was last imported', contactKey: 'updatedAt', companyKey: 'updatedAt' },
];

export const PERSON_PREFIX = 'dsContact.';
export const COMPANY_PREFIX = 'dsCompany.';

const shaping = (c: DsColumn): Pick<CatalogField, 'present' | 'also' | 'matchKey'> => ({ present: c.present, also: c.also, matchKey: c.matchKey });

function personField(c: DsColumn): CatalogField {
  return {
    path: `${PERSON_PREFIX}${c.column}`,
    type: c.type,
    output: c.column === 'company_pronet_url' ? ['company', 'companyPronet'] : [c.contactKey],
    ...shaping(c),
    filteringSupported: true,
    label: c.displayName,
  };
}

function companyField(c: DsColumn, entity: DiscoveryEntity): CatalogField {
  return {
    path: `${COMPANY_PREFIX}${c.column}`,
    type: c.type,
    output: entity === 'contact' ? ['company', c.contactKey] : [c.companyKey!],
    ...shaping(c),
    filteringSupported: true,
    label: c.displayName,
  };
}

/** Catalog of `find-contacts-v2`: people, with their company's fields. */
export const contactSearchCatalog = catalogOf([...PERSON_COLUMNS.map((c) => personField(c)), ...COMPANY_COLUMNS.map((c) => companyField(c, 'contact'))]);

/** Catalog of the person side of a company search (the people sub-query). */
export const personCatalog = catalogOf(PERSON_COLUMNS.map((c) => personField(c)));

/**
 * Catalog of `find-companies-v2`: companies. `dsContact.*` paths are listed for conditions
 * (compiled against the people of the company); they are not company fields.
 */
export const companySearchCatalog = catalogOf([...COMPANY_COLUMNS.map((c) => companyField(c, 'company')), ...PERSON_COLUMNS.map((c) => personField(c))]);

/** Default `fields` when a request names none: the spec's Contact / Company record fields. */
export const DEFAULT_FIELDS: Record<DiscoveryEntity, string[]> = {
  contact: [
    'dsContact.member_full_name', 'dsContact.member_first_name', 'dsContact.member_last_name', 'dsContact.member_job_title',
    'dsContact.member_pronet_url', 'dsCompany.company_name', 'dsCompany.company_website', 'dsCompany.industry', 'dsCompany.size_range',
  ],
  company: [
    'dsCompany.company_name', 'dsCompany.company_website', 'dsCompany.company_pronet_url', 'dsCompany.industry', 'dsCompany.size_range',
    'dsCompany.hq_city', 'dsCompany.hq_state', 'dsCompany.hq_country',
  ],
};

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
// Verified search (find-verified-companies / find-verified-contacts)


export const VERIFIED_SCHEMA_VERSION = 'verified-v1';
export const VERIFIED_MAX_LIMIT = 25;
export const VERIFIED_MAX_PAGE = 1000;
/** Company name and website lists: at most 500 entries each and 500 combined. */
export const VERIFIED_MAX_LIST = 500;

/** Where an input's options come from: a fixed list, or the distinct values of a ds column. */
export type OptionSource = { kind: 'static'; values: readonly string[] } | { kind: 'dataset'; table: 'ds_companies' | 'ds_people'; column: string; multi?: boolean };

export interface VerifiedChildDef {
  name: string;
  jsonKey: string;
  type: string;
  displayName: string;
}

export interface VerifiedInputDef {
  name: string;
  readAccessPath: string;
  type: 'string[]' | 'integer' | 'object';
  displayName: string;
  description: string;
  groupNames: string[];
  userInputShape: 'array' | 'number' | 'object';
  exampleUserInput: unknown;
  options?: OptionSource;
  /** Free-text inputs offer type-ahead suggestions from this column. */
  suggestions?: { table: 'ds_companies' | 'ds_people'; column: string };
  childFields?: VerifiedChildDef[];
}

const companyInputs: VerifiedInputDef[] = [
  {
    name: 'numberOfCompaniesToPull', readAccessPath: 'meta.totalRecords', type: 'integer', displayName: 'Number of companies to pull',
    description: 'Caps how many ranked companies the search yields over all pages (and so the credits it can use)',
    groupNames: ['Limits'], userInputShape: 'number', exampleUserInput: 100,
  },
  {
    name: 'companyIndustryInclude', readAccessPath: 'companyIndustry', type: 'string[]', displayName: 'Industries',
    description: 'Companies in any of these industries (exact values from the options)', groupNames: ['Company'], userInputShape: 'array',
    exampleUserInput: ['Software Development', 'Financial Services'], options: { kind: 'dataset', table: 'ds_companies', column: 'industry' },
  },
  {
    name: 'companyHeadcountRange', readAccessPath: 'companyHeadcount', type: 'string[]', displayName: 'Headcount ranges',
    description: 'Companies whose employee count lies in any of these `<min>-<max>` ranges (inclusive)', groupNames: ['Company'],
    userInputShape: 'array', exampleUserInput: ['51-200', '201-500'], options: { kind: 'static', values: SIZE_RANGES },
  },
  {
    name: 'companyRevenue', readAccessPath: 'revenueMin', type: 'object', displayName: 'Revenue',
    description: 'Companies whose yearly revenue estimate (USD) overlaps [min, max]; `include_unknown_revenue` also keeps companies without an estimate. Amounts are strings of digits, optionally with a K, M or B suffix',
    groupNames: ['Company'], userInputShape: 'object', exampleUserInput: { min: '1000000', max: '50000000', include_unknown_revenue: false },
    childFields: [
      { name: 'companyRevenue.min', jsonKey: 'min', type: 'string', displayName: 'Minimum revenue' },
      { name: 'companyRevenue.max', jsonKey: 'max', type: 'string', displayName: 'Maximum revenue' },
      { name: 'companyRevenue.include_unknown_revenue', jsonKey: 'include_unknown_revenue', type: 'boolean', displayName: 'Include companies with unknown revenue' },
    ],
  },
  {
    name: 'companyNameInclude', readAccessPath: 'companyName', type: 'string[]', displayName: 'Company names',
    description: `Companies with any of these names (case-insensitive, exact); at most ${VERIFIED_MAX_LIST} names, and ${VERIFIED_MAX_LIST} names and websites together`,
    groupNames: ['Company'], userInputShape: 'array', exampleUserInput: ['Acme Analytics'], suggestions: { table: 'ds_companies', column: 'company_name' },
  },
  {
    name: 'companyWebsiteInclude', readAccessPath: 'companyWebsite', type: 'string[]', displayName: 'Company websites',
    description: `Companies with any of these websites (compared by domain: \`https://www.acme.com/x\` = \`acme.com\`); at most ${VERIFIED_MAX_LIST}, and ${VERIFIED_MAX_LIST} names and websites together`,
    groupNames: ['Company'], userInputShape: 'array', exampleUserInput: ['acme.com'], suggestions: { table: 'ds_companies', column: 'company_domain' },
  },
  {
    name: 'companyCountryInclude', readAccessPath: 'companyCountry', type: 'string[]', displayName: 'HQ countries',
    description: 'Companies headquartered in any of these countries', groupNames: ['Company'], userInputShape: 'array',
    exampleUserInput: ['United States', 'Germany'], options: { kind: 'dataset', table: 'ds_companies', column: 'hq_country' },
  },
  {
    name: 'companyTechnologiesInclude', readAccessPath: 'technologies', type: 'string[]', displayName: 'Technologies',
    description: 'Companies using any of these technologies', groupNames: ['Company'], userInputShape: 'array',
    exampleUserInput: ['Salesforce', 'Snowflake'], options: { kind: 'dataset', table: 'ds_companies', column: 'technologies', multi: true },
  },
];

const contactInputs: VerifiedInputDef[] = [
  {
    name: 'numberOfContactsToPull', readAccessPath: 'meta.totalRecords', type: 'integer', displayName: 'Number of contacts to pull',
    description: 'Caps how many ranked contacts the search yields over all pages (and so the credits it can use)',
    groupNames: ['Limits'], userInputShape: 'number', exampleUserInput: 100,
  },
  {
    name: 'numberOfCompaniesToPull', readAccessPath: 'company.id', type: 'integer', displayName: 'Number of companies to pull',
    description:
      'Caps the companies whose people are returned: only people of the first N verified companies that match the company filters, ' +
      'ranked as find-verified-companies ranks them (headcount, then id). Combines with numberOfContactsToPull (both caps apply)',
    groupNames: ['Limits'], userInputShape: 'number', exampleUserInput: 10,
  },
  {
    name: 'jobTitleInclude', readAccessPath: 'title', type: 'string[]', displayName: 'Job titles',
    description: 'People whose job title contains any of these terms (case-insensitive)', groupNames: ['Contact'], userInputShape: 'array',
    exampleUserInput: ['VP of Sales', 'Head of Growth'], suggestions: { table: 'ds_people', column: 'member_job_title' },
  },
  {
    name: 'seniorityInclude', readAccessPath: 'seniority', type: 'string[]', displayName: 'Seniority',
    description: 'People at any of these seniority levels', groupNames: ['Contact'], userInputShape: 'array',
    exampleUserInput: ['VP', 'Director'], options: { kind: 'static', values: SENIORITIES },
  },
  {
    name: 'countryInclude', readAccessPath: 'country', type: 'string[]', displayName: 'Countries',
    description: 'People living in any of these countries', groupNames: ['Contact'], userInputShape: 'array',
    exampleUserInput: ['United States'], options: { kind: 'dataset', table: 'ds_people', column: 'member_location_country' },
  },
  // people are also filtered by their company
  ...companyInputs
    .filter((i) => i.name !== 'numberOfCompaniesToPull')
    .map((i) => ({ ...i, readAccessPath: `company.${i.readAccessPath}`, description: `${i.description} (the person's company)` })),
];

export const VERIFIED_INPUTS: Record<DiscoveryEntity, VerifiedInputDef[]> = { company: companyInputs, contact: contactInputs };
export const VERIFIED_GROUPS_ORDER = ['Limits', 'Contact', 'Company'];

/** Parsed `inputFieldMapping` of a verified search. */
export interface VerifiedFilters {
  pull?: number;
  /** find-verified-contacts: only people of the first N matching companies (company ranking). */
  companyPull?: number;
  industries?: string[];
  headcountRanges?: [number, number][];
  revenue?: { min: number | null; max: number | null; includeUnknown: boolean };
  names?: string[];
  domains?: string[];
  companyCountries?: string[];
  technologies?: string[];
  titles?: string[];
  seniorities?: string[];
  countries?: string[];
}

const KEYS: Record<string, keyof VerifiedFilters> = {
  numberOfCompaniesToPull: 'pull',
  numberOfContactsToPull: 'pull',
  companyIndustryInclude: 'industries',
  companyHeadcountRange: 'headcountRanges',
  companyRevenue: 'revenue',
  companyNameInclude: 'names',
  companyWebsiteInclude: 'domains',
  companyCountryInclude: 'companyCountries',
  companyTechnologiesInclude: 'technologies',
  jobTitleInclude: 'titles',
  seniorityInclude: 'seniorities',
  countryInclude: 'countries',
};

/** `"5000000"`, `"5M"`, `"2.5B"`, `"750k"` → number. */
/** Largest revenue amount (USD) a filter may name: revenue columns are bigint; JS numbers are exact to 2^53. */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;
/** Largest headcount a range may name: `employee_count` is an int column. */
export const MAX_HEADCOUNT = 2_147_483_647;

/** A revenue amount in whole USD (`5000000`, `"5M"`, `"1.5b"`), or null when absent; 400 beyond the column's range. */
export function parseAmount(v: unknown, ptr: string): number | null {
  if (v === undefined || v === null || v === '') return null;
  let n: number;
  if (typeof v === 'number') n = Math.round(v);
  else if (typeof v === 'string') {
    const m = /^\s*(\d{1,20}(?:\.\d{1,10})?)\s*([kmb])?\s*$/i.exec(v.replace(/[,_$]/g, ''));
    if (!m) throw invalidField(ptr, 'must be an amount string such as "5000000" or "5M"');
    const mult = { k: 1e3, m: 1e6, b: 1e9 }[(m[2] ?? '').toLowerCase() as 'k' | 'm' | 'b'] ?? 1;
    n = Math.round(Number(m[1]) * mult);
  } else throw invalidField(ptr, 'must be an amount string such as "5000000" or "5M"');
  if (!Number.isFinite(n) || n < 0 || n > MAX_AMOUNT) throw invalidField(ptr, `must be an amount between 0 and ${MAX_AMOUNT}`);
  return n;
}

function stringArray(v: unknown, ptr: string, max = 1000): string[] {
  if (!Array.isArray(v) || v.length === 0) throw invalidField(ptr, 'must be a non-empty array of strings');
  if (v.length > max) throw invalidField(ptr, `must not have more than ${max} items`);
  const out = v.map((x, i) => {
    if (typeof x !== 'string' || !x.trim()) throw invalidField(`${ptr}/${i}`, 'must be a non-empty string');
    if (x.length > 500) throw invalidField(`${ptr}/${i}`, 'must not be longer than 500 characters');
    return x.trim();
  });
  return [...new Set(out)];
}

/** Validates a flat `inputFieldMapping` for the entity; 400s name the offending entry. */
export function parseVerifiedInput(entity: DiscoveryEntity, mapping: { sourceFieldName: string; userInput?: unknown }[] | undefined): VerifiedFilters {
  const allowed = new Set(VERIFIED_INPUTS[entity].map((i) => i.name));
  const f: VerifiedFilters = {};
  const seen = new Set<string>();
  (mapping ?? []).forEach((entry, idx) => {
    const base = `/inputFieldMapping/${idx}`;
    const name = entry.sourceFieldName;
    if (!allowed.has(name)) throw invalidField(`${base}/sourceFieldName`, `unknown input ${name}; see GET /schema/verified-discovery/${entity}`);
    if (seen.has(name)) throw invalidField(`${base}/sourceFieldName`, `${name} is given more than once`);
    seen.add(name);
    const ptr = `${base}/userInput`;
    const v = entry.userInput;
    switch (name) {
      case 'numberOfCompaniesToPull':
      case 'numberOfContactsToPull': {
        const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > VERIFIED_MAX_LIMIT * VERIFIED_MAX_PAGE)
          throw invalidField(ptr, `must be a whole number between 1 and ${VERIFIED_MAX_LIMIT * VERIFIED_MAX_PAGE}`);
        if (entity === 'contact' && name === 'numberOfCompaniesToPull') f.companyPull = n;
        else f.pull = n;
        break;
      }
      case 'companyHeadcountRange':
        f.headcountRanges = stringArray(v, ptr, 50).map((r, i) => {
          const m = /^(\d+)\s*-\s*(\d+)?$/.exec(r) ?? /^(\d+)\+$/.exec(r);
          if (!m) throw invalidField(`${ptr}/${i}`, 'must be a range of the form <min>-<max>');
          const lo = Number(m[1]);
          const hi = m[2] === undefined ? MAX_HEADCOUNT : Number(m[2]);
          if (lo > MAX_HEADCOUNT || hi > MAX_HEADCOUNT) throw invalidField(`${ptr}/${i}`, `headcounts must not exceed ${MAX_HEADCOUNT}`);
          if (lo > hi) throw invalidField(`${ptr}/${i}`, 'min must not exceed max');
          return [lo, hi] as [number, number];
        });
        break;
      case 'companyRevenue': {
        if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidField(ptr, 'must be an object {min, max, include_unknown_revenue}');
        const o = v as Record<string, unknown>;
        for (const k of Object.keys(o)) if (!['min', 'max', 'include_unknown_revenue'].includes(k)) throw invalidField(`${ptr}/${k}`, 'is not a property of companyRevenue');
        const min = parseAmount(o.min, `${ptr}/min`);
        const max = parseAmount(o.max, `${ptr}/max`);
        if (min !== null && max !== null && min > max) throw invalidField(`${ptr}/min`, 'must not exceed max');
        const inc = o.include_unknown_revenue ?? false;
        if (typeof inc !== 'boolean') throw invalidField(`${ptr}/include_unknown_revenue`, 'must be a boolean');
        f.revenue = { min, max, includeUnknown: inc };
        break;
      }
      case 'companyNameInclude':
        if (Array.isArray(v) && v.length > VERIFIED_MAX_LIST) throw invalidField(ptr, `must not have more than ${VERIFIED_MAX_LIST} items`);
        f.names = stringArray(v, ptr, VERIFIED_MAX_LIST).map((s) => s.toLowerCase());
        break;
      case 'companyWebsiteInclude':
        if (Array.isArray(v) && v.length > VERIFIED_MAX_LIST) throw invalidField(ptr, `must not have more than ${VERIFIED_MAX_LIST} items`);
        f.domains = stringArray(v, ptr, VERIFIED_MAX_LIST).map((s, i) => {
          const d = normalizeDomain(s);
          if (!d || !d.includes('.')) throw invalidField(`${ptr}/${i}`, 'must be a website or domain');
          return d;
        });
        break;
      default:
        (f as Record<string, unknown>)[KEYS[name]!] = stringArray(v, ptr);
    }
  });
  const names = (mapping ?? []).find((e) => e.sourceFieldName === 'companyNameInclude');
  const sites = (mapping ?? []).find((e) => e.sourceFieldName === 'companyWebsiteInclude');
  const combined = (Array.isArray(names?.userInput) ? names.userInput.length : 0) + (Array.isArray(sites?.userInput) ? sites.userInput.length : 0);
  if (combined > VERIFIED_MAX_LIST)
    throw badRequest('validation_failed', `companyNameInclude and companyWebsiteInclude together must not have more than ${VERIFIED_MAX_LIST} entries (got ${combined})`, [
      { path: '/inputFieldMapping', message: `company name and website lists together must not have more than ${VERIFIED_MAX_LIST} entries` },
    ]);
  return f;
}

/** Result fields of the verified searches (`fields`): a column of the person or of their company (db/discoveryColumns.ts reads it). */
export type VerifiedResultField = Pick<CatalogField, 'type' | 'output' | 'present' | 'also'> & { column: string; ofCompany: boolean };
const verifiedField = (c: DsColumn, ofCompany: boolean, output: string[]): VerifiedResultField => ({ column: c.column, ofCompany, output, type: c.type, present: c.present, also: c.also });
export const VERIFIED_RESULT_FIELDS: Record<DiscoveryEntity, Record<string, VerifiedResultField>> = {
  company: Object.fromEntries(COMPANY_COLUMNS.filter((c) => c.column !== 'verified' && c.column !== 'updated_at').map((c) => [c.companyKey!, verifiedField(c, true, [c.companyKey!])])),
  contact: {
    ...Object.fromEntries(
      PERSON_COLUMNS.filter((c) => !['verified', 'updated_at', 'company_pronet_url'].includes(c.column)).map((c) => [c.contactKey, verifiedField(c, false, [c.contactKey])]),
    ),
    ...Object.fromEntries(COMPANY_COLUMNS.filter((c) => c.column !== 'verified' && c.column !== 'updated_at').map((c) => [c.companyKey!, verifiedField(c, true, ['company', c.companyKey!])])),
  },
};

export const VERIFIED_DEFAULT_FIELDS: Record<DiscoveryEntity, string[]> = {
  company: ['companyName', 'companyWebsite', 'companyPronet', 'companyIndustry', 'companyHeadcount', 'companyCity', 'companyState', 'companyCountry'],
  contact: ['fullName', 'firstName', 'lastName', 'title', 'seniority', 'country', 'pronet', 'companyName', 'companyWebsite'],
};

/**
 * Ranking of verified results (no sort, no cursor):
 * - companies: larger headcount first (unknown last), then newest record id;
 * - contacts: seniority (Owner, CXO, VP, Director, Manager, Senior, Entry, Intern, other), then
 *   more years of experience, then record id.
 */
export const VERIFIED_RANKING_DOC = {
  company: 'Ranked by headcount (employee_count, largest first, unknown last), then by record id.',
  contact: 'Ranked by seniority (Owner, CXO, VP, Director, Manager, Senior, Entry, Intern, then others), then by years of experience (most first), then by record id.',
};

// ---------------------------------------------------------------------------------------------
// Verified schema items (GET /schema/verified-discovery/{contact|company})

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
