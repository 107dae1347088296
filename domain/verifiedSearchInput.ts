/**
 * Inputs of the verified searches (`find-verified-companies`, `find-verified-contacts`): a flat
 * `inputFieldMapping` of named inputs, their definitions (what the schema endpoint lists, see
 * domain/discoverySchemaItems.ts), their parsing into VerifiedFilters (db/verifiedSearch.ts
 * queries them), limits and ranking.
 */
import { invalidField, badRequest } from './errors.js';
import { normalizeDomain } from './identity.js';
import { SENIORITIES, SIZE_RANGES } from './datasetGenerator.js';
import type { DiscoveryEntity } from './discoveryCatalog.js';

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
    description: 'Companies whose employee count lies in any of these `<min>-<max>` ranges (inclusive; a range written high-low is read low-high)', groupNames: ['Company'],
    userInputShape: 'array', exampleUserInput: ['51-200', '201-500'], options: { kind: 'static', values: SIZE_RANGES },
  },
  {
    name: 'companyRevenue', readAccessPath: 'revenueMin', type: 'object', displayName: 'Revenue',
    description: 'Companies whose yearly revenue estimate (USD) overlaps [min, max] (a min above max is read as the range between them); `include_unknown_revenue` also keeps companies without an estimate. Amounts are strings of digits, optionally with a K, M or B suffix',
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
    // A name given again is checked like the first, but only the first applies (as a sort key listed twice):
    // "unique by sourceFieldName" is beyond JSON Schema, so what the document calls valid is taken (issue 27 item 21).
    const into: VerifiedFilters = seen.has(name) ? {} : f;
    seen.add(name);
    const ptr = `${base}/userInput`;
    const v = entry.userInput;
    switch (name) {
      case 'numberOfCompaniesToPull':
      case 'numberOfContactsToPull': {
        const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > VERIFIED_MAX_LIMIT * VERIFIED_MAX_PAGE)
          throw invalidField(ptr, `must be a whole number between 1 and ${VERIFIED_MAX_LIMIT * VERIFIED_MAX_PAGE}`);
        if (entity === 'contact' && name === 'numberOfCompaniesToPull') into.companyPull = n;
        else into.pull = n;
        break;
      }
      case 'companyHeadcountRange':
        into.headcountRanges = stringArray(v, ptr, 50).map((r, i) => {
          const m = /^(\d+)\s*-\s*(\d+)?$/.exec(r) ?? /^(\d+)\+$/.exec(r);
          if (!m) throw invalidField(`${ptr}/${i}`, 'must be a range of the form <min>-<max>');
          const lo = Number(m[1]);
          const hi = m[2] === undefined ? MAX_HEADCOUNT : Number(m[2]);
          if (lo > MAX_HEADCOUNT || hi > MAX_HEADCOUNT) throw invalidField(`${ptr}/${i}`, `headcounts must not exceed ${MAX_HEADCOUNT}`);
          // Order is not checked: comparing two numbers in one string is beyond the schema, and what it calls valid is taken (issue 27 item 21).
          return (lo <= hi ? [lo, hi] : [hi, lo]) as [number, number];
        });
        break;
      case 'companyRevenue': {
        if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidField(ptr, 'must be an object {min, max, include_unknown_revenue}');
        const o = v as Record<string, unknown>;
        for (const k of Object.keys(o)) if (!['min', 'max', 'include_unknown_revenue'].includes(k)) throw invalidField(`${ptr}/${k}`, 'is not a property of companyRevenue');
        const min = parseAmount(o.min, `${ptr}/min`);
        const max = parseAmount(o.max, `${ptr}/max`);
        const inc = o.include_unknown_revenue ?? false;
        if (typeof inc !== 'boolean') throw invalidField(`${ptr}/include_unknown_revenue`, 'must be a boolean');
        // Amounts with suffixes cannot be ordered by a schema: a min above max is read as the range between them.
        into.revenue = min !== null && max !== null && min > max ? { min: max, max: min, includeUnknown: inc } : { min, max, includeUnknown: inc };
        break;
      }
      case 'companyNameInclude':
        if (Array.isArray(v) && v.length > VERIFIED_MAX_LIST) throw invalidField(ptr, `must not have more than ${VERIFIED_MAX_LIST} items`);
        into.names = stringArray(v, ptr, VERIFIED_MAX_LIST).map((s) => s.toLowerCase());
        break;
      case 'companyWebsiteInclude':
        if (Array.isArray(v) && v.length > VERIFIED_MAX_LIST) throw invalidField(ptr, `must not have more than ${VERIFIED_MAX_LIST} items`);
        into.domains = stringArray(v, ptr, VERIFIED_MAX_LIST).map((s, i) => {
          const d = normalizeDomain(s);
          if (!d || !d.includes('.')) throw invalidField(`${ptr}/${i}`, 'must be a website or domain');
          return d;
        });
        break;
      default:
        (into as Record<string, unknown>)[KEYS[name]!] = stringArray(v, ptr);
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
