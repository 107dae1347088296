/**
 * The global discovery dataset (DESIGN §6): companies, people, their distinct titles and posts.
 * Not per workspace: no `workspace` filter, every workspace searches the same rows. Tables and
 * the index plan: Migration20261121020000_dataset, …020100_dataset_search, …24140000_discovery_plans,
 * …24150500_discovery_arrays, …24152500_discovery_partner_keys, …25230000_people_by_skill,
 * …26020000_companies_by_technology, …26030000_title_headcount, …26050000_people_country_id.
 * Expression indexes (`::numeric` casts for range filters, `lower()`, the seniority rank,
 * `gin_trgm_ops`) are declared as raw DDL (`expression`); the ORM compares those by name only.
 */
import { defineEntity, p } from '@mikro-orm/core';
import type { InferKyselyDB } from '@mikro-orm/postgresql';

const trgm = (table: string, name: string, column: string) => ({ name, expression: `create index ${name} on ${table} using gin (${column} gin_trgm_ops)` });

/**
 * The statement-level triggers that keep a search-side table (`side`) in step with every write
 * to `table`, through the migration's function `<side>_sync()` (its TRUNCATE trigger is in the
 * migration only: the ORM's introspection does not see it).
 */
const SIDE_TRIGGER_EVENTS = ['insert', 'update', 'delete'] as const;
/** The names of a search-side table's triggers (the importer switches them off for a load into an empty table). */
export const sideTableTriggerNames = (side: string) => SIDE_TRIGGER_EVENTS.map((event) => `${side}_${event}`);
const sideTableTriggers = (table: string, side: string) =>
  SIDE_TRIGGER_EVENTS.map((event) => ({
    name: `${side}_${event}`,
    timing: 'after' as const,
    events: [event],
    forEach: 'statement' as const,
    expression: `create trigger ${side}_${event} after ${event} on ${table} referencing ${
      { insert: 'new table as new_rows', update: 'old table as old_rows new table as new_rows', delete: 'old table as old_rows' }[event]
    } for each statement execute function ${side}_sync()`,
  }));
const numeric = (table: string, name: string, column: string) => ({ name, expression: `create index ${name} on ${table}(((${column})::numeric))` });

export const DsCompany = defineEntity({
  name: 'DsCompany',
  tableName: 'ds_companies',
  properties: {
    id: p.uuid().primary(),
    companyPronetUrl: p.text().unique('ds_companies_company_pronet_url_key'),
    companyName: p.text().nullable(),
    companyWebsite: p.text().nullable(),
    companyDomain: p.text().nullable(),
    industry: p.text().nullable(),
    sizeRange: p.text().nullable(),
    employeeCount: p.integer().nullable(),
    revenueMin: p.bigint('number').nullable(),
    revenueMax: p.bigint('number').nullable(),
    foundedYear: p.integer().nullable(),
    hqCity: p.text().nullable(),
    hqState: p.text().nullable(),
    hqCountry: p.text().nullable(),
    technologies: p.array().columnType('text[]').default([]),
    verified: p.boolean().default(false),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { name: 'ds_companies_domain', properties: ['companyDomain'] },
    { name: 'ds_companies_size_range', properties: ['sizeRange'] },
    { name: 'ds_companies_industry', properties: ['industry', 'sizeRange'], include: ['id'] },
    { name: 'ds_companies_technologies', properties: ['technologies'], type: 'gin' },
    { name: 'ds_companies_hq_country', expression: 'create index ds_companies_hq_country on ds_companies(hq_country, ((employee_count)::numeric)) include (id, employee_count, technologies)' },
    { name: 'ds_companies_lower_name', expression: 'create index ds_companies_lower_name on ds_companies(lower(company_name)) where verified' },
    { name: 'ds_companies_verified_rank', expression: 'create index ds_companies_verified_rank on ds_companies(employee_count desc nulls last, id) where verified' },
    numeric('ds_companies', 'ds_companies_employee_count_num', 'employee_count'),
    numeric('ds_companies', 'ds_companies_revenue_min_num', 'revenue_min'),
    numeric('ds_companies', 'ds_companies_revenue_max_num', 'revenue_max'),
    numeric('ds_companies', 'ds_companies_founded_year_num', 'founded_year'),
    trgm('ds_companies', 'ds_companies_name_trgm', 'company_name'),
    trgm('ds_companies', 'ds_companies_website_trgm', 'company_website'),
    trgm('ds_companies', 'ds_companies_industry_trgm', 'industry'),
    trgm('ds_companies', 'ds_companies_hq_city_trgm', 'hq_city'),
  ],
  // Migration20261126020000_companies_by_technology
  triggers: sideTableTriggers('ds_companies', 'ds_companies_by_technology'),
});

