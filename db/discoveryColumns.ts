/**
 * The column each discovery catalog field (domain/discoveryCatalog.ts) reads, over the search's
 * FROM: `ds_people p` (joined to `ds_companies c` by the join key `company`) for a contact search,
 * `ds_companies c` for a company search; and the SQL of the verified searches' result fields and
 * ranking.
 */
import { withColumns, type FieldColumn } from './conditionSql.js';
import type { CatalogField } from '../domain/conditions.js';
import { SENIORITIES } from '../domain/datasetGenerator.js';
import {
  COMPANY_COLUMNS,
  COMPANY_PREFIX,
  PERSON_COLUMNS,
  PERSON_PREFIX,
  companySearchCatalog,
  contactSearchCatalog,
  personCatalog,
  type DiscoveryEntity,
  type DsColumn,
  type VerifiedResultField,
} from '../domain/discoveryCatalog.js';

/** Filters on jsonb lists match their members (emails' addresses, phones' numbers); results read the jsonb. */
const FILTER_SQL: Record<string, (alias: string) => string> = {
  member_emails: (a) => `(select coalesce(array_agg(e->>'email'), '{}') from jsonb_array_elements(${a}.member_emails) e)`,
  member_phones: (a) => `(select coalesce(array_agg(e->>'number'), '{}') from jsonb_array_elements(${a}.member_phones) e)`,
};

/**
 * Number operands are compared as `numeric` by the compiler; filtering on `col::numeric` (with
 * matching expression indexes, Migration20261121020100_dataset_search) keeps those comparisons
 * indexable, while results still read the plain column.
 */
const filterExpr = (c: DsColumn, alias: string) =>
  FILTER_SQL[c.column] ? FILTER_SQL[c.column]!(alias) : c.type === 'number' ? `(${alias}.${c.column})::numeric` : `${alias}.${c.column}`;
const selectExpr = (c: DsColumn, alias: string) => (FILTER_SQL[c.column] || c.type === 'number' ? `${alias}.${c.column}` : undefined);

/** Company columns copied onto ds_people (`p.company_<column>`): contact searches filter there. */
export const PERSON_COPIES: Record<string, string> = {
  industry: 'company_industry',
  size_range: 'company_size_range',
  employee_count: 'company_employee_count',
  hq_country: 'company_hq_country',
  technologies: 'company_technologies',
};

const personColumn = (c: DsColumn): FieldColumn => ({ sql: filterExpr(c, 'p'), selectSql: selectExpr(c, 'p') });

function companyColumn(c: DsColumn, entity: DiscoveryEntity): FieldColumn {
  const copy = entity === 'contact' ? PERSON_COPIES[c.column] : undefined;
  return {
    sql: copy ? filterExpr({ ...c, column: copy }, 'p') : filterExpr(c, 'c'),
    selectSql: selectExpr(c, 'c') ?? (copy ? `c.${c.column}` : undefined),
    // in a contact search the company columns come through the join `company`
    joins: entity === 'contact' ? ['company'] : undefined,
  };
}

const PERSON_BY_NAME = new Map(PERSON_COLUMNS.map((c) => [c.column, c]));
const COMPANY_BY_NAME = new Map(COMPANY_COLUMNS.map((c) => [c.column, c]));
const columnIn = (entity: DiscoveryEntity) => (f: CatalogField): FieldColumn =>
  f.path.startsWith(PERSON_PREFIX)
    ? personColumn(PERSON_BY_NAME.get(f.path.slice(PERSON_PREFIX.length))!)
    : companyColumn(COMPANY_BY_NAME.get(f.path.slice(COMPANY_PREFIX.length))!, entity);

/** `find-contacts-v2`: FROM ds_people p [LEFT JOIN ds_companies c]. */
export const contactSearchColumns = withColumns(contactSearchCatalog, columnIn('contact'), 'p.id');
/** The person side of a company search (the `p` of the people sub-query). */
export const personColumns = withColumns(personCatalog, columnIn('contact'), 'p.id');
/** `find-companies-v2`: FROM ds_companies c (`dsContact.*` conditions are compiled against the company's people). */
export const companySearchColumns = withColumns(companySearchCatalog, columnIn('company'), 'c.id');

export const JOIN_SQL: Record<string, string> = { company: 'left join ds_companies c on c.id = p.company_id' };

/** SQL of a verified result field: the person's column (`p`) or their company's (`c`). */
export const verifiedResultSql = (f: VerifiedResultField) => `${f.ofCompany ? 'c' : 'p'}.${f.column}`;

/** Seniority rank of a person (VERIFIED_RANKING_DOC): the order of SENIORITIES, others last. */
export const SENIORITY_RANK_SQL = `(case p.member_seniority ${SENIORITIES.map((s, i) => `when '${s}' then ${i}`).join(' ')} else ${SENIORITIES.length} end)`;
