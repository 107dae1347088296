/** Every entity the ORM knows. Each endpoint group's entities live in their own file in db/. */
import { ApiKey, CreditAccount, CreditTransaction, Job, Workspace } from './platform.js';

export const entities = [Workspace, ApiKey, CreditAccount, CreditTransaction, Job];
