/**
 * Contacts of a workspace, their companies, where they came from (contact_sources) and the
 * workspace's custom field definitions. Tables: contacts, companies, contact_sources,
 * custom_field_definitions (Migration20261121010000_contacts).
 *
 * Identity keys (DESIGN §4): `pronetKey` is `normalizeProfileUrl(pronet)`; emails are stored
 * normalised (trimmed, lower case, GIN-indexed); companies are keyed by `companyKey` =
 * `d:<domain>` or `n:<lower(name)>`. A contact's companies are `companyIds` with one
 * `primaryCompanyId`.
 */
import { defineEntity, p } from '@mikro-orm/core';
import { workspaceOwned } from './tenancy.js';

export const CONTACT_STATUSES = ['active', 'deleted'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

import type { CustomFieldType } from '../domain/contactCatalog.js';
export { CUSTOM_FIELD_TYPES, type CustomFieldType } from '../domain/contactCatalog.js';

export const Contact = defineEntity({
  name: 'Contact',
  tableName: 'contacts',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid(),
    status: p.string().$type<ContactStatus>().default('active'),
    firstName: p.text().nullable(),
    lastName: p.text().nullable(),
    fullName: p.text().nullable(),
    /** Job title (`contact.jobTitle`, `title` in the Contact shape). */
    title: p.text().nullable(),
    /** Professional-network profile URL as given. */
    pronet: p.text().nullable(),
    /** `normalizeProfileUrl(pronet)`; unique per workspace. */
    pronetKey: p.text().nullable(),
    /** Normalised emails; the first is the work email. */
    emails: p.array().columnType('text[]').default([]),
    /** Primary (work) email, `contact.workEmail`. */
    workEmail: p.text().nullable(),
    customFields: p.json<Record<string, unknown>>().default({} as never),
    /** The primary company (`primaryCompanyId`, embedded as `company`). */
    primaryCompanyId: p.uuid().nullable(),
    /** Every company linked to the contact (`companies`). */
    companyIds: p.array().columnType('uuid[]').default([]),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});

export const Company = defineEntity({
  name: 'Company',
  tableName: 'companies',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid(),
    /** `d:<normalizeDomain(website)>` or `n:<lower(trim(name))>`; unique per workspace. */
    companyKey: p.text(),
    companyName: p.text().nullable(),
    companyWebsite: p.text().nullable(),
    companyDomain: p.text().nullable(),
    companyIndustry: p.text().nullable(),
    /** Range `<min>-<max>`. */
    companyHeadcount: p.text().nullable(),
    companyPronet: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** One row per (source, row key): which contact a row of a source became. */
export const ContactSource = defineEntity({
  name: 'ContactSource',
  tableName: 'contact_sources',
  properties: {
    sourceId: p.uuid().primary(),
    rowKey: p.text().primary(),
    contactId: p.uuid(),
    /** `_ORIGIN_` of the last ingest of this row (tracing). */
    origin: p.text().nullable(),
    firstSeen: p.datetime(),
    lastSeen: p.datetime(),
  },
});

export const CustomFieldDefinition = defineEntity({
  name: 'CustomFieldDefinition',
  tableName: 'custom_field_definitions',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid(),
    label: p.text(),
    type: p.string().$type<CustomFieldType>(),
    /** Allowed values ({label, value}) for pick lists; null when free. */
    options: p.json<{ label: string; value: unknown }[]>().nullable(),
    createdAt: p.datetime(),
  },
});
