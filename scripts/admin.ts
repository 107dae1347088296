/**
 * Admin CLI: `npm run admin -- <command> [options] [--json]`
 *
 *   workspace:create --name N [--plan free|pro|enterprise] [--credits K]  → {workspaceId, apiKey, webhookSecret}
 *   key:create --workspace ID --kind workspace|user|session               → {apiKey}
 *   credits:grant --workspace ID --amount K                               → {balance}
 *   workspace:plan --workspace ID --plan free|pro|enterprise              → {workspaceId, plan}
 *
 * With --json the command prints exactly one JSON object.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../domain/config.js';
import { createPool } from '../db/pool.js';
import { grantCredits } from '../db/credits.js';
import { createApiKey, createWorkspace, setPlan } from '../db/workspaces.js';
import { KEY_KINDS, PLANS, type KeyKind, type Plan } from '../db/platform.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: 'string' },
    plan: { type: 'string' },
    credits: { type: 'string' },
    workspace: { type: 'string' },
    kind: { type: 'string' },
    amount: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

function fail(message: string): never {
  if (values.json) console.log(JSON.stringify({ error: message }));
  else console.error(`error: ${message}`);
  process.exit(2);
}
function need(name: keyof typeof values): string {
  const v = values[name];
  if (typeof v !== 'string' || !v) fail(`--${name} is required`);
  return v;
}
function oneOf<T extends string>(name: keyof typeof values, allowed: readonly T[], fallback?: T): T {
  const v = (values[name] as string | undefined) ?? fallback;
  if (!v || !allowed.includes(v as T)) fail(`--${name} must be one of ${allowed.join(', ')}`);
  return v as T;
}
function int(name: keyof typeof values, fallback?: number): number {
  const raw = values[name] as string | undefined;
  if (raw === undefined && fallback !== undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) fail(`--${name} must be a non-negative integer`);
  return n;
}

const pool = createPool(loadConfig().databaseUrl, 2);
try {
  const command = positionals[0];
  let out: Record<string, unknown>;
  switch (command) {
    case 'workspace:create':
      out = { ...(await createWorkspace(pool, { name: need('name'), plan: oneOf<Plan>('plan', PLANS, 'free'), credits: int('credits', 0) })) };
      break;
    case 'key:create':
      out = { apiKey: await createApiKey(pool, need('workspace'), oneOf<KeyKind>('kind', KEY_KINDS)) };
      break;
    case 'credits:grant':
      out = { balance: await grantCredits(pool, need('workspace'), int('amount'), 'admin grant') };
      break;
    case 'workspace:plan': {
      const plan = oneOf<Plan>('plan', PLANS);
      await setPlan(pool, need('workspace'), plan);
      out = { workspaceId: values.workspace, plan };
      break;
    }
    default:
      fail(`unknown command ${command ?? '(none)'}; commands: workspace:create, key:create, credits:grant, workspace:plan`);
  }
  if (values.json) console.log(JSON.stringify(out));
  else for (const [k, v] of Object.entries(out)) console.log(`${k}: ${v}`);
} catch (e) {
  fail(e instanceof Error ? e.message : String(e));
} finally {
  await pool.end();
}
