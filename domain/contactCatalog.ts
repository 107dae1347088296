/**
 * The contact field catalog of a workspace: built-in `contact.*` / `company.*` paths plus the
 * workspace's custom fields (`contact.customFields.<id>`). One list serves `GET /schema/contact`,
 * the condition compiler (filters, fields, sort, unique values), the field mapping of sources
 * and the write path of ingestion.
 *
 * The column each field reads is db/contactColumns.ts.
 */
import type { WritableCompanyKey, WritableContactKey } from './contactShape.js';
import { catalogOf, type CatalogField, type FieldCatalog, type FieldType } from './conditions.js';
import { InvalidRequestError } from './errors.js';

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
  | { kind: 'contact'; key: WritableContactKey }
  | { kind: 'company'; key: WritableCompanyKey }
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

const builtin = (
  path: string,
  type: FieldType,
  output: string[],
  label: string,
  write: WriteTarget | null,
  extra: Partial<ContactField> = {},
): ContactField => ({
  path,
  type,
  output,
  label,
  readAccessPath: output.join('.'),
  filteringSupported: true,
  write,
  custom: false,
  ...extra,
});

const companyField = (name: WritableCompanyKey, label: string) =>
  builtin(`company.${name}`, 'string', ['company', name], label, { kind: 'company', key: name });

export const BUILTIN_CONTACT_FIELDS: ContactField[] = [
  builtin('contact.firstName', 'string', ['firstName'], 'First name', { kind: 'contact', key: 'firstName' }),
  builtin('contact.lastName', 'string', ['lastName'], 'Last name', { kind: 'contact', key: 'lastName' }),
  builtin('contact.fullName', 'string', ['fullName'], 'Full name', { kind: 'contact', key: 'fullName' }),
  builtin('contact.jobTitle', 'string', ['title'], 'Job title', { kind: 'contact', key: 'title' }),
  builtin('contact.workEmail', 'string', ['workEmail'], 'Work email', { kind: 'contact', key: 'workEmail' }),
  builtin('contact.emails', 'multi', ['emails'], 'Emails', { kind: 'contact', key: 'emails' }),
  builtin('contact.pronet', 'string', ['pronet'], 'Professional network profile', { kind: 'contact', key: 'pronet' }),
  builtin('contact.sources', 'multi', ['sources'], 'Sources', null),
  builtin('contact.createdAt', 'date', ['createdAt'], 'Created at', null),
  builtin('contact.updatedAt', 'date', ['updatedAt'], 'Updated at', null),
  builtin('company.id', 'string', ['company', 'id'], 'Company id', null, { filteringSupported: false }),
  companyField('companyName', 'Company name'),
  companyField('companyWebsite', 'Company website'),
  companyField('companyIndustry', 'Company industry'),
  companyField('companyHeadcount', 'Company headcount'),
  companyField('companyPronet', 'Company profile'),
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function customFieldPath(id: string): string {
  return `contact.customFields.${id}`;
}

/** Catalog entry of one custom field definition. */
export function customField(def: CustomFieldDef): ContactField {
  if (!UUID.test(def.id)) throw new Error(`custom field id ${def.id} is not a uuid`);
  return {
    path: customFieldPath(def.id),
    type: def.type,
    output: ['customFields', def.id],
    label: def.label,
    readAccessPath: `customFields.${def.id}`,
    filteringSupported: true,
    write: { kind: 'custom', id: def.id, type: def.type, options: def.options ?? null },
    custom: true,
    options: def.options ?? null,
  };
}

export interface ContactCatalog extends FieldCatalog<ContactField> {
  fields: ContactField[];
}

/** A custom field path (`contact.customFields.<uuid>`), whether or not the workspace has the field. */
export const CUSTOM_FIELD_PATH_PATTERN = '^contact\\.customFields\\.[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const CUSTOM_FIELD_PATH = new RegExp(CUSTOM_FIELD_PATH_PATTERN);

/**
 * The workspace's catalog. A well-formed custom field path the workspace does not have names a
 * field it could have: a 404 `not_found` naming it (like any other reference to something the
 * workspace does not have), not a 400.
 */
export function contactCatalog(customDefs: CustomFieldDef[]): ContactCatalog {
  const fields = [...BUILTIN_CONTACT_FIELDS, ...customDefs.map(customField)];
  return {
    ...catalogOf(fields),
    unknown: (path, pointer) =>
      CUSTOM_FIELD_PATH.test(path)
        ? new InvalidRequestError('not_found', `${pointer}: ${path} is not a custom field of this workspace`, [{ path: pointer, message: `${path} is not a custom field of this workspace (GET /schema/contact lists them)` }])
        : undefined,
  };
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
