/**
 * The contact field catalog of a workspace: built-in `contact.*` / `company.*` paths plus the
 * workspace's custom fields (`contact.customFields.<id>`). One list serves `GET /schema/contact`,
 * the condition compiler (filters, fields, sort, unique values), the field mapping of sources
 * and the write path of ingestion.
 *
 * SQL aliases: `c` = contacts; join key `company` brings `co` = the contact's primary company.
 */
import { catalogOf, type CatalogField, type FieldCatalog, type FieldType } from './conditions.js';

export const CUSTOM_FIELD_TYPES = ['string', 'number', 'date', 'boolean', 'multi'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

export interface CustomFieldDef {
  id: string;
  label: string;
  type: CustomFieldType;
  options?: { label: string; value: unknown }[] | null;
}

/** Where an ingested/patched value is written. */
export type WriteTarget =
  | { kind: 'contact'; key: 'firstName' | 'lastName' | 'fullName' | 'title' | 'pronet' | 'workEmail' | 'emails' }
  | { kind: 'company'; key: 'companyName' | 'companyWebsite' | 'companyIndustry' | 'companyHeadcount' | 'companyPronet' }
  | { kind: 'custom'; id: string; type: CustomFieldType; options?: { label: string; value: unknown }[] | null };

export interface ContactField extends CatalogField {
  label: string;
  /** Path of the value in a contact item (`company.companyName`, `customFields.<id>`). */
  readAccessPath: string;
  /** Null for read-only fields (createdAt, sources …). */
  write: WriteTarget | null;
  custom: boolean;
  options?: { label: string; value: unknown }[] | null;
}

export const COMPANY_JOIN = 'company';
/** The JOIN clause of each join key used by contact catalog fields. */
export const CONTACT_JOINS: Record<string, string> = {
  [COMPANY_JOIN]:
    'left join companies co on co.id = c.primary_company_id',
};

/** A contact's source ids in the order it came from them (first seen), as every contact answer lists them. */
export const SOURCES_SQL =
  'array(select cs.source_id::text from contact_sources cs where cs.contact_id = c.id group by cs.source_id order by min(cs.first_seen), cs.source_id)';

const builtin = (
  path: string,
  type: FieldType,
  sql: string,
  output: string[],
  label: string,
  write: WriteTarget | null,
  extra: Partial<ContactField> = {},
): ContactField => ({
  path,
  type,
  sql,
  output,
  label,
  readAccessPath: output.join('.'),
  filteringSupported: true,
  write,
  custom: false,
  ...extra,
});

const companyField = (name: 'companyName' | 'companyWebsite' | 'companyIndustry' | 'companyHeadcount' | 'companyPronet', column: string, label: string) =>
  builtin(`company.${name}`, 'string', `co.${column}`, ['company', name], label, { kind: 'company', key: name }, { joins: [COMPANY_JOIN] });

export const BUILTIN_CONTACT_FIELDS: ContactField[] = [
  builtin('contact.firstName', 'string', 'c.first_name', ['firstName'], 'First name', { kind: 'contact', key: 'firstName' }),
  builtin('contact.lastName', 'string', 'c.last_name', ['lastName'], 'Last name', { kind: 'contact', key: 'lastName' }),
  builtin('contact.fullName', 'string', 'c.full_name', ['fullName'], 'Full name', { kind: 'contact', key: 'fullName' }),
  builtin('contact.jobTitle', 'string', 'c.title', ['title'], 'Job title', { kind: 'contact', key: 'title' }),
  builtin('contact.workEmail', 'string', 'c.work_email', ['workEmail'], 'Work email', { kind: 'contact', key: 'workEmail' }),
  builtin('contact.emails', 'multi', 'c.emails', ['emails'], 'Emails', { kind: 'contact', key: 'emails' }),
  builtin('contact.pronet', 'string', 'c.pronet', ['pronet'], 'Professional network profile', { kind: 'contact', key: 'pronet' }),
  builtin(
    'contact.sources',
    'multi',
    '(select coalesce(array_agg(distinct cs.source_id::text), \'{}\') from contact_sources cs where cs.contact_id = c.id)',
    ['sources'],
    'Sources',
    null,
    { selectSql: SOURCES_SQL },
  ),
  builtin('contact.createdAt', 'date', 'c.created_at', ['createdAt'], 'Created at', null),
  builtin('contact.updatedAt', 'date', 'c.updated_at', ['updatedAt'], 'Updated at', null),
  builtin('company.id', 'string', 'co.id::text', ['company', 'id'], 'Company id', null, { joins: [COMPANY_JOIN], filteringSupported: false }),
  companyField('companyName', 'company_name', 'Company name'),
  companyField('companyWebsite', 'company_website', 'Company website'),
  companyField('companyIndustry', 'company_industry', 'Company industry'),
  companyField('companyHeadcount', 'company_headcount', 'Company headcount'),
  companyField('companyPronet', 'company_pronet', 'Company profile'),
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function customFieldPath(id: string): string {
  return `contact.customFields.${id}`;
}

/** Catalog entry of one custom field definition. */
export function customField(def: CustomFieldDef): ContactField {
  if (!UUID.test(def.id)) throw new Error(`custom field id ${def.id} is not a uuid`);
  const member = `c.custom_fields->'${def.id}'`;
  const text = `(c.custom_fields->>'${def.id}')`;
  const sql =
    def.type === 'string'
      ? text
      : def.type === 'number'
        ? `${text}::numeric`
        : def.type === 'date'
          ? `${text}::timestamptz`
          : def.type === 'boolean'
            ? `${text}::boolean`
            : `array(select jsonb_array_elements_text(case when jsonb_typeof(${member}) = 'array' then ${member} else '[]'::jsonb end))`;
  return {
    path: customFieldPath(def.id),
    type: def.type,
    sql,
    selectSql: member,
    output: ['customFields', def.id],
    label: def.label,
    readAccessPath: `customFields.${def.id}`,
    filteringSupported: true,
    write: { kind: 'custom', id: def.id, type: def.type, options: def.options ?? null },
    custom: true,
    options: def.options ?? null,
  };
}

export interface ContactCatalog extends FieldCatalog {
  fields: ContactField[];
  get(path: string): ContactField | undefined;
}

export function contactCatalog(customDefs: CustomFieldDef[]): ContactCatalog {
  const fields = [...BUILTIN_CONTACT_FIELDS, ...customDefs.map(customField)];
  return catalogOf(fields, 'c.id') as ContactCatalog;
}

/** One item of `GET /schema/contact`. */
export interface ContactSchemaItem {
  writeAccessPath: string;
  readAccessPath: string;
  type: FieldType;
  label: string;
  filteringSupported: boolean;
  /** True for fields that can be written (PATCH, ingest, field mapping targets). */
  writable: boolean;
  custom: boolean;
  /** Pick-list values; also served by `GET /schema/contact/options?field=`. */
  options?: { label: string; value: unknown }[];
}

export function schemaItem(f: ContactField): ContactSchemaItem {
  return {
    writeAccessPath: f.path,
    readAccessPath: f.readAccessPath,
    type: f.type,
    label: f.label,
    filteringSupported: f.filteringSupported,
    writable: f.write !== null,
    custom: f.custom,
    ...(f.options ? { options: f.options } : {}),
  };
}

/** JOIN clauses for a set of join keys. */
export function joinSql(keys: Iterable<string>): string {
  return [...new Set(keys)].map((k) => CONTACT_JOINS[k]!).join(' ');
}
