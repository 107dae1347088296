/**
 * The admin CLI run as operators run it (a child process on the test's own database):
 * workspace:list, key:create / key:list / key:revoke, session key expiry, and secrets:reencrypt
 * after a key rotation; plus the migration that encrypts webhook secrets stored in clear.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { startTestApp, type TestApp } from '../harness.js';
import { ROOT_DIR, loadConfig } from '../../domain/config.js';
import { createKeyring, keyringOf } from '../../domain/keyring.js';
import { decryptCredentials } from '../../domain/credentials.js';
import { oauthAppContext, openSubscriptionSecret, readWebhookSecret } from '../../db/secrets.js';
import { openOrm } from '../../db/orm.js';

const OLD_KEY = 'admin-test-old-key-0123456789abcdef';
const NEW_KEY = 'cd'.repeat(32);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none', env: { ENCRYPTION_KEY: OLD_KEY } });
});
afterAll(() => app?.close());

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** `npm run admin -- …` as a child process against this test's database. */
function admin(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT_DIR, 'scripts', 'admin.ts'), ...args], {
    env: { ...process.env, DATABASE_URL: app.config.databaseUrl, ENCRYPTION_KEY: OLD_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    }),
  );
}

const balance = (apiKey: string) => app.http('GET', '/credits/balance', { apiKey });

