/**
 * Integration credentials at rest: JSON encrypted with the keyring (`domain/keyring.ts`), the
 * integration id bound as additional authenticated data, so a ciphertext copied onto another row
 * does not decrypt. Stored form: the keyring's text form (`v2.<keyId>.…`; older rows `v1.…`).
 */
import type { Keyring } from './keyring.js';

export type Credentials = Record<string, unknown>;

export function encryptCredentials(credentials: Credentials, keyring: Keyring, integrationId: string): string {
  return keyring.encryptText(JSON.stringify(credentials), integrationId);
}

/** Throws when the blob was tampered with, belongs to another integration or to no key of the ring. */
export function decryptCredentials(blob: string, keyring: Keyring, integrationId: string): Credentials {
  return JSON.parse(keyring.decryptText(blob, integrationId)) as Credentials;
}
