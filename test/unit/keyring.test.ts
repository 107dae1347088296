import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKeyring, KeyringError } from '../../domain/keyring.js';
import { decryptCredentials, encryptCredentials } from '../../domain/credentials.js';

const id = '0193f1b2-0000-7000-8000-000000000001';
const other = '0193f1b2-0000-7000-8000-000000000002';

/** The stored form before key ids (v1), written exactly as the first release did. */
function legacyV1(plain: string, secret: string, context: string): string {
  const key = /^[0-9a-f]{64}$/i.test(secret) ? Buffer.from(secret, 'hex') : Buffer.from(hkdfSync('sha256', secret, 'integration-credentials', 'aes-256-gcm v1', 32));
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(context));
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

describe('keyring', () => {
  const ring = createKeyring('unit-test-key');

  it('round-trips text, carries the key id and never stores the plain text', () => {
    const blob = ring.encryptText('secret-token-123', id);
    expect(blob).not.toContain('secret-token-123');
    expect(blob.split('.').slice(0, 2)).toEqual(['v2', ring.currentKeyId]);
    expect(ring.currentKeyId).toMatch(/^[0-9a-f]{8}$/);
    expect(ring.decryptText(blob, id)).toBe('secret-token-123');
    expect(ring.isCurrent(blob)).toBe(true);
  });

  it('uses a fresh IV each time', () => {
    expect(ring.encryptText('a', id)).not.toBe(ring.encryptText('a', id));
  });

  it('a 64-hex key is the raw key; a different key has a different id', () => {
    const hex = createKeyring('ab'.repeat(32));
    expect(hex.decryptText(hex.encryptText('x', id), id)).toBe('x');
    expect(hex.currentKeyId).not.toBe(ring.currentKeyId);
  });

  it('refuses another key, another context, a tampered blob and garbage', () => {
    const blob = ring.encryptText('t', id);
    expect(() => createKeyring('other-key').decryptText(blob, id)).toThrow(/neither ENCRYPTION_KEY nor in ENCRYPTION_PREVIOUS_KEYS/);
    expect(() => ring.decryptText(blob, other)).toThrow(KeyringError);
    const parts = blob.split('.');
    parts[4] = Buffer.from('tampered').toString('base64url');
    expect(() => ring.decryptText(parts.join('.'), id)).toThrow(/does not authenticate/);
    expect(() => ring.decryptText('garbage', id)).toThrow(/Unrecognised/);
    expect(() => ring.open({ keyId: ring.currentKeyId, data: Buffer.alloc(5) }, id)).toThrow(/truncated/);
  });

  it('rotation: the old key still decrypts, the new key encrypts, without the old key its values do not open', () => {
    const old = createKeyring('old-key-old-key-old-key-old-key-0');
    const oldBlob = old.encryptText('kept', id);
    const rotated = createKeyring('new-key-new-key-new-key-new-key-1', ['old-key-old-key-old-key-old-key-0']);
    expect(rotated.keyIds).toEqual([rotated.currentKeyId, old.currentKeyId]);
    expect(rotated.decryptText(oldBlob, id)).toBe('kept');
    expect(rotated.isCurrent(oldBlob)).toBe(false);
    const fresh = rotated.encryptText('kept', id);
    expect(fresh.split('.')[1]).toBe(rotated.currentKeyId);
    expect(rotated.isCurrent(fresh)).toBe(true);
    expect(() => createKeyring('new-key-new-key-new-key-new-key-1').decryptText(oldBlob, id)).toThrow(KeyringError);
  });

  it('values stored before key ids (v1) decrypt with the current or a previous key', () => {
    expect(ring.decryptText(legacyV1('legacy', 'unit-test-key', id), id)).toBe('legacy');
    const rotated = createKeyring('ab'.repeat(32), ['unit-test-key']);
    const v1 = legacyV1('legacy', 'unit-test-key', id);
    expect(rotated.decryptText(v1, id)).toBe('legacy');
    expect(rotated.isCurrent(v1)).toBe(false);
    expect(rotated.isEncryptedText(v1)).toBe(true);
    expect(() => createKeyring('unrelated-key').decryptText(v1, id)).toThrow(/no key of the ring/);
  });

  it('seals bytes with the current key id and opens them again', () => {
    const sealed = ring.seal(Buffer.from([0, 1, 2, 255]), 'payload');
    expect(sealed.keyId).toBe(ring.currentKeyId);
    expect([...ring.open(sealed, 'payload')]).toEqual([0, 1, 2, 255]);
    expect(() => ring.open({ ...sealed, keyId: 'ffffffff' }, 'payload')).toThrow(/key ffffffff/);
  });

  it('integration credentials: JSON bound to the integration id', () => {
    const blob = encryptCredentials({ accessToken: 'secret-token-123' }, ring, id);
    expect(decryptCredentials(blob, ring, id)).toEqual({ accessToken: 'secret-token-123' });
    expect(() => decryptCredentials(blob, ring, other)).toThrow();
    expect(decryptCredentials(legacyV1('{"accessToken":"old"}', 'unit-test-key', id), ring, id)).toEqual({ accessToken: 'old' });
  });
});
