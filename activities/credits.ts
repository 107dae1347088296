/** Credit debits from workflows: the same `debitCredits` the API uses, keyed so retries never charge twice. */
import { ApplicationFailure } from '@temporalio/activity';
import { debitCredits, getBalance, type DebitInput, type DebitResult } from '../db/credits.js';
import { InsufficientCreditsError } from '../domain/errors.js';
import type { ActivityDeps } from './deps.js';

export function createCreditActivities(deps: ActivityDeps) {
  return {
    async debit(input: DebitInput): Promise<DebitResult> {
      try {
        return await debitCredits(deps.pool, input);
      } catch (e) {
        if (e instanceof InsufficientCreditsError) throw ApplicationFailure.nonRetryable(e.message, 'insufficient_credits');
        throw e;
      }
    },
    async creditBalance(workspaceId: string): Promise<number> {
      return getBalance(deps.orm.em, workspaceId);
    },
  };
}
