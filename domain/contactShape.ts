/**
 * The contact as every contact endpoint answers it (DESIGN §3-4, docs/CONTACTS.md "Contact
 * shape"): the JSON Schema the OpenAPI document publishes (api/schemas/contacts.ts) and the type
 * db/contactRead.ts builds, one definition for both.
 */
import { Type, type Static } from '@sinclair/typebox';

/** A string the contact may not know: always present, `null` when unknown (issue 12: null, never absent). */
const Nullable = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description: `${description}; null when unknown` } : { description: 'Null when unknown' });

export const CompanySummary = Type.Object(
  {
    id: Type.String(),
    companyName: Nullable(),
    companyWebsite: Nullable('Website URL'),
    companyIndustry: Nullable(),
    companyHeadcount: Nullable('Range `<min>-<max>`'),
    companyPronet: Nullable('Company profile URL'),
  },
  { description: 'The primary company of the contact' },
);

const NULL_VS_ABSENT_DOC =
  'Every property is present: an unknown value is `null` (lists `[]`), `company` is `null` when the contact has no company, and `customFields` lists every ' +
  "custom field of the workspace (`null` when unset). Single read, bulk fetch, filter, by-segment, upsert and patch answer the same contact identically.";

export const ContactSchema = Type.Object(
  {
    id: Type.String({ description: 'Stable contact id (not a source id)' }),
    firstName: Nullable(),
    lastName: Nullable(),
    fullName: Nullable(),
    title: Nullable('Job title (`contact.jobTitle`)'),
    pronet: Nullable('Professional-network profile URL'),
    emails: Type.Array(Type.String(), { description: 'Email addresses; `[]` when none' }),
    workEmail: Nullable('Primary email (`contact.workEmail`)'),
    sources: Type.Array(Type.String(), { description: 'Ids of the sources the contact came from, in the order it first came from them' }),
    companies: Type.Array(Type.String(), { description: 'Company ids' }),
    primaryCompanyId: Nullable('Id of `company`'),
    company: Type.Union([CompanySummary, Type.Null()], { description: 'Embedded company summary; null when the contact has no company' }),
    customFields: Type.Record(Type.String(), Type.Unknown(), { description: 'Every custom field id of the workspace → its value, `null` when unset' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { description: `A contact. ${NULL_VS_ABSENT_DOC}` },
);
export type ContactJson = Static<typeof ContactSchema>;
export type CompanyJson = Static<typeof CompanySummary>;

/**
 * The properties of the shape a source, an upsert or a PATCH writes (the others are ids, links,
 * custom fields and times the service keeps); their values' types are the shape's.
 */
export const WRITABLE_CONTACT_KEYS = ['firstName', 'lastName', 'fullName', 'title', 'pronet', 'workEmail', 'emails'] as const satisfies readonly (keyof ContactJson)[];
export type WritableContactKey = (typeof WRITABLE_CONTACT_KEYS)[number];
/** Every property of the company summary but its id. */
export type WritableCompanyKey = Exclude<keyof CompanyJson, 'id'>;
/** The written text properties (all but `emails`), as a source or upsert gives them. */
export type ContactTextKey = Exclude<WritableContactKey, 'emails'>;
