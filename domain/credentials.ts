/**
 * Integration credentials at rest: AES-256-GCM with a key derived from `config.encryptionKey`
 * (64 hex characters are used as the raw key; any other string is stretched with HKDF-SHA256).
 * The integration id is bound as additional authenticated data, so a ciphertext copied onto
 * another row does not decrypt. Stored form: `v1.<iv>.<tag>.<ciphertext>` (base64url parts).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export type Credentials = Record<string, unknown>;

const VERSION = 'v1';
const keyCache = new Map<string, Buffer>();

export function deriveKey(encryptionKey: string): Buffer {
  let key = keyCache.get(encryptionKey);
  if (!key) {
    key = /^[0-9a-fA-F]{64}$/.test(encryptionKey)
      ? Buffer.from(encryptionKey, 'hex')
      : Buffer.from(hkdfSync('sha256', encryptionKey, 'integration-credentials', 'aes-256-gcm v1', 32));
    keyCache.set(encryptionKey, key);
  }
  return key;
}

export function encryptCredentials(credentials: Credentials, encryptionKey: string, integrationId: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(encryptionKey), iv);
  cipher.setAAD(Buffer.from(integrationId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/** Throws when the blob was tampered with, belongs to another integration or another key. */
export function decryptCredentials(blob: string, encryptionKey: string, integrationId: string): Credentials {
  const [version, iv, tag, ciphertext] = blob.split('.');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('Unrecognised credentials format');
  const decipher = createDecipheriv('aes-256-gcm', deriveKey(encryptionKey), Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(integrationId, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  return JSON.parse(plain.toString('utf8')) as Credentials;
}
