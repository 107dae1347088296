/**
 * Admin CLI: `npm run admin -- <command> [options] [--json]`
 *
 *   workspace:create --name N [--plan free|pro|enterprise] [--credits K]  → {workspaceId, apiKey, webhookSecret}
 *   workspace:list                                                        → {workspaces: [{workspaceId, name, plan, creditBalance, activeKeys, createdAt}]}
 *   key:create --workspace ID --kind workspace|user|session [--ttl SECONDS] → {apiKey, apiKeyId, expiresAt}
 *   key:list [--workspace ID] [--all]                                     → {keys: [{apiKeyId, workspaceId, kind, prefix, createdAt, expiresAt, revokedAt, status}]}
 *   key:revoke --key API_KEY_ID                                           → {apiKeyId, workspaceId, revokedAt}
 *   credits:grant --workspace ID --amount K                               → {balance}
 *   workspace:plan --workspace ID --plan free|pro|enterprise              → {workspaceId, plan}
 *   secrets:reencrypt                                                     → {webhookSecrets, integrationCredentials, subscriptionSecrets,
 *                                                                            oauthAppSecrets, alreadyCurrent}
 *   dataset:opt-out [--file FILE] [--email E]… [--profile-url U]… [--person-id ID]…
 *                                                                         → {entriesAdded, peopleRemoved, postsRemoved, unknownPersonIds}
 *
 * Session keys expire after --ttl seconds (default SESSION_KEY_TTL_SECONDS, 24 h); key:list shows
 * active keys unless --all. key:revoke sets the key's `revoked_at`: the next request with it is a
 * 401. secrets:reencrypt moves every stored secret onto the current ENCRYPTION_KEY (after a
 * rotation: old key in ENCRYPTION_PREVIOUS_KEYS). dataset:opt-out puts people on the global dataset's
 * opt-out list (keyed hashes, docs/PRIVACY.md) and removes them from the dataset; FILE holds one
 * email, profile URL or dataset person id per line (`#` comments); a line that is none of these
 * is an error naming it, and nothing is applied. With --json the command prints exactly one JSON
 * object; an error is `{"error": …}` and exit code 2. `--help` prints the usage (exit 0); an
 * unknown command or option prints it on stderr (exit 2), before any connection is opened.
 */
import { parseArgs } from 'node:util';
import { loadConfig, refuseUnsafeProductionSecrets } from '../domain/config.js';
import { keyringOf } from '../domain/keyring.js';
import { openDatabase } from '../db/orm.js';
import { grantCredits } from '../db/credits.js';
import { reencryptSecrets, runOn } from '../db/secrets.js';
import { createWorkspace, issueApiKey, listApiKeys, listWorkspaces, revokeApiKey, setPlan } from '../db/workspaces.js';
import { KEY_KINDS, PLANS, type KeyKind, type Plan } from '../db/platform.js';
import { isUuid } from '../domain/ids.js';
import { readFileSync } from 'node:fs';
import { classifyOptOuts, parseOptOutFile } from '../domain/datasetOptOut.js';
import { applyDatasetOptOuts, datasetOptOutKey } from '../db/datasetOptOuts.js';
import { syncDiscoveryDocuments } from '../db/discoveryOpenSearch.js';

const USAGE = `usage: npm run admin -- <command> [options] [--json]

  workspace:create --name N [--plan free|pro|enterprise] [--credits K]
  workspace:list
  workspace:plan --workspace ID --plan free|pro|enterprise
  key:create --workspace ID --kind workspace|user|session [--ttl SECONDS]
  key:list [--workspace ID] [--all]
  key:revoke --key API_KEY_ID
  credits:grant --workspace ID --amount K
  secrets:reencrypt
  dataset:opt-out [--file FILE] [--email E]... [--profile-url URL]... [--person-id ID]...
  help, --help, -h          this text

With --json each command prints exactly one JSON object; errors exit with code 2.`;

const COMMANDS = ['workspace:create', 'workspace:list', 'workspace:plan', 'key:create', 'key:list', 'key:revoke', 'credits:grant', 'secrets:reencrypt', 'dataset:opt-out'];

