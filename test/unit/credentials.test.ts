import { describe, expect, it } from 'vitest';
import { decryptCredentials, encryptCredentials } from '../../domain/credentials.js';

describe('integration credentials encryption', () => {
  const key = 'unit-test-key';
  const id = '0193f1b2-0000-7000-8000-000000000001';

  it('round-trips and never stores the plain text', () => {
    const blob = encryptCredentials({ accessToken: 'secret-token-123' }, key, id);
    expect(blob).not.toContain('secret-token-123');
    expect(blob.startsWith('v1.')).toBe(true);
    expect(decryptCredentials(blob, key, id)).toEqual({ accessToken: 'secret-token-123' });
  });

  it('uses a fresh IV each time', () => {
    expect(encryptCredentials({ a: 1 }, key, id)).not.toBe(encryptCredentials({ a: 1 }, key, id));
  });

  it('accepts a 64-hex raw key', () => {
    const hex = 'ab'.repeat(32);
    expect(decryptCredentials(encryptCredentials({ a: 1 }, hex, id), hex, id)).toEqual({ a: 1 });
  });

  it('refuses another key, another integration id and a tampered blob', () => {
    const blob = encryptCredentials({ accessToken: 't' }, key, id);
    expect(() => decryptCredentials(blob, 'other-key', id)).toThrow();
    expect(() => decryptCredentials(blob, key, '0193f1b2-0000-7000-8000-000000000002')).toThrow();
    const parts = blob.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => decryptCredentials(parts.join('.'), key, id)).toThrow();
    expect(() => decryptCredentials('garbage', key, id)).toThrow();
  });
});