export const DsPerson = defineEntity({
  name: 'DsPerson',
  tableName: 'ds_people',
  properties: {
    id: p.uuid().primary(),
    memberPronetUrl: p.text().unique('ds_people_member_pronet_url_key'),
    memberFullName: p.text().nullable(),
    memberFirstName: p.text().nullable(),
    memberLastName: p.text().nullable(),
    memberJobTitle: p.text().nullable(),
    memberSeniority: p.text().nullable(),
    memberHeadline: p.text().nullable(),
    memberLocationCity: p.text().nullable(),
    memberLocationCountry: p.text().nullable(),
    memberSkills: p.array().columnType('text[]').default([]),
    memberYearsExperience: p.integer().nullable(),
    memberEmails: p.json<unknown[]>().default([] as never),
    memberPhones: p.json<unknown[]>().default([] as never),
    companyPronetUrl: p.text().nullable(),
    companyId: p.manyToOne(DsCompany).mapToPk().fieldName('company_id').deleteRule('set null').foreignKeyName('ds_people_company_id_fkey').nullable().index('ds_people_company_id'),
    verified: p.boolean().default(false),
    updatedAt: p.datetime().defaultRaw('now()'),
    // Copies of the company's columns, so person searches filter on one table.
    companyIndustry: p.text().nullable(),
    companySizeRange: p.text().nullable(),
    companyEmployeeCount: p.integer().nullable(),
    companyHqCountry: p.text().nullable(),
    companyTechnologies: p.array().columnType('text[]').nullable(),
  },
  indexes: [
    { name: 'ds_people_company_pronet_url', properties: ['companyPronetUrl'] },
    { name: 'ds_people_company_size_range', properties: ['companySizeRange'] },
    { name: 'ds_people_skills', properties: ['memberSkills'], type: 'gin' },
    { name: 'ds_people_company_hq_country', properties: ['companyHqCountry', 'memberSeniority'], include: ['id', 'companyId'] },
    { name: 'ds_people_company_industry', properties: ['companyIndustry', 'memberSeniority'], include: ['id', 'companyId', 'memberLocationCountry'] },
    {
      name: 'ds_people_seniority',
      properties: ['memberSeniority', 'memberLocationCountry'],
      include: ['id', 'companyId', 'companyIndustry', 'companySizeRange', 'companyEmployeeCount', 'companyHqCountry', 'verified', 'companyTechnologies'],
    },
    {
      name: 'ds_people_title',
      properties: ['memberJobTitle', 'memberLocationCountry'],
      include: ['id', 'companyId', 'memberSeniority', 'memberYearsExperience', 'companyIndustry', 'companySizeRange', 'companyEmployeeCount', 'companyHqCountry', 'verified'],
    },
    {
      name: 'ds_people_title_size_range',
      properties: ['memberJobTitle', 'companySizeRange'],
      include: ['id', 'companyId', 'memberLocationCountry', 'memberSeniority'],
    },
    {
      name: 'ds_people_title_headcount',
      expression: 'create index ds_people_title_headcount on ds_people(member_job_title, ((company_employee_count)::numeric)) include (id, company_employee_count) where company_employee_count is not null',
    },
    { name: 'ds_people_country_seniority', properties: ['memberLocationCountry', 'memberSeniority'], include: ['id'] },
    // Migration20261126050000_people_country_id: the id-order walk of a broad search with a country
    { name: 'ds_people_country_id', properties: ['memberLocationCountry', 'id'], include: ['memberSeniority'] },
    { name: 'ds_people_seniority_company', properties: ['memberSeniority', 'companyId'], include: ['id'] },
    {
      name: 'ds_people_country_years',
      expression:
        'create index ds_people_country_years on ds_people(member_location_country, ((member_years_experience)::numeric)) include (id, company_id, member_seniority, member_years_experience, member_skills)',
    },
    {
      name: 'ds_people_verified_rank',
      expression: `create index ds_people_verified_rank on ds_people((case member_seniority when 'Owner' then 0 when 'CXO' then 1 when 'VP' then 2 when 'Director' then 3 when 'Manager' then 4 when 'Senior' then 5 when 'Entry' then 6 when 'Intern' then 7 else 8 end), member_years_experience desc nulls last, id) where verified`,
    },
    numeric('ds_people', 'ds_people_years_num', 'member_years_experience'),
    numeric('ds_people', 'ds_people_company_employee_count_num', 'company_employee_count'),
    trgm('ds_people', 'ds_people_full_name_trgm', 'member_full_name'),
    { name: 'ds_people_full_name_lower', expression: 'create index ds_people_full_name_lower on ds_people(lower(member_full_name) text_pattern_ops, member_location_country)' },
  ],
  // Migration20261125230000_people_by_skill
  triggers: sideTableTriggers('ds_people', 'ds_people_by_skill'),
});

