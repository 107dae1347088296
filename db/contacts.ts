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
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { SCOPED_WORKSPACE_ID, workspaceOwned } from './tenancy.js';
import { workspaceId } from './platform.js';

export const CONTACT_STATUSES = ['active', 'deleted'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

import type { CustomFieldType } from '../domain/contactCatalog.js';
export { CUSTOM_FIELD_TYPES, type CustomFieldType } from '../domain/contactCatalog.js';

/** The table is created `with (fillfactor = 90)` (room for HOT updates); the ORM does not model storage parameters. */
export const Contact = defineEntity({
  name: 'Contact',
  tableName: 'contacts',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    // No FK (Migration20261121080000_ingest_no_fk): the bulk path would pay a probe per row.
    workspaceId: p.uuid().defaultRaw(SCOPED_WORKSPACE_ID),
    status: p.text().$type<ContactStatus>().default('active'),
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
    customFields: p.json<Record<string, unknown>>().defaultRaw(`'{}'`),
    /** The primary company (`primaryCompanyId`, embedded as `company`). No FK: see the migration. */
    primaryCompanyId: p.uuid().nullable(),
    /** Every company linked to the contact (`companies`). */
    companyIds: p.array().columnType('uuid[]').default([]),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
    deletedAt: p.datetime().nullable(),
  },
  checks: [{ name: 'contacts_status_check', expression: `status in ('active','deleted')` }],
  indexes: [
    // Keyset pagination and workspace scans of active contacts.
    { name: 'contacts_ws_active_id', properties: ['workspaceId', 'id'], where: `status = 'active'` },
    // The retention purge of soft-deleted contacts (db/retention.ts).
    { name: 'contacts_deleted_at', properties: ['deletedAt'], where: `status = 'deleted'` },
    { name: 'contacts_emails_gin', expression: 'create index contacts_emails_gin on contacts using gin (emails) with (fastupdate = off)' },
    { name: 'contacts_full_name_trgm', expression: 'create index contacts_full_name_trgm on contacts using gin (full_name gin_trgm_ops)' },
    { name: 'contacts_title_trgm', expression: 'create index contacts_title_trgm on contacts using gin (title gin_trgm_ops)' },
  ],
  uniques: [{ name: 'contacts_ws_pronet_key', expression: 'create unique index contacts_ws_pronet_key on contacts(workspace_id, pronet_key) where pronet_key is not null' }],
});

export const Company = defineEntity({
  name: 'Company',
  tableName: 'companies',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('companies'),
    /** `d:<normalizeDomain(website)>` or `n:<lower(trim(name))>`; unique per workspace. */
    companyKey: p.text(),
    companyName: p.text().nullable(),
    companyWebsite: p.text().nullable(),
    companyDomain: p.text().nullable(),
    companyIndustry: p.text().nullable(),
    /** Range `<min>-<max>`. */
    companyHeadcount: p.text().nullable(),
    companyPronet: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  uniques: [{ name: 'companies_workspace_id_company_key_key', properties: ['workspaceId', 'companyKey'] }],
  indexes: [
    { name: 'companies_ws_lower_name', expression: 'create index companies_ws_lower_name on companies(workspace_id, lower(company_name))' },
    { name: 'companies_name_trgm', expression: 'create index companies_name_trgm on companies using gin (company_name gin_trgm_ops)' },
  ],
});

/** One row per (source, row key): which contact a row of a source became. Owned through its source. */
export const ContactSource = defineEntity({
  name: 'ContactSource',
  tableName: 'contact_sources',
  properties: {
    // No FK (Migration20261121080000_ingest_no_fk): the bulk path would pay a probe per row.
    sourceId: p.uuid().primary(),
    rowKey: p.text().primary(),
    contactId: p.uuid(),
    /** `_ORIGIN_` of the last ingest of this row (tracing). */
    origin: p.text().nullable(),
    firstSeen: p.datetime().defaultRaw('now()'),
    lastSeen: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'contact_sources_contact', properties: ['contactId', 'sourceId'] }],
});

export const CustomFieldDefinition = defineEntity({
  name: 'CustomFieldDefinition',
  tableName: 'custom_field_definitions',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('custom_field_definitions'),
    label: p.text(),
    type: p.text().$type<CustomFieldType>(),
    /** Allowed values ({label, value}) for pick lists; null when free. */
    options: p.json<{ label: string; value: unknown }[]>().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  checks: [{ name: 'custom_field_definitions_type_check', expression: `type in ('string','number','date','boolean','multi')` }],
  uniques: [{ name: 'custom_field_definitions_ws_label', expression: 'create unique index custom_field_definitions_ws_label on custom_field_definitions(workspace_id, lower(label))' }],
});

/**
 * The identity log of contact ingests (db/contactIngest.ts, Migration20261121081000_identity_log):
 * one row per committed batch with 8-byte hashes of the emails and row keys it wrote. An unlogged
 * table with external storage for the hash columns (the migration sets both; the ORM models
 * neither). No FK to workspaces: rows live for minutes.
 */
export const ContactIdentityLog = defineEntity({
  name: 'ContactIdentityLog',
  tableName: 'contact_identity_log',
  filters: workspaceOwned,
  properties: {
    seq: p.bigint('number').primary().autoincrement(),
    workspaceId: p.uuid().defaultRaw(SCOPED_WORKSPACE_ID),
    sourceId: p.uuid().nullable(),
    emailHashes: p.blob(),
    rowKeyHashes: p.blob(),
    loggedAt: p.datetime().defaultRaw('clock_timestamp()'),
  },
  indexes: [{ name: 'contact_identity_log_ws_seq', properties: ['workspaceId', 'seq'] }],
});

/**
 * Rows of a bulk upsert, staged (COPY) by the API and read in blocks by the workflow's activities.
 * `data` is stored uncompressed (`storage external`, set by Migration20261121071000_staging_blocks).
 */
export const ContactIngestStaging = defineEntity({
  name: 'ContactIngestStaging',
  tableName: 'contact_ingest_staging',
  properties: {
    batchId: p.uuid().primary(),
    seq: p.integer().primary(),
    /** A block of rows as JSON text (Migration20261121070000_staging_text). */
    data: p.text(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
});

/**
 * Kysely over the tables of the contact ingest pipeline, typed from the entities: its statements
 * run on the pipeline's pg clients (`runQuery(client, typedQueries<ContactIngestDB>()…)`), in its transactions.
 */
export type ContactIngestDB = InferKyselyDB<typeof Contact | typeof Company | typeof ContactSource | typeof ContactIdentityLog | typeof ContactIngestStaging>;
