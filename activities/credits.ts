/** What workflows read of credits. Debits happen in `db/credits.ts`, inside the activities that charge. */
import { getBalance } from '../db/credits.js';
import type { ActivityDeps } from './deps.js';

export function createCreditActivities(deps: ActivityDeps) {
  return {
    async creditBalance(workspaceId: string): Promise<number> {
      return getBalance(deps.orm.em, workspaceId);
    },
  };
}
