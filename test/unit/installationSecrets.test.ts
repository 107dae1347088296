/**
 * Outside production, every installation generates its own secrets on first start (SERVER_SECRET,
 * ENCRYPTION_KEY, the embedded PostgreSQL and MinIO passwords), keeps them in its data folder
 * readable by the owner only, reuses them later, and never runs with a value published in the
 * source.
 */
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_SECRETS, loadConfig } from '../../domain/config.js';

const fresh = () => mkdtempSync(join(tmpdir(), 'secrets-'));
const PUBLISHED = ['dev-server-secret-change-me', 'dev-encryption-key-change-me', 'app', 'minioadmin-secret', 'minioadmin'];

describe('installation secrets', () => {
  it('are generated on first start, kept 0600 in the data folder, reused, and none is a published value', () => {
    const dir = fresh();
    const a = loadConfig({ DATA_DIR: dir });
    const file = join(dir, 'secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const pgPassword = decodeURIComponent(new URL(a.databaseUrl).password);
    for (const v of [a.serverSecret, a.encryptionKey, pgPassword, a.s3.secretKey]) {
      expect(v).toMatch(/^[0-9a-f]{64}$/);
      expect(PUBLISHED).not.toContain(v);
    }
    expect(new Set([a.serverSecret, a.encryptionKey, pgPassword, a.s3.secretKey]).size).toBe(4);
    const b = loadConfig({ DATA_DIR: dir });
    expect([b.serverSecret, b.encryptionKey, b.databaseUrl, b.s3.secretKey]).toEqual([a.serverSecret, a.encryptionKey, a.databaseUrl, a.s3.secretKey]);
    // Another installation: other secrets.
    expect(loadConfig({ DATA_DIR: fresh() }).serverSecret).not.toBe(a.serverSecret);
    expect(JSON.parse(readFileSync(file, 'utf8')).serverSecret).toBe(a.serverSecret);
  });

  it('a secrets file others can read is made owner-only again', () => {
    const dir = fresh();
    loadConfig({ DATA_DIR: dir });
    chmodSync(join(dir, 'secrets.json'), 0o644);
    loadConfig({ DATA_DIR: dir });
    expect(statSync(join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
  });

  it('refuses a published development value in SERVER_SECRET or ENCRYPTION_KEY, in any environment', () => {
    expect(() => loadConfig({ DATA_DIR: fresh(), SERVER_SECRET: DEV_SECRETS.SERVER_SECRET })).toThrow(/SERVER_SECRET is a known development value/);
    expect(() => loadConfig({ DATA_DIR: fresh(), ENCRYPTION_KEY: DEV_SECRETS.ENCRYPTION_KEY })).toThrow(/ENCRYPTION_KEY is a known development value/);
  });

  it('an installation from before (a PostgreSQL data folder, no secrets file) keeps the old key to decrypt what it sealed', () => {
    const dir = fresh();
    mkdirSync(join(dir, 'postgres'));
    writeFileSync(join(dir, 'postgres', 'PG_VERSION'), '17\n');
    const c = loadConfig({ DATA_DIR: dir });
    expect(c.encryptionKey).not.toBe(DEV_SECRETS.ENCRYPTION_KEY);
    expect(c.previousEncryptionKeys).toEqual([DEV_SECRETS.ENCRYPTION_KEY]);
    // A fresh installation has nothing to decrypt.
    expect(loadConfig({ DATA_DIR: fresh() }).previousEncryptionKeys).toEqual([]);
  });
});
