/**
 * The fixed mix of discovery searches (the "hidden-shape" queries): what prospecting users search
 * for. bench/discovery.ts times them; test/integration/discoveryOpenSearch.test.ts checks both
 * engines answer them alike.
 */
export type Entity = 'contacts' | 'companies';
const c = (field: string, operator: string, value?: unknown) => ({ field, operator, ...(value === undefined ? {} : { value }) });
const and = (...conditions: unknown[]) => ({ operator: 'AND', conditions });
const or = (...conditions: unknown[]) => ({ operator: 'OR', conditions });
const not = (...conditions: unknown[]) => ({ operator: 'NOT', conditions });

/** The fixed mix: what prospecting users search for. */
export const QUERIES: { name: string; entity: Entity; body: Record<string, unknown> }[] = [
  { name: 'title LIKE vp of sales', entity: 'contacts', body: { conditions: [c('dsContact.member_job_title', 'LIKE', '%vp of sales%')] } },
  { name: 'title LIKE + country', entity: 'contacts', body: { conditions: [c('dsContact.member_job_title', 'LIKE', '%data scien%'), c('dsContact.member_location_country', '==', 'Germany')] } },
  { name: 'seniority IN + country', entity: 'contacts', body: { conditions: [c('dsContact.member_seniority', 'IN', ['VP', 'CXO']), c('dsContact.member_location_country', '==', 'France')] } },
  { name: 'company industry IN + seniority', entity: 'contacts', body: { conditions: [c('dsCompany.industry', 'IN', ['Biotechnology', 'Legal Services']), c('dsContact.member_seniority', 'IN', ['Director', 'VP'])] } },
  { name: 'company size range + title', entity: 'contacts', body: { conditions: [c('dsCompany.size_range', 'IN', ['1001-5000', '5001-10000']), c('dsContact.member_job_title', 'LIKE', '%engineering manager%')] } },
  { name: 'country IN + experience range', entity: 'contacts', body: { conditions: [c('dsContact.member_location_country', 'IN', ['Spain', 'Ireland']), c('dsContact.member_years_experience', 'BETWEEN', [10, 15])] } },
  {
    name: 'nested OR groups (contacts)', entity: 'contacts',
    body: { groupedCondition: or(and(c('dsContact.member_job_title', 'LIKE', '%chief%'), c('dsContact.member_location_country', '==', 'United Kingdom')), and(c('dsContact.member_seniority', '==', 'Owner'), c('dsCompany.industry', '==', 'Renewable Energy'))) },
  },
  { name: 'skills + country', entity: 'contacts', body: { conditions: [c('dsContact.member_skills', 'IN', ['Kubernetes']), c('dsContact.member_location_country', '==', 'Canada')] } },
  { name: 'company technology + seniority', entity: 'contacts', body: { conditions: [c('dsCompany.technologies', 'IN', ['Databricks']), c('dsContact.member_seniority', '==', 'CXO')] } },
  { name: 'name LIKE + country', entity: 'contacts', body: { conditions: [c('dsContact.member_full_name', 'LIKE', 'priya pat%'), c('dsContact.member_location_country', '==', 'India')] } },
  { name: 'NOT group (contacts)', entity: 'contacts', body: { conditions: [c('dsContact.member_location_country', '==', 'Netherlands')], groupedCondition: not(c('dsContact.member_seniority', 'IN', ['Intern', 'Entry', 'Senior'])) } },
  { name: 'company headcount + title LIKE', entity: 'contacts', body: { conditions: [c('dsCompany.employee_count', '>=', 5000), c('dsContact.member_job_title', 'LIKE', '%recruit%')] } },
  { name: 'industry IN + size range', entity: 'companies', body: { conditions: [c('dsCompany.industry', 'IN', ['Software Development', 'Computer Games']), c('dsCompany.size_range', 'IN', ['201-500', '501-1000'])] } },
  { name: 'country + headcount BETWEEN', entity: 'companies', body: { conditions: [c('dsCompany.hq_country', '==', 'Germany'), c('dsCompany.employee_count', 'BETWEEN', [50, 500])] } },
  { name: 'technologies ALL + country', entity: 'companies', body: { conditions: [c('dsCompany.technologies', 'ALL', ['AWS', 'Salesforce']), c('dsCompany.hq_country', '==', 'Australia')] } },
  { name: 'company name LIKE', entity: 'companies', body: { conditions: [c('dsCompany.company_name', 'LIKE', '%quantum%')] } },
  { name: 'people-filtered: country + CXO', entity: 'companies', body: { conditions: [c('dsCompany.hq_country', '==', 'France'), c('dsContact.member_seniority', '==', 'CXO')] } },
  {
    name: 'people-filtered: same person', entity: 'companies',
    body: { conditions: [c('dsCompany.size_range', '==', '51-200'), c('dsCompany.industry', '==', 'Banking')], groupedCondition: and(c('dsContact.member_seniority', '==', 'VP'), c('dsContact.member_location_country', '==', 'United Kingdom')) },
  },
  {
    name: 'nested OR groups (companies)', entity: 'companies',
    body: { groupedCondition: or(and(c('dsCompany.industry', '==', 'Biotechnology'), c('dsCompany.size_range', 'IN', ['1001-5000', '5001-10000'])), and(c('dsCompany.hq_country', '==', 'Israel'), c('dsCompany.technologies', 'IN', ['Kubernetes']))) },
  },
  { name: 'people-filtered: title LIKE', entity: 'companies', body: { conditions: [c('dsCompany.industry', '==', 'Insurance'), c('dsContact.member_job_title', 'LIKE', '%chief data%')] } },
];

