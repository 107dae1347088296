/** What workflows read of credits. Debits happen in `db/credits.ts`, inside the activities that charge. */
import { getBalance } from '../db/credits.js';
import type { ActivityDeps } from './deps.js';
import { inWorkspaceScope } from '../db/tenancy.js';

export function createCreditActivities(deps: ActivityDeps) {
  return {
    async creditBalance(workspaceId: string): Promise<number> {
      // The input is the id itself (not `{ workspaceId }`), which the interceptor does not read.
      return inWorkspaceScope(workspaceId, () => getBalance(deps.orm.em, workspaceId));
    },
  };
}
