/**
 * Field catalogs of the discovery search (API-SPEC "Discovery search", DESIGN §4): which ds_*
 * columns there are and where each goes in a result item. Presentation of these fields (schema
 * items, options links) is domain/discoverySchemaItems.ts; the verified searches' inputs and
 * their parsing are domain/verifiedSearchInput.ts.
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
 * Verified search (`find-verified-*`): result fields (`fields`) are the same columns, listed in
 * VERIFIED_RESULT_FIELDS below.
 */
import { catalogOf, type CatalogField, type FieldType } from './conditions.js';
import { normalizeProfileUrl } from './identity.js';

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

/**
 * Items of a v2 search's groups by depth (`groupedCondition` is depth 1; domain/conditions.ts
 * TreeLimits): wide at the top (an AND of criteria), narrower below (alternatives, then rare
 * third-level groups), so a query holds at most 100 + 30 × 10 × 3 = 1,000 conditions, under
 * OpenSearch's 1,024 clauses. The request schemas state exactly these (api/schemas/conditions.ts).
 */
export const DISCOVERY_TREE_LIMITS = { groupItems: [30, 10, 3] } as const;

/** Catalog of `find-contacts-v2`: people, with their company's fields. */
export const contactSearchCatalog = {
  ...catalogOf([...PERSON_COLUMNS.map((c) => personField(c)), ...COMPANY_COLUMNS.map((c) => companyField(c, 'contact'))]),
  treeLimits: DISCOVERY_TREE_LIMITS,
};

/** Catalog of the person side of a company search (the people sub-query). */
export const personCatalog = catalogOf(PERSON_COLUMNS.map((c) => personField(c)));

/**
 * Catalog of `find-companies-v2`: companies. `dsContact.*` paths are listed for conditions
 * (compiled against the people of the company); they are not company fields.
 */
export const companySearchCatalog = {
  ...catalogOf([...COMPANY_COLUMNS.map((c) => companyField(c, 'company')), ...PERSON_COLUMNS.map((c) => personField(c))]),
  treeLimits: DISCOVERY_TREE_LIMITS,
};

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
// Verified search result fields (find-verified-companies / find-verified-contacts)

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

