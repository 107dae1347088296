/** Every entity the ORM knows. Each endpoint group's entities live in their own file in db/. */
import { Company, Contact, ContactSource, CustomFieldDefinition } from './contacts.js';
import { Segment } from './segments.js';
import { Source } from './sources.js';
import { Integration, MediaObject, Post, PostSchedule } from './social.js';
import { ApiKey, CreditAccount, CreditTransaction, Job, Workspace } from './platform.js';

export const entities = [Workspace, ApiKey, CreditAccount, CreditTransaction, Job, Contact, Company, ContactSource, CustomFieldDefinition, Segment, Source, Integration, Post, PostSchedule, MediaObject];