describe('admin CLI', () => {
  it('workspace:list --json lists every workspace with plan, balance and active keys; without --json one line each', async () => {
    const a = await admin(['workspace:create', '--name', 'Listed A', '--plan', 'pro', '--credits', '250', '--json']);
    expect(a.code, a.stderr).toBe(0);
    const b = await app.createWorkspace({ name: 'Listed B' });
    const list = await admin(['workspace:list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(Object.keys(list.json)).toEqual(['workspaces']);
    const byId = new Map(list.json.workspaces.map((w: any) => [w.workspaceId, w]));
    expect(byId.get(a.json.workspaceId)).toEqual({ workspaceId: a.json.workspaceId, name: 'Listed A', plan: 'pro', creditBalance: 250, activeKeys: 1, createdAt: expect.stringMatching(/Z$/) });
    expect(byId.get(b.workspaceId)).toMatchObject({ name: 'Listed B', plan: 'free', creditBalance: 0, activeKeys: 1 });
    const count = Number((await app.pool.query(`select count(*) from workspaces`)).rows[0].count);
    expect(list.json.workspaces).toHaveLength(count);
    const text = await admin(['workspace:list']);
    expect(text.stdout.trim().split('\n')).toHaveLength(count);
    expect(text.stdout).toContain(`${a.json.workspaceId}\tListed A\tpro\t250\t1\t`);
  });

  it('key:create makes keys that work; session keys expire after 24 h by default', async () => {
    const ws = await app.createWorkspace({ credits: 5 });
    const user = await admin(['key:create', '--workspace', ws.workspaceId, '--kind', 'user', '--json']);
    expect(user.code, user.stderr).toBe(0);
    expect(user.json).toEqual({ apiKeyId: expect.any(String), apiKey: expect.stringMatching(/^cdk_us_/), expiresAt: null });
    expect((await balance(user.json.apiKey)).status).toBe(200);

    const before = Date.now();
    const session = await admin(['key:create', '--workspace', ws.workspaceId, '--kind', 'session', '--json']);
    expect(session.code, session.stderr).toBe(0);
    const ttlMs = Date.parse(session.json.expiresAt) - before;
    expect(ttlMs).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(ttlMs).toBeLessThan(24 * 3600_000 + 60_000);
    expect((await balance(session.json.apiKey)).status).toBe(200);

    const custom = await admin(['key:create', '--workspace', ws.workspaceId, '--kind', 'session', '--json'], { SESSION_KEY_TTL_SECONDS: '600' });
    expect(Math.abs(Date.parse(custom.json.expiresAt) - Date.now() - 600_000)).toBeLessThan(60_000);

    const bad = await admin(['key:create', '--workspace', ws.workspaceId, '--kind', 'user', '--ttl', '60', '--json']);
    expect(bad.code).toBe(2);
    expect(bad.json).toEqual({ error: '--ttl applies to session keys only' });
  });

  it('an expired session key is a 401', async () => {
    const ws = await app.createWorkspace();
    const session = await admin(['key:create', '--workspace', ws.workspaceId, '--kind', 'session', '--ttl', '1', '--json']);
    expect(session.code, session.stderr).toBe(0);
    // Wait on the database clock, the one authentication compares with.
    await app.pool.query(`select pg_sleep(greatest(0, extract(epoch from ($1::timestamptz - now())) + 0.2))`, [session.json.expiresAt]);
    const res = await balance(session.json.apiKey);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'unauthorized', message: 'API key has expired' });
    const list = await admin(['key:list', '--workspace', ws.workspaceId, '--all', '--json']);
    expect(list.json.keys.find((k: any) => k.apiKeyId === session.json.apiKeyId)).toMatchObject({ kind: 'session', status: 'expired', revokedAt: null });
  });

  it('key:list shows active keys (all with --all); key:revoke makes the next request a 401 and keeps the first revocation time', async () => {
    const ws = await app.createWorkspace();
    const other = await app.createWorkspace();
    const user = await admin(['key:create', '--workspace', ws.workspaceId, '--kind', 'user', '--json']);
    const listed = await admin(['key:list', '--workspace', ws.workspaceId, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json.keys.map((k: any) => k.kind)).toEqual(['workspace', 'user']);
    expect(listed.json.keys[1]).toEqual({
      apiKeyId: user.json.apiKeyId, workspaceId: ws.workspaceId, kind: 'user', prefix: user.json.apiKey.slice(0, 12),
      createdAt: expect.stringMatching(/Z$/), expiresAt: null, revokedAt: null, status: 'active',
    });
    expect(listed.json.keys.every((k: any) => k.workspaceId === ws.workspaceId)).toBe(true);
    const everyone = await admin(['key:list', '--json']);
    expect(everyone.json.keys.some((k: any) => k.workspaceId === other.workspaceId)).toBe(true);

    expect((await balance(user.json.apiKey)).status).toBe(200);
    const revoked = await admin(['key:revoke', '--key', user.json.apiKeyId, '--json']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.json).toEqual({ apiKeyId: user.json.apiKeyId, workspaceId: ws.workspaceId, revokedAt: expect.stringMatching(/Z$/) });
    const res = await balance(user.json.apiKey);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
    // The workspace's other key is untouched.
    expect((await balance(ws.apiKey)).status).toBe(200);

    const active = await admin(['key:list', '--workspace', ws.workspaceId, '--json']);
    expect(active.json.keys.map((k: any) => k.kind)).toEqual(['workspace']);
    const all = await admin(['key:list', '--workspace', ws.workspaceId, '--all', '--json']);
    expect(all.json.keys.find((k: any) => k.apiKeyId === user.json.apiKeyId)).toMatchObject({ status: 'revoked', revokedAt: revoked.json.revokedAt });
    const again = await admin(['key:revoke', '--key', user.json.apiKeyId, '--json']);
    expect(again.json.revokedAt).toBe(revoked.json.revokedAt);

    const missing = await admin(['key:revoke', '--key', uuidv7(), '--json']);
    expect(missing.code).toBe(2);
    expect(missing.json.error).toMatch(/does not exist/);
    const malformed = await admin(['key:revoke', '--key', 'cdk_ws_abc', '--json']);
    expect(malformed.code).toBe(2);
    expect(malformed.json).toEqual({ error: '--key must be an id (UUID)' });
    const none = await admin(['key:revoke']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--key is required');
  });

  it('webhook secrets are stored encrypted; secrets:reencrypt moves every secret onto a rotated key', async () => {
    const ws = await app.createWorkspace();
    const stored = (await app.pool.query(`select webhook_secret from workspaces where id = $1`, [ws.workspaceId])).rows[0].webhook_secret as string;
    expect(stored).not.toContain(ws.webhookSecret.slice(6));
    const oldRing = createKeyring(OLD_KEY);
    expect(stored.startsWith(`v2.${oldRing.currentKeyId}.`)).toBe(true);
    expect(await readWebhookSecret(app.pool, oldRing, ws.workspaceId)).toBe(ws.webhookSecret);
    // A secret left in clear by an older process, and credentials of an integration.
    const legacyId = uuidv7();
    const legacySecret = `whsec_${randomBytes(24).toString('base64')}`;
    await app.pool.query(`insert into workspaces (id, name, plan, webhook_secret) values ($1, 'legacy', 'free', $2)`, [legacyId, legacySecret]);
    const integration = await app.http('POST', '/integrations', { apiKey: ws.apiKey, body: { provider: 'microblog', name: 'x', externalAccountId: '1', credentials: { accessToken: 'tok-rotate' } } });
    expect(integration.status).toBe(200);
    // A webhook subscription whose secret was rotated (current and previous stored) and the workspace's own OAuth app.
    const sub = await app.http('POST', '/webhook-subscriptions', { apiKey: ws.apiKey, body: { url: 'http://127.0.0.1:9/in', eventTypes: ['post.published'] } });
    expect(sub.status, JSON.stringify(sub.body)).toBe(200);
    const rotated = await app.http('POST', `/webhook-subscriptions/${sub.body.data.id}/rotate-secret`, { apiKey: ws.apiKey });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const ownApp = await app.http('PUT', '/integrations/oauth/apps/microblog', { apiKey: ws.apiKey, body: { clientId: 'own-app', clientSecret: 'own-app-secret' } });
    expect(ownApp.status, JSON.stringify(ownApp.body)).toBe(200);
    const count = async (sql: string) => Number((await app.pool.query(sql)).rows[0].count);
    const subscriptionSecrets = await count(`select count(secret_encrypted) + count(previous_secret_encrypted) as count from webhook_subscriptions`);
    const oauthApps = await count(`select count(*) from oauth_apps`);
    expect(subscriptionSecrets).toBeGreaterThanOrEqual(2);

    const rotatedEnv = { ENCRYPTION_KEY: NEW_KEY, ENCRYPTION_PREVIOUS_KEYS: OLD_KEY };
    const first = await admin(['secrets:reencrypt', '--json'], rotatedEnv);
    expect(first.code, first.stderr).toBe(0);
    const total = Number((await app.pool.query(`select count(*) from workspaces`)).rows[0].count);
    const integrations = Number((await app.pool.query(`select count(*) from integrations where credentials_encrypted is not null`)).rows[0].count);
    expect(first.json).toEqual({ webhookSecrets: total, integrationCredentials: integrations, subscriptionSecrets, oauthAppSecrets: oauthApps, alreadyCurrent: 0 });

    // Only the new key is needed from now on.
    const newRing = createKeyring(NEW_KEY);
    expect(await readWebhookSecret(app.pool, newRing, ws.workspaceId)).toBe(ws.webhookSecret);
    expect(await readWebhookSecret(app.pool, newRing, legacyId)).toBe(legacySecret);
    const creds = (await app.pool.query(`select credentials_encrypted from integrations where id = $1`, [integration.body.data.id])).rows[0].credentials_encrypted;
    expect(creds.split('.')[1]).toBe(newRing.currentKeyId);
    expect(decryptCredentials(creds, newRing, integration.body.data.id)).toEqual({ accessToken: 'tok-rotate' });
    const subRow = (await app.pool.query(`select secret_encrypted, previous_secret_encrypted from webhook_subscriptions where id = $1`, [sub.body.data.id])).rows[0];
    expect(openSubscriptionSecret(newRing, sub.body.data.id, subRow.secret_encrypted)).toBe(rotated.body.data.secret);
    expect(openSubscriptionSecret(newRing, sub.body.data.id, subRow.previous_secret_encrypted)).toBe(sub.body.data.secret);
    const appRow = (await app.pool.query(`select client_secret_encrypted from oauth_apps where workspace_id = $1`, [ws.workspaceId])).rows[0];
    expect(newRing.decryptText(appRow.client_secret_encrypted, oauthAppContext(ws.workspaceId, 'microblog'))).toBe('own-app-secret');

    const second = await admin(['secrets:reencrypt', '--json'], rotatedEnv);
    expect(second.json).toEqual({ webhookSecrets: 0, integrationCredentials: 0, subscriptionSecrets: 0, oauthAppSecrets: 0, alreadyCurrent: total + integrations + subscriptionSecrets + oauthApps });
    // A key the ring does not hold: refused, naming the setting, nothing rewritten.
    const unknown = await admin(['secrets:reencrypt', '--json'], { ENCRYPTION_KEY: 'ef'.repeat(32) });
    expect(unknown.code).toBe(2);
    expect(unknown.json.error).toContain('ENCRYPTION_PREVIOUS_KEYS');
    expect(await readWebhookSecret(app.pool, newRing, ws.workspaceId)).toBe(ws.webhookSecret);
  });

  it('--help prints the usage and exits 0 without a database; an unknown command or option exits 2 with the usage, no stack trace', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const help = await admin(args, { DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none' });
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toContain('usage: npm run admin -- <command>');
      expect(help.stdout).toContain('workspace:create --name N');
      expect(help.stderr).toBe('');
    }
    for (const args of [['nonsense'], [], ['--bogus'], ['workspace:list', '--frobnicate']]) {
      const res = await admin(args, { DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none' });
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(2);
      expect(res.stderr).toContain('usage: npm run admin -- <command>');
      expect(res.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('refuses a development secret with NODE_ENV=production, naming it', async () => {
    const res = await admin(['workspace:list', '--json'], { NODE_ENV: 'production', SERVER_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: 'dev-encryption-key-change-me' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('ENCRYPTION_KEY is a known development value');
    expect(res.stdout).toBe('');
  });
});

describe('webhook secret migration', () => {
  it('encrypts the secrets stored in clear before it, with the migrating process key', async () => {
    const db = `t_mig_${randomBytes(4).toString('hex')}`;
    const adminUrl = new URL(app.config.databaseUrl);
    adminUrl.pathname = '/postgres';
    const dbUrl = new URL(app.config.databaseUrl);
    dbUrl.pathname = `/${db}`;
    const server = new pg.Client({ connectionString: adminUrl.toString() });
    await server.connect();
    await server.query(`create database ${db}`);
    try {
      const orm = await openOrm(dbUrl.toString());
      try {
        await orm.migrator.up({ to: 'Migration20261124130000_api_key_expiry' });
        const id = uuidv7();
        const secret = `whsec_${randomBytes(24).toString('base64')}`;
        await orm.em.getConnection().execute(`insert into workspaces (id, name, plan, webhook_secret) values (?, 'before', 'free', ?)`, [id, secret]);
        await orm.migrator.up();
        const [row] = await orm.em.getConnection().execute(`select webhook_secret from workspaces where id = ?`, [id]);
        expect(row.webhook_secret).not.toBe(secret);
        // The key of the process that migrated (this one).
        const ring = keyringOf(loadConfig());
        expect(row.webhook_secret.startsWith(`v2.${ring.currentKeyId}.`)).toBe(true);
        const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: 1 });
        expect(await readWebhookSecret(pool, ring, id)).toBe(secret);
        await pool.end();
      } finally {
        await orm.close(true);
      }
    } finally {
      // Without force: the ORM's connections finish closing first (a forced drop would kill them mid-close).
      for (let i = 0; ; i++) {
        try {
          await server.query(`drop database if exists ${db}`);
          break;
        } catch (e) {
          if (i > 50) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await server.end();
    }
  });
});
