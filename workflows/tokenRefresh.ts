/**
 * Refresh ahead of expiry (issue 29, token lifecycle), started every 10 minutes by the Temporal
 * Schedule `oauth-token-refresh-<taskQueue>` (created by the worker at start, worker/schedules.ts):
 * OAuth access tokens ending within the refresh margin plus two sweep periods are refreshed now,
 * so a publish rarely refreshes its own (it still checks just in time, under the same row lock).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { TokenSweepCounts } from '../activities/oauthTokens.js';

const { refreshExpiringTokens } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  // The sweep heartbeats after every integration; a token request has a 15 s deadline.
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', maximumInterval: '2 minutes', maximumAttempts: 3 },
});

export async function tokenRefreshWorkflow(): Promise<TokenSweepCounts> {
  return refreshExpiringTokens();
}