/** A usage error: the message and the usage on stderr, exit code 2 (no stack trace). */
function usageError(message: string): never {
  process.stderr.write(`error: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      credits: { type: 'string' },
      workspace: { type: 'string' },
      kind: { type: 'string' },
      amount: { type: 'string' },
      key: { type: 'string' },
      ttl: { type: 'string' },
      file: { type: 'string' },
      email: { type: 'string', multiple: true },
      'profile-url': { type: 'string', multiple: true },
      'person-id': { type: 'string', multiple: true },
      all: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
} catch (e) {
  usageError(e instanceof Error ? e.message : String(e));
}
const { values, positionals } = parsed;
if (values.help || positionals[0] === 'help') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (!COMMANDS.includes(positionals[0] ?? '')) usageError(`unknown command ${positionals[0] ?? '(none)'}`);

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

function uuid(name: keyof typeof values): string {
  const v = need(name);
  if (!isUuid(v)) fail(`--${name} must be an id (UUID)`);
  return v;
}

/** Lists print one line per item (tab-separated) unless --json. */
function printList(items: Array<Record<string, unknown>>) {
  if (!items.length) console.log('(none)');
  for (const item of items) console.log(Object.values(item).map((v) => v ?? '-').join('\t'));
}

refuseUnsafeProductionSecrets();
const config = loadConfig();
const db = await openDatabase(config.databaseUrl, { max: 2 });
const pool = db.pool;
try {
  const command = positionals[0];
  let out: Record<string, unknown>;
  switch (command) {
    case 'workspace:create':
      out = { ...(await createWorkspace(db.orm.em, { name: need('name'), plan: oneOf<Plan>('plan', PLANS, 'free'), credits: int('credits', 0), keyring: keyringOf(config) })) };
      break;
    case 'workspace:list':
      out = { workspaces: await listWorkspaces(db.orm.em) };
      break;
    case 'key:create': {
      const workspaceId = uuid('workspace');
      const kind = oneOf<KeyKind>('kind', KEY_KINDS);
      if (values.ttl !== undefined && kind !== 'session') fail('--ttl applies to session keys only');
      const ttl = int('ttl', config.sessionKeyTtlSeconds);
      if (ttl < 1) fail('--ttl must be at least 1 second');
      out = { ...(await issueApiKey(db.orm.em, workspaceId, kind, { sessionTtlSeconds: ttl })) };
      break;
    }
    case 'key:list':
      out = { keys: await listApiKeys(db.orm.em, { workspaceId: values.workspace === undefined ? undefined : uuid('workspace'), includeInactive: values.all }) };
      break;
    case 'key:revoke':
      out = { ...(await revokeApiKey(db.orm.em, uuid('key'))) };
      break;
    case 'secrets:reencrypt':
      out = { ...(await reencryptSecrets(runOn(pool), keyringOf(config))) };
      break;
    case 'credits:grant':
      out = { balance: await grantCredits(db.orm.em, need('workspace'), int('amount'), 'admin grant') };
      break;
    case 'dataset:opt-out': {
      const fromFile = values.file ? parseOptOutFile(readFileSync(values.file, 'utf8')) : null;
      const named = [...(values.email ?? []), ...(values['profile-url'] ?? []), ...(values['person-id'] ?? [])].map((value, i) => ({ value, line: i + 1 }));
      const fromArgs = classifyOptOuts(named);
      const errors = [...(fromFile?.errors.map((e) => `${values.file}:${e.line}: ${e.message}`) ?? []), ...fromArgs.errors.map((e) => `argument ${JSON.stringify(named[e.line - 1]!.value)} ${e.message}`)];
      if (errors.length) fail(`nothing applied: ${errors.slice(0, 20).join('; ')}${errors.length > 20 ? ` (and ${errors.length - 20} more)` : ''}`);
      const list = {
        emails: [...(fromFile?.list.emails ?? []), ...fromArgs.list.emails],
        profileUrls: [...(fromFile?.list.profileUrls ?? []), ...fromArgs.list.profileUrls],
        personIds: [...(fromFile?.list.personIds ?? []), ...fromArgs.list.personIds],
      };
      if (!list.emails.length && !list.profileUrls.length && !list.personIds.length) fail('name at least one identifier: --file, --email, --profile-url or --person-id');
      // With the OpenSearch engine the removed people leave its indexes too (and their companies' nested people).
      const afterRemoval = config.discovery.engine === 'opensearch' ? (removed: { personIds: string[]; companyIds: string[] }) => syncDiscoveryDocuments(pool, config.discovery, removed) : undefined;
      out = { ...(await applyDatasetOptOuts(pool, datasetOptOutKey(config.serverSecret), list, { afterRemoval })) };
      break;
    }
    case 'workspace:plan': {
      const plan = oneOf<Plan>('plan', PLANS);
      await setPlan(db.orm.em, need('workspace'), plan);
      out = { workspaceId: values.workspace, plan };
      break;
    }
    default:
      usageError(`unknown command ${command}`);
  }
  if (values.json) console.log(JSON.stringify(out));
  else if (Array.isArray(out.workspaces ?? out.keys)) printList((out.workspaces ?? out.keys) as Array<Record<string, unknown>>);
  else for (const [k, v] of Object.entries(out)) console.log(`${k}: ${v}`);
} catch (e) {
  fail(e instanceof Error ? e.message : String(e));
} finally {
  await db.close();
}