/**
 * One row per (skill, location country, person) of `ds_people`, kept by triggers on ds_people:
 * `skills IN (…) AND country …` is an index-only range of the primary key (db/discoverySearch.ts).
 */
export const DsPersonSkill = defineEntity({
  name: 'DsPersonSkill',
  tableName: 'ds_people_by_skill',
  properties: {
    skill: p.text().primary(),
    country: p.text().primary(),
    personId: p.uuid().primary(),
  },
});

/**
 * One row per (technology, company) of `ds_companies`, kept by triggers on ds_companies:
 * `technologies IN (…) AND seniority …` of a contact search joins a range of its primary key with
 * one of `ds_people_seniority_company` (db/discoverySearch.ts).
 */
export const DsCompanyTechnology = defineEntity({
  name: 'DsCompanyTechnology',
  tableName: 'ds_companies_by_technology',
  properties: {
    technology: p.text().primary(),
    companyId: p.uuid().primary(),
  },
});

/** Distinct job titles of `ds_people` (title suggestions, trigram-searched). */
export const DsPeopleTitle = defineEntity({
  name: 'DsPeopleTitle',
  tableName: 'ds_people_titles',
  properties: {
    title: p.text().primary(),
  },
  indexes: [trgm('ds_people_titles', 'ds_people_titles_trgm', 'title')],
});

export const DsPost = defineEntity({
  name: 'DsPost',
  tableName: 'ds_posts',
  properties: {
    id: p.uuid().primary(),
    memberPronetUrl: p.text(),
    postUrl: p.text().nullable().unique('ds_posts_post_url_key'),
    text: p.text().nullable(),
    postedAt: p.datetime().nullable(),
    likes: p.integer().nullable(),
    comments: p.integer().nullable(),
    interactionType: p.text().nullable(),
    authorPronetUrl: p.text().nullable(),
  },
  indexes: [
    { name: 'ds_posts_author', properties: ['authorPronetUrl'] },
    { name: 'ds_posts_member', columns: [{ name: 'member_pronet_url' }, { name: 'posted_at', sort: 'DESC' }] },
  ],
});

/** Kysely over the dataset tables, typed from the entities (`typedQueries<DatasetDB>()`; global: no workspace). */
export type DatasetDB = InferKyselyDB<typeof DsCompany | typeof DsPerson | typeof DsPost>;
