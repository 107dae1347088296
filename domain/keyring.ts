/**
 * The keyring: every value this service encrypts (integration credentials, webhook secrets, and
 * anything else sealed at rest or in transit through Temporal) goes through here, in the API, the
 * worker and the admin CLI alike. AES-256-GCM; the caller's context (a row id …) is bound as
 * additional authenticated data, so a ciphertext copied elsewhere does not open.
 *
 * Keys and rotation:
 * - `ENCRYPTION_KEY` is the current key: it encrypts, and decrypts.
 * - `ENCRYPTION_PREVIOUS_KEYS` (comma-separated) only decrypt. To rotate: put the old key there,
 *   set a new `ENCRYPTION_KEY`, restart, run `npm run admin -- secrets:reencrypt`, then drop the
 *   old key.
 * - A key of 64 hex characters is the raw 256-bit key; any other string is stretched with
 *   HKDF-SHA256 (same derivation as the first stored credentials, so they still open).
 * - A key's id is computed from the key (8 hex characters of a SHA-256 over the derived key):
 *   nothing to configure, and an id can never name the wrong key.
 *
 * Stored text form: `v2.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts). The earlier form
 * `v1.<iv>.<tag>.<ciphertext>` carries no key id: it is tried with every key of the ring (GCM's
 * tag tells which one fits) and re-encrypted to v2 by `secrets:reencrypt`.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class KeyringError extends Error {}

export interface Sealed {
  keyId: string;
  /** iv (12 bytes) ‖ tag (16 bytes) ‖ ciphertext */
  data: Buffer;
}

export interface Keyring {
  /** Id of the key that encrypts. */
  readonly currentKeyId: string;
  /** Ids of every key that decrypts, the current one first. */
  readonly keyIds: readonly string[];
  /** Binary form (for payloads and other byte strings). */
  seal(plain: Uint8Array, context: string): Sealed;
  /** Throws `KeyringError` when the key id is not on the ring or the data does not authenticate. */
  open(sealed: Sealed, context: string): Buffer;
  /** Text form for database columns: `v2.<keyId>.<iv>.<tag>.<ciphertext>`. */
  encryptText(plain: string, context: string): string;
  /** Opens the v2 or the legacy v1 text form; throws `KeyringError` otherwise. */
  decryptText(blob: string, context: string): string;
  /** True for text already encrypted under the current key (nothing for `secrets:reencrypt` to do). */
  isCurrent(blob: string): boolean;
  /** True for anything in one of the encrypted text forms. */
  isEncryptedText(value: string): boolean;
}

/** 64 hex characters: the raw key; anything else: HKDF-SHA256 (the v1 derivation, kept so old values open). */
export function deriveKey(secret: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(secret)
    ? Buffer.from(secret, 'hex')
    : Buffer.from(hkdfSync('sha256', secret, 'integration-credentials', 'aes-256-gcm v1', 32));
}

export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('keyring key id\0').update(key).digest('hex').slice(0, 8);
}

function gcmSeal(key: Buffer, plain: Uint8Array, context: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

function gcmOpen(key: Buffer, data: Uint8Array, context: string): Buffer {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buf.length < IV_BYTES + TAG_BYTES) throw new KeyringError('Encrypted value is truncated');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(buf.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(buf.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    throw new KeyringError('Encrypted value does not authenticate (tampered, another context or another key)');
  }
}

export function createKeyring(currentKey: string, previousKeys: readonly string[] = []): Keyring {
  if (!currentKey) throw new KeyringError('ENCRYPTION_KEY is empty');
  const keys = new Map<string, Buffer>();
  for (const secret of [currentKey, ...previousKeys]) {
    const key = deriveKey(secret);
    const id = keyIdOf(key);
    if (!keys.has(id)) keys.set(id, key);
  }
  const currentKeyId = keyIdOf(deriveKey(currentKey));
  const keyFor = (id: string) => {
    const key = keys.get(id);
    if (!key) throw new KeyringError(`Encrypted with key ${id}, which is neither ENCRYPTION_KEY nor in ENCRYPTION_PREVIOUS_KEYS`);
    return key;
  };
  const b64 = (b: Buffer) => b.toString('base64url');
  const ring: Keyring = {
    currentKeyId,
    keyIds: [...keys.keys()],
    seal: (plain, context) => ({ keyId: currentKeyId, data: gcmSeal(keys.get(currentKeyId)!, plain, context) }),
    open: (sealed, context) => gcmOpen(keyFor(sealed.keyId), sealed.data, context),
    encryptText(plain, context) {
      const data = gcmSeal(keys.get(currentKeyId)!, Buffer.from(plain, 'utf8'), context);
      return ['v2', currentKeyId, b64(data.subarray(0, IV_BYTES)), b64(data.subarray(IV_BYTES, IV_BYTES + TAG_BYTES)), b64(data.subarray(IV_BYTES + TAG_BYTES))].join('.');
    },
    decryptText(blob, context) {
      const parts = blob.split('.');
      const bytes = (iv: string, tag: string, ct: string) => Buffer.concat([Buffer.from(iv, 'base64url'), Buffer.from(tag, 'base64url'), Buffer.from(ct, 'base64url')]);
      if (parts[0] === 'v2' && parts.length === 5) {
        return gcmOpen(keyFor(parts[1]!), bytes(parts[2]!, parts[3]!, parts[4]!), context).toString('utf8');
      }
      if (parts[0] === 'v1' && parts.length === 4) {
        const data = bytes(parts[1]!, parts[2]!, parts[3]!);
        for (const key of keys.values()) {
          try {
            return gcmOpen(key, data, context).toString('utf8');
          } catch {
            // not this key: try the next one
          }
        }
        throw new KeyringError('Encrypted value (v1, no key id) opens with no key of the ring');
      }
      throw new KeyringError('Unrecognised encrypted value format');
    },
    isCurrent: (blob) => blob.startsWith(`v2.${currentKeyId}.`),
    isEncryptedText: (value) => /^v[12]\./.test(value),
  };
  return ring;
}

const cache = new Map<string, Keyring>();

/** The keyring of a configuration (`ENCRYPTION_KEY` + `ENCRYPTION_PREVIOUS_KEYS`), built once per key set. */
export function keyringOf(config: { encryptionKey: string; previousEncryptionKeys: readonly string[] }): Keyring {
  const cacheKey = JSON.stringify([config.encryptionKey, config.previousEncryptionKeys]);
  let ring = cache.get(cacheKey);
  if (!ring) {
    ring = createKeyring(config.encryptionKey, config.previousEncryptionKeys);
    cache.set(cacheKey, ring);
  }
  return ring;
}
