/**
 * The column each contact catalog field (domain/contactCatalog.ts) reads, and the joins they need.
 *
 * SQL aliases: `c` = contacts; join key `company` brings `co` = the contact's primary company.
 */
import { compileWhere, withColumns, type CompiledWhere, type CompileOptions, type FieldColumn, type SqlCatalog } from './conditionSql.js';
import type { ContactCatalog, ContactField } from '../domain/contactCatalog.js';
import { isUuid } from '../domain/ids.js';

export const COMPANY_JOIN = 'company';
/** The JOIN clause of each join key used by contact catalog fields. */
const CONTACT_JOINS: Record<string, string> = {
  [COMPANY_JOIN]:
    'left join companies co on co.id = c.primary_company_id',
};

/** JOIN clauses for a set of join keys. */
export function joinSql(keys: Iterable<string>): string {
  return [...new Set(keys)].map((k) => CONTACT_JOINS[k]!).join(' ');
}

/** SQL of the contact id: every contact query reads `contacts c`. */
const CONTACT_ID_SQL = 'c.id';

/** A contact's source ids in the order it came from them (first seen), as every contact answer lists them. */
const SOURCES_SQL =
  'array(select cs.source_id::text from contact_sources cs where cs.contact_id = c.id group by cs.source_id order by min(cs.first_seen), cs.source_id)';

const company = (column: string): FieldColumn => ({ sql: `co.${column}`, joins: [COMPANY_JOIN] });

const BUILTIN_COLUMNS: Record<string, FieldColumn> = {
  'contact.firstName': { sql: 'c.first_name' },
  'contact.lastName': { sql: 'c.last_name' },
  'contact.fullName': { sql: 'c.full_name' },
  'contact.jobTitle': { sql: 'c.title' },
  'contact.workEmail': { sql: 'c.work_email' },
  'contact.emails': { sql: 'c.emails' },
  'contact.pronet': { sql: 'c.pronet' },
  'contact.sources': {
    sql: "(select coalesce(array_agg(distinct cs.source_id::text), '{}') from contact_sources cs where cs.contact_id = c.id)",
    selectSql: SOURCES_SQL,
  },
  'contact.createdAt': { sql: 'c.created_at' },
  'contact.updatedAt': { sql: 'c.updated_at' },
  'company.id': { sql: 'co.id::text', joins: [COMPANY_JOIN] },
  'company.companyName': company('company_name'),
  'company.companyWebsite': company('company_website'),
  'company.companyIndustry': company('company_industry'),
  'company.companyHeadcount': company('company_headcount'),
  'company.companyPronet': company('company_pronet'),
};

/** A custom field is a member of the `custom_fields` jsonb, cast to its type; its id (a uuid) is written into the SQL. */
function customColumn(f: ContactField): FieldColumn {
  const id = f.write?.kind === 'custom' ? f.write.id : '';
  if (!isUuid(id)) throw new Error(`custom field ${f.path} has no uuid id`);
  const member = `c.custom_fields->'${id}'`;
  const text = `(c.custom_fields->>'${id}')`;
  const sql =
    f.type === 'string'
      ? text
      : f.type === 'number'
        ? `${text}::numeric`
        : f.type === 'date'
          ? `${text}::timestamptz`
          : f.type === 'boolean'
            ? `${text}::boolean`
            : `array(select jsonb_array_elements_text(case when jsonb_typeof(${member}) = 'array' then ${member} else '[]'::jsonb end))`;
  return { sql, selectSql: member };
}

export type ContactColumns = SqlCatalog<ContactField>;

const built = new WeakMap<ContactCatalog, ContactColumns>();
/** The contact catalog with its columns (built once per catalog object). */
export function contactColumns(catalog: ContactCatalog): ContactColumns {
  let columns = built.get(catalog);
  if (!columns) built.set(catalog, (columns = withColumns(catalog, (f) => (f.custom ? customColumn(f) : BUILTIN_COLUMNS[f.path]!), CONTACT_ID_SQL)));
  return columns;
}

/** `conditions` / `groupedCondition` over contacts as a where-fragment on `contacts c` (and the joins it needs). */
export function contactWhere(catalog: ContactCatalog, input: { conditions?: unknown; groupedCondition?: unknown }, opts?: CompileOptions): CompiledWhere {
  return compileWhere(contactColumns(catalog), input, opts);
}
