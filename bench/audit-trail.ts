/**
 * What the audit trail adds to a write, measured against its anchor in the same run: the two
 * statements `api/audit.ts` sends per audited request (the event before the handler, the outcome
 * after) on the API's kind of pool (row-level security enforced, one workspace's scope), beside a
 * `select 1` round trip on the same pool. Sequential, one connection busy at a time, as a single
 * request sees it; median and p99 of each, per round, median of rounds.
 *
 *   npx tsx bench/audit-trail.ts [--requests 2000] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { v7 as uuidv7 } from 'uuid';
import { createWorkspace } from '../db/workspaces.js';
import { openDatabase } from '../db/orm.js';
import { inWorkspaceScope } from '../db/tenancy.js';
import { recordAuditEvent, recordAuditOutcome } from '../db/audit.js';
import { dropDatabase, freshDatabase, percentile, say } from './lib.js';

const { values: args } = parseArgs({ options: { requests: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } } });
const REQUESTS = Number(args.requests);
const ROUNDS = Number(args.rounds);
const DB = 'bench_audit_trail';

const url = await freshDatabase(DB);
const owner = await openDatabase(url, { max: 1 });
const { workspaceId } = await createWorkspace(owner.orm.em, { name: 'bench' });
await owner.close();
const api = await openDatabase(url, { max: 2, tenancy: 'enforced' });

async function timed(op: () => Promise<unknown>): Promise<{ median: number; p99: number }> {
  const ms: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    await op();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { median: percentile(ms, 50), p99: percentile(ms, 99) };
}

const anchor: number[] = [];
const audit: number[] = [];
const auditP99: number[] = [];
await inWorkspaceScope(workspaceId, async () => {
  for (let round = 1; round <= ROUNDS; round++) {
    const a = await timed(() => api.pool.query('select 1'));
    const b = await timed(async () => {
      const id = uuidv7();
      await recordAuditEvent(api.pool, { id, workspaceId, actorKeyId: uuidv7(), actorKind: 'workspace', action: 'contact.update', resourceType: 'contact', resourceId: uuidv7(), requestId: uuidv7() });
      await recordAuditOutcome(api.pool, { eventId: id, workspaceId, status: 200, resourceId: null });
    });
    anchor.push(a.median);
    audit.push(b.median);
    auditP99.push(b.p99);
    say(`round ${round}: select 1 median ${a.median.toFixed(3)} ms; audit event + outcome median ${b.median.toFixed(3)} ms, p99 ${b.p99.toFixed(3)} ms`);
  }
});
const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
say(`median of ${ROUNDS} rounds, ${REQUESTS} requests each: audit per write ${med(audit).toFixed(3)} ms (p99 ${med(auditP99).toFixed(3)} ms) = ${(med(audit) / med(anchor)).toFixed(1)}× the select 1 anchor (${med(anchor).toFixed(3)} ms)`);
await api.close();
await dropDatabase(DB);
