/**
 * API keys: `x-api-key: <key>` or `Authorization: Bearer <key>`. Keys are random, shown once and
 * stored only as a SHA-256 hash. Workspace and user keys are billed; session keys (in-app
 * previews) are not.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { unauthorized } from '../../domain/errors.js';
import type { KeyKind, Plan } from '../../db/platform.js';
import type { Queryable } from '../../db/pool.js';

export interface AuthContext {
  workspaceId: string;
  apiKeyId: string;
  keyKind: KeyKind;
  /** False for session keys: nothing they do is charged. */
  billable: boolean;
  plan: Plan;
}

const PREFIX: Record<KeyKind, string> = { workspace: 'cdk_ws', user: 'cdk_us', session: 'cdk_ss' };

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function newApiKey(kind: KeyKind): { key: string; hash: string; prefix: string } {
  const key = `${PREFIX[kind]}_${randomBytes(24).toString('base64url')}`;
  return { key, hash: hashKey(key), prefix: key.slice(0, 12) };
}

export function readKey(ctx: Context): string | undefined {
  const header = ctx.get('x-api-key');
  if (header) return header.trim();
  const authz = ctx.get('authorization');
  const m = /^Bearer\s+(.+)$/i.exec(authz);
  return m?.[1]?.trim();
}

export async function authenticate(db: Queryable, key: string | undefined): Promise<AuthContext> {
  if (!key) throw unauthorized('Missing API key: send it in the x-api-key header');
  const r = await db.query<{ id: string; workspace_id: string; kind: KeyKind; plan: Plan }>(
    `select k.id, k.workspace_id, k.kind, w.plan
       from api_keys k join workspaces w on w.id = k.workspace_id
      where k.key_hash = $1 and k.revoked_at is null`,
    [hashKey(key)],
  );
  const row = r.rows[0];
  if (!row) throw unauthorized('Invalid API key');
  return { workspaceId: row.workspace_id, apiKeyId: row.id, keyKind: row.kind, billable: row.kind !== 'session', plan: row.plan };
}
