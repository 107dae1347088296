/** Every entity the ORM knows. Each endpoint group's entities live in their own file in db/. */
import { Company, Contact, ContactIdentityLog, ContactIngestStaging, ContactSource, CustomFieldDefinition } from './contacts.js';
import { DsCompany, DsCompanyTechnology, DsPeopleTitle, DsPerson, DsPersonSkill, DsPost } from './dataset.js';
import { Segment } from './segments.js';
import { Source } from './sources.js';
import { Integration, MediaObject, Post, PostSchedule, PublishAttempt } from './social.js';
import { BulkEnrichmentJob, BulkEnrichmentRow, ContactEnrichment, WorkspaceEnrichmentSettings } from './bulkEnrichment.js';
import { OAuthAppRow, OAuthState } from './oauth.js';
import { ErasureRequest, SuppressionEntry } from './privacyEntities.js';
import { WebhookEventDelivery, WebhookSubscription, WorkspaceEvent } from './eventEntities.js';
import { AuditEvent, AuditOutcome } from './auditEntities.js';
import { AccessRequest, DatasetOptOut } from './subjectAccessEntities.js';
import { ApiKey, ApiReplica, CreditAccount, CreditTransaction, IdempotencyRecord, Job, WebhookDelivery, Workspace } from './platform.js';

export const entities = [
  Workspace,
  ApiKey,
  CreditAccount,
  CreditTransaction,
  Job,
  IdempotencyRecord,
  WebhookDelivery,
  Contact,
  Company,
  ContactSource,
  CustomFieldDefinition,
  ContactIdentityLog,
  ContactIngestStaging,
  Segment,
  Source,
  Integration,
  Post,
  PostSchedule,
  PublishAttempt,
  MediaObject,
  DsCompany,
  DsPerson,
  DsPeopleTitle,
  DsPersonSkill,
  DsCompanyTechnology,
  DsPost,
  BulkEnrichmentJob,
  BulkEnrichmentRow,
  ContactEnrichment,
  WorkspaceEnrichmentSettings,
  OAuthState,
  OAuthAppRow,
  ErasureRequest,
  SuppressionEntry,
  WebhookSubscription,
  WorkspaceEvent,
  WebhookEventDelivery,
  AuditEvent,
  AuditOutcome,
  DatasetOptOut,
  AccessRequest,
  ApiReplica,
];
