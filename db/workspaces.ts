/** Workspaces and API keys: used by the admin CLI, `npm start`'s demo workspace and tests. */
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { newApiKey } from '../api/middleware/auth.js';
import type { KeyKind, Plan } from './platform.js';
import { grantCredits } from './credits.js';
import { withTransaction, type Pool } from './pool.js';

export interface NewWorkspace {
  workspaceId: string;
  apiKey: string;
  webhookSecret: string;
}

export async function createWorkspace(pool: Pool, opts: { name: string; plan?: Plan; credits?: number; id?: string }): Promise<NewWorkspace> {
  const workspaceId = opts.id ?? uuidv7();
  const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const key = newApiKey('workspace');
  await withTransaction(pool, async (c) => {
    await c.query(`insert into workspaces (id, name, plan, webhook_secret) values ($1, $2, $3, $4)`, [workspaceId, opts.name, opts.plan ?? 'free', webhookSecret]);
    await c.query(`insert into credit_accounts (workspace_id, balance) values ($1, 0)`, [workspaceId]);
    await c.query(`insert into api_keys (id, workspace_id, kind, key_hash, prefix) values ($1, $2, 'workspace', $3, $4)`, [uuidv7(), workspaceId, key.hash, key.prefix]);
  });
  if (opts.credits) await grantCredits(pool, workspaceId, opts.credits, 'initial grant');
  return { workspaceId, apiKey: key.key, webhookSecret };
}

export async function createApiKey(pool: Pool, workspaceId: string, kind: KeyKind): Promise<string> {
  const key = newApiKey(kind);
  const r = await pool.query(
    `insert into api_keys (id, workspace_id, kind, key_hash, prefix) select $1, id, $3, $4, $5 from workspaces where id = $2`,
    [uuidv7(), workspaceId, kind, key.hash, key.prefix],
  );
  if (r.rowCount !== 1) throw new Error(`workspace ${workspaceId} does not exist`);
  return key.key;
}

export async function setPlan(pool: Pool, workspaceId: string, plan: Plan): Promise<void> {
  const r = await pool.query(`update workspaces set plan = $2 where id = $1`, [workspaceId, plan]);
  if (r.rowCount !== 1) throw new Error(`workspace ${workspaceId} does not exist`);
}
